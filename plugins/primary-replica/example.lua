-- A 6-node database tier: 0 and 3 are primaries, 5 is a witness that must not be touched.
local pr = require "primary-replica"
local tier = pr.tier { primaries = { 0, 3 }, witnesses = { 5 } }

scaleset {
  name = "db", capacity = 6, updateDomains = 1,
  model = { image = "pg16" },
  upgradePolicy = { mode = "Rolling",
    rollingUpgradePolicy = { maxBatchInstancePercent = 34, maxUnhealthyInstancePercent = 34 } },
  healthExtension = { protocol = "http", port = 5433, requestPath = "/ready" },
}

health(tier.metrics(function(vm, now) return { applicationHealthState = "Healthy" } end))

at("PT1M", function() update_model { image = "pg17" } end)

-- Replicas 1, 2, 4 in phase 0 (batches of 2 then 1), primaries 0, 3 in phase 1; 5 skipped.
expect { code = "Completed", successful = 5, skipped = { 5 } }
