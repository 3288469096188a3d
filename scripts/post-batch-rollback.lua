-- Image v2 is broken on half the instances: after the batches, more than 20% of upgraded
-- instances are unhealthy, the upgrade faults and the failed instances roll back to v1.
scaleset {
  name = "web", capacity = 10,
  model = { image = "v1" },
  updateDomains = 1,
  upgradePolicy = { mode = "Rolling",
    rollingUpgradePolicy = { maxBatchInstancePercent = 20, maxUnhealthyUpgradedInstancePercent = 20,
                             rollbackFailedInstancesOnPolicyBreach = true } },
  healthExtension = { protocol = "http", port = 8000, requestPath = "/health" },
}

health(function(vm, now)
  if vm.model.image == "v2" and vm.id % 2 == 0 then return { applicationHealthState = "Unhealthy" } end
  return { applicationHealthState = "Healthy" }
end)

at("PT1M", function() update_model { image = "v2" } end)

-- Batch 1 (0, 1): 1 of 10 bad, allowed. Batch 2 (2, 3): 2 of 10, allowed, and the two
-- unhealthy instances use the unhealthy budget, so batch 3 shrinks to (4): 3 of 10 > 20%.
expect { code = "Faulted", errorCode = "MaxUnhealthyUpgradedInstancePercentExceededInRollingUpgrade",
         successful = 2, failed = 3, pending = 5 }
