-- Seed 001's "Max unhealthy instance %" example: 3 of 10 instances unhealthy at 20% stops the
-- upgrade before the first batch, with one detail per unhealthy instance.
scaleset {
  name = "web", capacity = 10,
  model = { image = "v1" },
  upgradePolicy = { mode = "Rolling", rollingUpgradePolicy = { maxUnhealthyInstancePercent = 20 } },
  healthExtension = { protocol = "http", port = 8000, requestPath = "/health" },
}

local sick = { [2] = true, [5] = true, [8] = true }
health(function(vm, now)
  return { applicationHealthState = sick[vm.id] and "Unhealthy" or "Healthy" }
end)

at("PT1M", function() update_model { image = "v2" } end)

expect { code = "Faulted", errorCode = "MaxUnhealthyInstancePercentExceededBeforeRollingUpgrade",
         successful = 0, pending = 10 }
