-- Ten web servers that boot for 90 s after each upgrade; upgrades take 4 minutes.
local sb = require "slow-boot"

scaleset {
  name = "web", capacity = 10,
  model = { image = "v1" },
  upgradePolicy = { mode = "Rolling", rollingUpgradePolicy = { maxBatchInstancePercent = 20 } },
  healthExtension = { protocol = "http", port = 80, requestPath = "/health", gracePeriod = 300 },
}

health(sb.health { boot = "PT90S" }(function(vm, now) return { applicationHealthState = "Healthy" } end))
fault(sb.fault { duration = "PT4M" })

at("PT3M", function() update_model { image = "v2" } end)

-- Five batches of 4 minutes plus 90 s boot each.
expect { code = "Completed", successful = 10, minHealthy = 8 }
