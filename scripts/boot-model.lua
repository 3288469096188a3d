-- scripts/rolling-boot-failures.lua written as a health model: thirty instances in three zones,
-- the application answering two to six minutes after a restart of model v2, and about one boot
-- in twelve never answering. No function runs per probe, so a sweep spends its time in the engine.
local silentBoots = param("silentBoots", 0.08)     -- share of v2 boots that never answer
scaleset {
  name = "shop", capacity = 30, zones = { "1", "2", "3" }, model = { image = "v1" },
  upgradePolicy = { mode = "Rolling", rollingUpgradePolicy = {
    maxBatchInstancePercent = 20, maxUnhealthyUpgradedInstancePercent = 10, pauseTimeBetweenBatches = "PT10S" } },
  healthExtension = { protocol = "http", port = 8080, requestPath = "/health",
                      intervalInSeconds = 5, gracePeriod = 600 },
}

health_model {
  boot = "PT0S",
  versions = { v2 = { boot = { min = "PT2M", max = "PT6M" }, neverHealthy = silentBoots } },
}

at("PT1M", function() update_model { image = "v2" } end)

expect { code = "Completed" }
