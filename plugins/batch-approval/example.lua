-- Eight batch workers on automatic OS upgrades that follow the rolling upgrade policy (batches of
-- 25%), behind two lifecycle hooks: one before the upgrade is scheduled and one before each batch.
-- The shared approval policy answers every event 12 minutes after it is raised and keeps
-- instance 3 (it holds a licence lease) on its image.
local approval = require "batch-approval"

local hooks = {
  { type = "UpgradeAutoOSScheduling", waitDuration = "PT1H", defaultAction = "Approve" },
  { type = "UpgradeAutoOSRollingBatchStarting", waitDuration = "PT30M", defaultAction = "Approve" },
}

scaleset {
  name = "workers", capacity = 8, updateDomains = 1,
  model = { image = "2026.03.01" },
  upgradePolicy = {
    mode = "Automatic",
    rollingUpgradePolicy = { maxBatchInstancePercent = 25, maxUnhealthyInstancePercent = 25 },
    automaticOSUpgradePolicy = { enableAutomaticOSUpgrade = true, useRollingUpgradePolicy = true },
  },
  healthExtension = { protocol = "http", port = 8080, requestPath = "/ready" },
  lifecycleHooksProfile = { lifecycleHooks = hooks },
}

on_hook(approval.approve { after = "PT12M", hold = "3" })

at("PT2M", function() release_image { version = "2026.04.01" } end)

-- Scheduled 12 minutes late, then four batches of two, each 12 minutes later again.
expect { code = "Completed", successful = 7, failed = 0 }
