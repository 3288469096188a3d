-- Seed 001's own way to adopt Rolling: create the scale set in Manual mode, add the Application
-- Health extension to the model, upgrade the instances to install it, confirm that health is
-- reported, then change the upgrade policy to Rolling. The next model update rolls out in batches.
scaleset {
  name = "web", capacity = 10,
  model = { image = "v1" },
  upgradePolicy = { mode = "Manual" },
}

-- The application listens 45 s after each (re)start; before that the extension's connection is
-- refused (nil: the result at once).
health(function(vm, now)
  if now - vm.startedAt < 45 then return nil end
  return { applicationHealthState = "Healthy" }
end)

-- Rolling needs a health source: without the extension in the model it is refused.
at("PT30S", function()
  local ok, message = pcall(update_policy, { mode = "Rolling" })
  print(ok and "Rolling accepted" or message)
end)

-- In place: the instances keep running; each reports health once its model has the extension.
at("PT1M", function()
  update_model { healthExtension = { protocol = "http", port = 8000, requestPath = "/health", gracePeriod = 600 } }
end)
at("PT2M", function() manual_upgrade("*") end)

at("PT5M", function()
  update_policy {
    mode = "Rolling",
    rollingUpgradePolicy = {
      maxBatchInstancePercent = 20, maxUnhealthyInstancePercent = 20, pauseTimeBetweenBatches = "PT10S",
    },
  }
end)
at("PT6M", function() update_model { image = "v2" } end)

expect { code = "Completed", successful = 10, failed = 0, upgrades = 1 }
