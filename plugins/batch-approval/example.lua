-- Ten batch workers on automatic OS upgrades behind a per-batch lifecycle hook (30 minutes to
-- answer, approved by default). The shared approval policy answers each event 12 minutes after
-- it is raised and keeps instance 3 (it holds a licence lease) on its image.
local approval = require "batch-approval"

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

on_hook(approval.approve { after = "PT12M", hold = "3" })

at("PT1M", function() release_image { version = "2026.02.01" } end)

-- Five batches of two, each 12 minutes later than without the hook; instance 3 left behind.
expect { code = "Completed", successful = 9, failed = 0 }
