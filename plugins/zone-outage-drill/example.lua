-- Zone 2 of 3 goes dark four minutes into a zone-by-zone upgrade: 3 of 9 instances (33%)
-- stop answering, more than the 20% allowed, so the upgrade faults before its next batch.
local drill = require "zone-outage-drill"

scaleset {
  name = "edge", capacity = 9, zones = { "1", "2", "3" },
  model = { image = "v1" },
  upgradePolicy = { mode = "Rolling", rollingUpgradePolicy = { maxBatchInstancePercent = 34 } },
  healthExtension = { protocol = "http", port = 8080, requestPath = "/health", gracePeriod = 30 },
}

health(drill.outage { zone = "2", from = "PT4M", to = "PT20M" }(function(vm, now)
  return { applicationHealthState = "Healthy" }
end))

at("PT1M", function() update_model { image = "v2" } end)

expect { code = "Faulted", errorCode = "MaxUnhealthyInstancePercentExceededInRollingUpgrade" }
