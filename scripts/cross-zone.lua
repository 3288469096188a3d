-- The same zonal scale set with enableCrossZoneUpgrade: zones are ignored, so batches
-- follow update domains and take instances of several zones at once.
scaleset {
  name = "zonal", capacity = 9, zones = { "1", "2", "3" },
  model = { image = "v1" },
  updateDomains = 1,
  upgradePolicy = { mode = "Rolling",
    rollingUpgradePolicy = { maxBatchInstancePercent = 50, maxUnhealthyInstancePercent = 50,
                             enableCrossZoneUpgrade = true } },
  healthExtension = { protocol = "http", port = 8000, requestPath = "/health" },
}

health(function(vm, now) return { applicationHealthState = "Healthy" } end)

at("PT1M", function() update_model { image = "v2" } end)

-- 9 instances at 50%: batches of 4, 4 and 1.
expect { code = "Completed", successful = 9, minHealthy = 5 }
