-- Manual mode (seed 003): a model update changes no instance; a manual upgrade of chosen ids
-- does, all at once; new instances get the latest model; protected instances are refused.
scaleset {
  name = "batch", capacity = 6,
  model = { image = "v1" },
  protected = { 5 },
  upgradePolicy = { mode = "Manual" },
  healthExtension = { protocol = "http", port = 8000, requestPath = "/health" },
}

health(function(vm, now) return { applicationHealthState = "Healthy" } end)

at("PT1M", function() update_model { image = "v2" } end)
at("PT2M", function() manual_upgrade { 0, 1 } end)
at("PT6M", function()
  local _, message = pcall(manual_upgrade, { 2, 5 })
  print(message)
end)
at("PT8M", function() scale(8) end)

-- No rolling upgrade runs in Manual mode.
expect { upgrades = 0 }
