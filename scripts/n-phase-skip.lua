-- Seeds 000 and 002: N-phase upgrade with SkipUpgrade.
-- Instances 0-3 report phase 1, 4-7 phase 0, 8 and 9 report no phase (last phase),
-- and instance 9 asks to be skipped with the string "true", as seed 002's sample does.
scaleset {
  name = "app", capacity = 10,
  model = { image = "v1" },
  updateDomains = 1,
  upgradePolicy = { mode = "Rolling", rollingUpgradePolicy = { maxBatchInstancePercent = 20 } },
  healthExtension = { protocol = "http", port = 8000, requestPath = "/health" },
}

-- The wire form: customMetrics is a string holding JSON.
health(function(vm, now)
  local phase = vm.id < 4 and 1 or (vm.id < 8 and 0 or nil)
  local rolling = {}
  if phase then rolling[#rolling + 1] = '"PhaseOrderingNumber": ' .. phase end
  if vm.id == 9 then rolling[#rolling + 1] = '"SkipUpgrade": "true"' end
  return {
    applicationHealthState = "Healthy",
    customMetrics = '{ "rollingUpgrade": { ' .. table.concat(rolling, ", ") .. ' } }',
  }
end)

at("PT1M", function() update_model { image = "v2" } end)

-- Phase 0 (4-7) in two batches, phase 1 (0-3) in two, then 8 alone; 9 is skipped.
expect { code = "Completed", successful = 9, skipped = { 9 } }
