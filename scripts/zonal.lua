-- A zonal scale set without cross-zone upgrade: zones go one at a time, in order,
-- and no batch crosses a zone (SPEC §4.4).
scaleset {
  name = "zonal", capacity = 9, zones = { "1", "2", "3" },
  model = { image = "v1" },
  upgradePolicy = { mode = "Rolling",
    rollingUpgradePolicy = { maxBatchInstancePercent = 50, maxUnhealthyInstancePercent = 50 } },
  healthExtension = { protocol = "https", port = 443, requestPath = "/healthz" },
}

health(function(vm, now) return { applicationHealthState = "Healthy" } end)

at("PT1M", function() update_model { image = "v2" } end)

-- Batches of up to 4, but a zone holds 3: one batch per zone.
expect { code = "Completed", successful = 9, upgrades = 1, minHealthy = 6 }
