-- MaxSurge (seed 001): each batch first creates new instances on the new model, then deletes
-- the old ones once the new are healthy, so capacity never drops below 10.
-- The quota of 13 leaves room for batches of 2 only; nothing falls back in place here.
scaleset {
  name = "surge", capacity = 10,
  model = { image = "v1" },
  quota = 13,
  upgradePolicy = { mode = "Rolling", rollingUpgradePolicy = { maxBatchInstancePercent = 20, MaxSurge = "true" } },
  healthExtension = { protocol = "http", port = 8000, requestPath = "/health", gracePeriod = 120 },
  timings = { create = "PT3M", delete = "PT30S" },
}

-- New instances take 45 seconds to boot their application.
health(function(vm, now)
  vm.state.seen = vm.state.seen or now
  if now - vm.state.seen < 45 then return nil end
  return { applicationHealthState = "Healthy" }
end)

at("PT2M", function() update_model { image = "v2" } end)

expect { code = "Completed", successful = 10, minHealthy = 10 }
