-- A cancel that lands while a batch waits for its upgraded instances' health (SPEC: cancel lets
-- the current batch finish). Batch 1 upgrades from 1 min to 3 min; the upgraded application
-- answers only from 5 min, inside a 10-minute grace period. The cancel at 3 min 20 s settles
-- batch 1 by its own outcome: nothing stays in progress, no further batch starts.
scaleset {
  name = "web", capacity = 10,
  model = { image = "v1" },
  upgradePolicy = { mode = "Rolling", rollingUpgradePolicy = { maxBatchInstancePercent = 20 } },
  healthExtension = { protocol = "http", port = 8000, requestPath = "/health", gracePeriod = 600 },
}

health(function(vm, now)
  if vm.model.version == 2 and now < 300 then return nil end
  return { applicationHealthState = "Healthy" }
end)

at("PT1M", function() update_model { image = "v2" } end)
at("PT3M20S", function() cancel() end)

expect { code = "Cancelled", successful = 2, inProgress = 0, pending = 8 }
