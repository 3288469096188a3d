-- The risk question as a gate. Twenty instances; each upgrade fails with probability 5%, and the
-- application answers 60 to 90 seconds after a restart. With maxUnhealthyUpgradedInstancePercent
-- 20 the upgrade faults when 5 or more of the 20 upgrades fail: P(Bin(20, 0.05) >= 5) = 0.26%.
-- `rehearse test` runs seeds until the requirement below is decided; `rehearse tune` with
-- --vary rollingUpgradePolicy.maxUnhealthyUpgradedInstancePercent=5,10,15,20,30 finds 20 and 30
-- feasible and 5, 10 and 15 (P(Faulted) 26%, 7.6%, 1.6%) not.
local failureRate = param("failureRate", 0.05)   -- share of upgrades that fail
scaleset {
  name = "api", capacity = 20, model = { image = "v1" },
  upgradePolicy = { mode = "Rolling", rollingUpgradePolicy = {
    maxBatchInstancePercent = 20, maxUnhealthyInstancePercent = 100, maxUnhealthyUpgradedInstancePercent = 20,
    pauseTimeBetweenBatches = "PT0S" } },
  healthExtension = { protocol = "http", port = 8080, requestPath = "/health",
                      intervalInSeconds = 5, gracePeriod = 300 },
}

health(function(vm, now)
  vm.state.boot = vm.state.boot or math.random(60, 90)
  if now - vm.startedAt < vm.state.boot then return nil end
  return { applicationHealthState = "Healthy" }
end)

fault(function(_, op)
  if op == "upgrade" and math.random() < failureRate then return { fail = true } end
end)

at("PT5M", function() update_model { image = "v2" } end)

risk { require = { "Faulted <= 2%" } }
expect { code = "Completed" }
