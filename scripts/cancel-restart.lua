-- Cancel a rolling upgrade midway, then restart it with a generic model update (seed 001:
-- "trigger a generic model update"). Operations in flight at the cancel finish.
scaleset {
  name = "web", capacity = 10,
  model = { image = "v1" },
  upgradePolicy = { mode = "Rolling", rollingUpgradePolicy = { maxBatchInstancePercent = 20 } },
  healthExtension = { protocol = "http", port = 8000, requestPath = "/health" },
}

health(function(vm, now) return { applicationHealthState = "Healthy" } end)

at("PT1M", function() update_model { image = "v2" } end)
at("PT4M10S", function()
  cancel()
  -- A second cancel has nothing to cancel: Azure's error, caught here.
  local _, message = pcall(cancel)
  print("second cancel: " .. message)
end)
at("PT10M", function() update_model() end)   -- generic update: restarts the upgrade

-- Batches 1 and 2 ran before the cancel; the restarted upgrade does the other 6.
expect { code = "Completed", successful = 6, upgrades = 2 }
