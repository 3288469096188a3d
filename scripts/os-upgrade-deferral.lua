-- Automatic OS upgrades with osRollingUpgradeDeferral: each instance is told its upgrade is
-- coming and may defer it. Instance 3 is finishing a job and asks for 20 more minutes; instance 7
-- holds a lease and waits for an operator, who approves it at one hour. The rest go at once.
scaleset {
  name = "batchjobs", capacity = 10,
  model = { image = "2024.01.01" },
  updateDomains = 1,
  upgradePolicy = { mode = "Manual",
    automaticOSUpgradePolicy = { enableAutomaticOSUpgrade = true, osRollingUpgradeDeferral = true } },
  healthExtension = { protocol = "http", port = 8000, requestPath = "/health" },
}

deferral(function(vm)
  if vm.id == 3 then return "PT20M" end
  if vm.id == 7 then return true end
  return false
end)

at("PT1M", function() release_image { version = "2024.02.01" } end)
at("PT1H", function() approve_os_upgrade { 7 } end)

expect { code = "Completed", successful = 10, failed = 0 }
