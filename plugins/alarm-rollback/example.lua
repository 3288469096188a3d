-- Twenty instances; version 2 of the application never answers on one boot in two. Azure's own
-- thresholds (40% of upgraded instances) would let the rollout run until it faults; the alarm,
-- sampling the share serving every 30 seconds, rolls it back when 2 of 3 samples are below 80% (a batch
-- alone takes 20% down: one silent instance more is a breach).
local alarm = require "alarm-rollback"

scaleset {
  name = "api", capacity = 20, model = { image = "v1" },
  upgradePolicy = { mode = "Rolling", rollingUpgradePolicy = {
    maxBatchInstancePercent = 20, maxUnhealthyUpgradedInstancePercent = 40, maxUnhealthyInstancePercent = 60,
    pauseTimeBetweenBatches = "PT30S" } },
  healthExtension = { protocol = "http", port = 8080, requestPath = "/health",
                      intervalInSeconds = 5, gracePeriod = 180 },
}

health_model {
  boot = "PT0S",
  versions = { v2 = { boot = { min = "PT1M", max = "PT2M" }, neverHealthy = 0.5 } },
}

alarm.watch {
  rollback = { image = "v1" }, threshold = 0.8, every = "PT30S", periods = 3, datapoints = 2, from = "PT2M",
}

at("PT1M", function() update_model { image = "v2" } end)

-- The rollout to v2 is cancelled and v1 rolled out again (the policy lets it start with up to 60%
-- unhealthy): every instance ends on v1.
expect { code = "Completed" }
