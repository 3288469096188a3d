-- rehearse.faults: failure injectors every scenario can require without a plugin path.
-- Health wrappers take the inner health function and return a new one; fault helpers return
-- fault functions; faults.combine chains fault functions (the first non-nil answer wins).
local M = {}

local function seconds(value, what)
  if type(value) == "number" then return value end
  local ok, result = pcall(duration, value)
  if ok then return result end
  error(what .. ": " .. tostring(result), 3)
end
M.seconds = seconds

local function set_of(list)
  local set = {}
  for _, v in ipairs(list or {}) do set[v] = true end
  return set
end

-- Upgrades that fail to boot with a probability (seeded by --seed), optionally only for
-- some operations: boot_failures{ probability = 0.1, operations = { "upgrade", "create" } }
function M.boot_failures(opts)
  local p = assert(tonumber(opts and opts.probability), "boot_failures: probability (0..1) is required")
  assert(p >= 0 and p <= 1, "boot_failures: probability must be between 0 and 1")
  local ops = set_of(opts.operations or { "upgrade", "create" })
  return function(vm, op)
    if ops[op] and math.random() < p then return { fail = true } end
    return nil
  end
end

-- Upgrades that take longer: slow_upgrades{ duration = "PT10M", ids = { 1, 2 } } (all when no ids).
function M.slow_upgrades(opts)
  local d = seconds(opts and opts.duration, "slow_upgrades.duration")
  local ids = opts.ids and set_of(opts.ids)
  return function(vm, op)
    if op == "upgrade" and (ids == nil or ids[vm.id]) then return { duration = d } end
    return nil
  end
end

-- A zone that stops answering between two times: zone_outage{ zone = "2", from = "PT5M", to = "PT15M" }(inner)
function M.zone_outage(opts)
  local zone = tostring(assert(opts and opts.zone, "zone_outage: zone is required"))
  local from, to = seconds(opts.from, "zone_outage.from"), seconds(opts.to, "zone_outage.to")
  return function(inner)
    return function(vm, now)
      if vm.zone == zone and now >= from and now < to then return nil end
      return inner(vm, now)
    end
  end
end

-- Health that flips between Healthy and Unhealthy every period seconds, for some ids:
-- flapping{ period = 10, ids = { 3 } }(inner)
function M.flapping(opts)
  local period = seconds(opts and opts.period or 10, "flapping.period")
  local ids = opts and opts.ids and set_of(opts.ids)
  return function(inner)
    return function(vm, now)
      if ids == nil or ids[vm.id] then
        local up = math.floor(now / period) % 2 == 0
        return { applicationHealthState = up and "Healthy" or "Unhealthy" }
      end
      return inner(vm, now)
    end
  end
end

-- Probes that never answer for some ids (or every instance on a given model version):
-- never_answer{ ids = { 4 } }(inner), never_answer{ version = 2 }(inner)
function M.never_answer(opts)
  local ids = opts and opts.ids and set_of(opts.ids)
  local version = opts and opts.version
  return function(inner)
    return function(vm, now)
      if (ids and ids[vm.id]) or (version and vm.model.version == version) then return nil end
      return inner(vm, now)
    end
  end
end

-- Chains fault functions: the first that answers non-nil decides.
function M.combine(...)
  local list = { ... }
  return function(vm, op, now)
    for _, f in ipairs(list) do
      local r = f(vm, op, now)
      if r ~= nil then return r end
    end
    return nil
  end
end

return M
