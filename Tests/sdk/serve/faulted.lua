-- rehearse serve: image 2.0.0 never answers Healthy, so the first batch breaks
-- maxUnhealthyUpgradedInstancePercent and the rolling upgrade faults.
scaleset {
  name = "web", capacity = 6,
  model = { imageReference = { version = "1.0.0" } },
  upgradePolicy = { mode = "Rolling",
    rollingUpgradePolicy = { maxBatchInstancePercent = 34, maxUnhealthyUpgradedInstancePercent = 20 } },
  healthExtension = { protocol = "http", port = 8000, requestPath = "/health",
                      intervalInSeconds = 5, numberOfProbes = 1, gracePeriod = 30 },
}

health(function(vm, now)
  if vm.model.imageReference.version == "2.0.0" then return { applicationHealthState = "Unhealthy" } end
  return { applicationHealthState = "Healthy" }
end)
