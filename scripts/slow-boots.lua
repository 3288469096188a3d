-- Thirty instances in three zones whose application answers its health probe four to six
-- minutes after a restart. Batches of 20% go zone by zone (6 and 4 in each), and each batch
-- waits for its slowest instance: `plan` gives the duration as a range (p50 and p95) from
-- the scenario's own boots, beside the bare arithmetic; `rehearse sweep` over many seeds
-- shows the same spread.
scaleset {
  name = "shop", capacity = 30, zones = { "1", "2", "3" }, model = { image = "v1" },
  upgradePolicy = { mode = "Rolling", rollingUpgradePolicy = {
    maxBatchInstancePercent = 20, pauseTimeBetweenBatches = "PT10S" } },
  healthExtension = { protocol = "http", port = 8080, requestPath = "/health",
                      intervalInSeconds = 5, gracePeriod = 900 },
}

health(function(vm, now)
  if vm.model.version == 1 then return { applicationHealthState = "Healthy" } end
  if vm.state.boot == nil then
    vm.state.boot = math.random(240, 360)  -- seconds until the application answers
  end
  if now - vm.startedAt < vm.state.boot then return nil end
  return { applicationHealthState = "Healthy" }
end)

at("PT1M", function() update_model { image = "v2" } end)

expect { code = "Completed", successful = 30 }
