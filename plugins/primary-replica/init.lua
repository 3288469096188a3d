-- primary-replica: upgrade replicas before primaries, as a database tier wants.
--
--   local pr = require "primary-replica"
--   local tier = pr.tier { primaries = { 0 }, witnesses = { 9 } }
--   phase(tier.phase)                       -- the phase shorthand, or
--   health(tier.metrics(function(vm, now) ... end))  -- the same as customMetrics on the wire
--
-- Replicas get phase 0, primaries phase 1; witnesses report SkipUpgrade = true. Both forms say
-- the same: tier.phase returns the rollingUpgrade metric itself.
local M = {}

local function set_of(list, what)
  local set = {}
  for i, id in ipairs(list or {}) do
    if math.type(id) ~= "integer" then error(what .. "[" .. i .. "] must be an instance id", 3) end
    set[id] = true
  end
  return set
end

M.REPLICA_PHASE = 0
M.PRIMARY_PHASE = 1

function M.tier(opts)
  opts = opts or {}
  local primaries = set_of(opts.primaries, "primaries")
  local witnesses = set_of(opts.witnesses, "witnesses")
  local tier = {}

  function tier.role(vm)
    if witnesses[vm.id] then return "witness" end
    return primaries[vm.id] and "primary" or "replica"
  end

  function tier.phase(vm)
    local role = tier.role(vm)
    if role == "witness" then return { SkipUpgrade = true } end
    return { PhaseOrderingNumber = role == "primary" and M.PRIMARY_PHASE or M.REPLICA_PHASE }
  end

  -- Wraps a health function so its answers carry the tier's custom metrics in wire form
  -- (a JSON string), as the Application Health extension expects.
  function tier.metrics(inner)
    return function(vm, now)
      local answer = inner(vm, now)
      if type(answer) ~= "table" then return answer end
      local role = tier.role(vm)
      local fields
      if role == "witness" then
        fields = '"SkipUpgrade": true'
      else
        fields = '"PhaseOrderingNumber": ' .. tier.phase(vm).PhaseOrderingNumber
      end
      answer.customMetrics = '{"rollingUpgrade": {' .. fields .. '}}'
      return answer
    end
  end

  return tier
end

return M
