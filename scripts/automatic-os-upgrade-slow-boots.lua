-- A realistic automatic OS image upgrade: 30 instances in three zones whose application answers
-- 4 to 6 minutes after every (re)start, with a grace period of 10 minutes, and 5% of boots that
-- never answer. Each upgraded instance has 5 minutes to become Healthy, however long the grace
-- period: about half of them miss it, are restored to the previous image and count as failed in
-- their own batch. Restored instances still booting count as unhealthy before the next batch,
-- so batches shrink; with the default policy (20%), more than 6 failures of 30 stop the upgrade.
-- Try other seeds: `rehearse run scripts/automatic-os-upgrade-slow-boots.lua --seed 3`.
scaleset {
  name = "web", capacity = 30, zones = { "1", "2", "3" },
  model = { image = "2024.01.01",
            imageReference = { publisher = "Canonical", offer = "ubuntu-24_04-lts", sku = "server" } },
  upgradePolicy = { mode = "Manual", automaticOSUpgradePolicy = { enableAutomaticOSUpgrade = true } },
  healthExtension = { protocol = "http", port = 8000, requestPath = "/health", gracePeriod = 600 },
}

-- vm.startedAt is the virtual time of the instance's last (re)start: its first boot, its
-- upgrade, its restore. Each boot draws once whether it will ever answer and when.
health(function(vm, now)
  local s = vm.state
  if s.boot ~= vm.startedAt then
    s.boot = vm.startedAt
    s.dead = math.random() < 0.05
    s.ready = vm.startedAt + math.random(240, 360)
  end
  if s.dead or now < s.ready then return nil end
  return { applicationHealthState = "Healthy" }
end)

at("PT10M", function() release_image { version = "2024.02.01" } end)

expect {
  code = "Faulted", errorCode = "MaxUnhealthyUpgradedInstancePercentExceededInRollingUpgrade",
  failed = 7, rolledBack = 7,
}
