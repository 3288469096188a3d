-- Thirty instances in three zones. After a restart the application takes two to six minutes to
-- answer its health probe, and about one boot in twelve never answers at all. Batches of 20%,
-- a 10 s pause, and no more than 10% of upgraded instances unhealthy (3 of 30).
-- One seed is one rollout; `rehearse sweep` over many seeds tells how often it faults, and
-- `--param silentBoots=0.02` (or `compare --set param.silentBoots=0.02,0.08`) tries another share.
local silentBoots = param("silentBoots", 0.08)     -- share of boots that never answer
local slowestBoot = duration(param("slowestBoot", "PT6M"))
scaleset {
  name = "shop", capacity = 30, zones = { "1", "2", "3" }, model = { image = "v1" },
  upgradePolicy = { mode = "Rolling", rollingUpgradePolicy = {
    maxBatchInstancePercent = 20, maxUnhealthyUpgradedInstancePercent = 10, pauseTimeBetweenBatches = "PT10S" } },
  healthExtension = { protocol = "http", port = 8080, requestPath = "/health",
                      intervalInSeconds = 5, gracePeriod = 600 },
}

health(function(vm, now)
  if vm.model.version == 1 then return { applicationHealthState = "Healthy" } end
  if vm.state.boot == nil then
    vm.state.boot = math.random(120, slowestBoot)  -- seconds until the application answers
    vm.state.silent = math.random() < silentBoots  -- this boot never answers
  end
  if vm.state.silent or now - vm.startedAt < vm.state.boot then return nil end
  return { applicationHealthState = "Healthy" }
end)

at("PT1M", function() update_model { image = "v2" } end)

expect { code = "Completed" }
