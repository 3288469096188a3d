-- alarm-rollback: the rollback teams build themselves, on an outside signal rather than Azure's own
-- health thresholds. Every `every`, a fleet metric is sampled; when `datapoints` of the last
-- `periods` samples breach the threshold (an alarm's "M out of N", as CloudWatch and Azure
-- Monitor metric alerts evaluate it), the rolling upgrade is cancelled and the previous model is
-- put back with update_model, which rolls it out under the scale set's own policy.
--
--   local alarm = require "alarm-rollback"
--   alarm.watch { rollback = { image = "v1" }, threshold = 0.9, every = "PT1M", periods = 3, datapoints = 2 }
--
-- In a run whose gates do not act (sweep --no-gate, and a shadow gate's other run) it samples
-- nothing, so `sweep --shadow-gate` scores it.
local faults = require "rehearse.faults"
local M = {}

local function whole(value, what, low, high)
  if math.type(value) ~= "integer" or value < low or value > high then
    error("alarm-rollback.watch: " .. what .. " must be a whole number from " .. low .. " to " .. high, 3)
  end
  return value
end

function M.watch(opts)
  opts = opts or {}
  if type(opts.rollback) ~= "table" then
    error("alarm-rollback.watch: rollback must be the model to put back, such as { image = \"v1\" }", 2)
  end
  local metric = opts.metric or "share"
  if metric ~= "share" and metric ~= "serving" then
    error("alarm-rollback.watch: metric must be \"share\" or \"serving\"", 2)
  end
  local threshold = opts.threshold or 0.8
  if type(threshold) ~= "number" or threshold ~= threshold or threshold == math.huge or threshold == -math.huge then
    error("alarm-rollback.watch: threshold must be a finite number", 2)
  end
  local every = faults.seconds(opts.every or "PT1M", "alarm-rollback.watch every")
  if every <= 0 then error("alarm-rollback.watch: every must be longer than zero", 2) end
  local periods = whole(opts.periods or 3, "periods", 1, 100)
  local datapoints = whole(opts.datapoints or 2, "datapoints", 1, periods)
  local from = faults.seconds(opts.from or 0, "alarm-rollback.watch from")
  local stop = faults.seconds(opts["until"] or "P1D", "alarm-rollback.watch until")
  local rollback = opts.rollback
  local samples = {}

  local function sample()
    local now = fleet()
    if not now.gate then return end
    -- The rollout watched has ended (completed, faulted or cancelled): nothing left to roll back.
    if now.code == "Completed" or now.code == "Faulted" or now.code == "Cancelled" then return end
    local value = metric == "share" and now.share or now.serving
    samples[#samples + 1] = value < threshold
    if #samples > periods then table.remove(samples, 1) end
    local breaching = 0
    for _, breach in ipairs(samples) do if breach then breaching = breaching + 1 end end
    if breaching >= datapoints then
      print(string.format("alarm-rollback: %d of the last %d samples below %s (%s %s): rolling back",
                          breaching, #samples, tostring(threshold), metric, tostring(value)))
      pcall(cancel)  -- nothing to cancel when no rolling upgrade runs
      update_model(rollback)
      return
    end
    if now.now + every <= stop then at(now.now + every, sample) end
  end

  at(from, sample)
end

return M
