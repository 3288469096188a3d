-- zone-outage-drill: one availability zone stops answering health probes between two times.
--
--   local drill = require "zone-outage-drill"
--   health(drill.outage { zone = "2", from = "PT3M", to = "PT9M" }(function(vm, now) ... end))
--
-- While the zone is out its instances answer nothing: Unknown, which counts as unhealthy, so
-- a rolling upgrade running then meets its maxUnhealthyInstancePercent check.
local faults = require "rehearse.faults"
local M = {}

function M.outage(opts)
  if type(opts) ~= "table" or opts.zone == nil then
    error("zone-outage-drill.outage: expected { zone = \"2\", from = \"PT3M\", to = \"PT9M\" }", 2)
  end
  return faults.zone_outage { zone = opts.zone, from = opts.from or 0, to = opts.to or math.huge }
end

return M
