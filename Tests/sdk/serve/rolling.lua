-- rehearse serve: six healthy instances on image 1.0.0, rolling in batches of two. No timeline:
-- the pipeline under test PATCHes the image and the rolling upgrade follows.
scaleset {
  name = "web", capacity = 6,
  model = { imageReference = { publisher = "Canonical", offer = "0001-com-ubuntu-server-jammy",
                               sku = "22_04-lts-gen2", version = "1.0.0" } },
  upgradePolicy = { mode = "Rolling",
    rollingUpgradePolicy = { maxBatchInstancePercent = 34, pauseTimeBetweenBatches = "PT5S" } },
  healthExtension = { protocol = "http", port = 8000, requestPath = "/health",
                      intervalInSeconds = 5, numberOfProbes = 1, gracePeriod = 30 },
}

health(function(vm, now) return { applicationHealthState = "Healthy" } end)
