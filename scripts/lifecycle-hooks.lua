-- Automatic OS upgrades behind a lifecycle hook (api-version 2025-11-01): before each batch the
-- platform raises an event and waits up to 30 minutes for the team's answer, approving by default.
-- The team's automation answers 12 minutes after each event: it approves the batch, except
-- instance 3 (it holds a licence lease), which it rejects: 3 stays on the old image.
scaleset {
  name = "batchjobs", capacity = 10,
  model = { image = "2026.01.01" },
  updateDomains = 1,
  upgradePolicy = { mode = "Manual", automaticOSUpgradePolicy = { enableAutomaticOSUpgrade = true } },
  healthExtension = { protocol = "http", port = 8000, requestPath = "/health" },
  lifecycleHooksProfile = { lifecycleHooks = {
    { type = "UpgradeAutoOSRollingBatchStarting", waitDuration = "PT30M", defaultAction = "Approve" },
  } },
}

on_hook(function(event)
  for _, id in ipairs(event.targets) do
    if id == 3 then return { reject = { 3 }, approve = "*", after = "PT12M" } end
  end
  return { approve = "*", after = "PT12M" }
end)

at("PT1M", function() release_image { version = "2026.02.01" } end)

-- Five batches of two, each 12 minutes later than without the hook; instance 3 left behind.
expect { code = "Completed", successful = 9, failed = 0 }
