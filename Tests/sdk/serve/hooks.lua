-- rehearse serve: ten instances with automatic OS image upgrades behind a batch lifecycle hook
-- (api-version 2025-11-01): before each batch of two the platform raises an event and waits
-- 30 minutes for an answer, approving by default. No script answers: the clients under test do.
scaleset {
  name = "batchjobs", capacity = 10,
  model = { image = "2026.01.01" },
  upgradePolicy = { mode = "Manual", automaticOSUpgradePolicy = { enableAutomaticOSUpgrade = true } },
  healthExtension = { protocol = "http", port = 8000, requestPath = "/health" },
  lifecycleHooksProfile = { lifecycleHooks = {
    { type = "UpgradeAutoOSRollingBatchStarting", waitDuration = "PT30M", defaultAction = "Approve" },
  } },
}

at("PT1M", function() release_image { version = "2026.02.01" } end)
