-- Seed 001's example: 10 instances, batches of 20% -> 5 batches of 2.
-- Every instance answers Healthy; the model changes to image v2 at two minutes.
scaleset {
  name = "web", capacity = 10,
  model = { image = "v1" },
  upgradePolicy = { mode = "Rolling",
    rollingUpgradePolicy = { maxBatchInstancePercent = 20, pauseTimeBetweenBatches = "PT10S" } },
  healthExtension = { protocol = "http", port = 8000, requestPath = "/health",
                      intervalInSeconds = 5, numberOfProbes = 1, gracePeriod = 60 },
}

health(function(vm, now)
  return { applicationHealthState = "Healthy" }
end)

at("PT2M", function() update_model { image = "v2" } end)

expect { code = "Completed", successful = 10, failed = 0, pending = 0, upgrades = 1 }
