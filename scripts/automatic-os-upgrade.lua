-- A new platform image is released to a scale set with automatic OS image upgrades. Without
-- useRollingUpgradePolicy the upgrade batches with the default policy (20%: batches of 2 here,
-- whatever rollingUpgradePolicy says). Instances 4 and 5 never become Healthy on the new image:
-- after their 5 minutes they are restored to the previous image. 2 of 10 failed is 20%, not more
-- than 20%, so the upgrade goes on and completes.
scaleset {
  name = "web", capacity = 10,
  model = { image = "2024.01.01",
            imageReference = { publisher = "Canonical", offer = "ubuntu-24_04-lts", sku = "server" } },
  updateDomains = 1,
  upgradePolicy = { mode = "Manual",
    rollingUpgradePolicy = { maxBatchInstancePercent = 50 },
    automaticOSUpgradePolicy = { enableAutomaticOSUpgrade = true } },
  healthExtension = { protocol = "http", port = 8000, requestPath = "/health" },
}

health(function(vm)
  if vm.model.image == "2024.02.01" and (vm.id == 4 or vm.id == 5) then
    return { applicationHealthState = "Unhealthy" }
  end
  return { applicationHealthState = "Healthy" }
end)

at("PT1M", function() release_image { version = "2024.02.01" } end)

expect { code = "Completed", successful = 8, failed = 2, rolledBack = 2 }
