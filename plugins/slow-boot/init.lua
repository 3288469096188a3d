-- slow-boot: instances whose application needs time after every (re)start, and upgrades that
-- are slow and sometimes fail (seeded by --seed).
--
--   local sb = require "slow-boot"
--   health(sb.health { boot = "PT90S" }(function(vm, now) return { applicationHealthState = "Healthy" } end))
--   fault(sb.fault { duration = "PT4M", failure_rate = 0.1 })
local faults = require "rehearse.faults"
local M = {}

-- Until `boot` seconds after the instance last (re)started (vm.startedAt: its first boot, every
-- disruptive upgrade, a failed reimage that restarts it on its old model, a rollback), the
-- application does not answer (the probe times out: Unknown, or Initializing during grace).
function M.health(opts)
  local boot = faults.seconds(opts and opts.boot or 60, "slow-boot.health.boot")
  return function(inner)
    return function(vm, now)
      if now - vm.startedAt < boot then return nil end
      return inner(vm, now)
    end
  end
end

-- Upgrades take `duration`; a share `failure_rate` of them fail.
function M.fault(opts)
  opts = opts or {}
  local slow = faults.slow_upgrades { duration = opts.duration or "PT4M" }
  if not opts.failure_rate or opts.failure_rate == 0 then return slow end
  local failing = faults.boot_failures { probability = opts.failure_rate, operations = { "upgrade" } }
  return faults.combine(failing, slow)
end

return M
