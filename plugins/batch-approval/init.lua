-- batch-approval: a team's approval automation for lifecycle hook events (SPEC 6b), as an on_hook
-- function. Each event is answered `after` its creation (the time the team's checks take): every
-- target approved, except the held instance ids, which are rejected and keep their image.
--
--   local approval = require "batch-approval"
--   on_hook(approval.approve { after = "PT12M", hold = "3" })
local faults = require "rehearse.faults"
local M = {}

-- "3, 7" as { 3, 7 }; anything but non-negative integers is an error naming the option.
local function instance_ids(text, option)
  local ids = {}
  for part in string.gmatch(text, "[^,]+") do
    local trimmed = part:match("^%s*(.-)%s*$")
    local id = math.tointeger(tonumber(trimmed))
    if id == nil or id < 0 then
      error(option .. ": expected instance ids separated by commas, such as \"3,7\"; got \"" .. text .. "\"", 3)
    end
    ids[#ids + 1] = id
  end
  return ids
end

function M.approve(opts)
  opts = opts or {}
  local after = faults.seconds(opts.after or "PT10M", "batch-approval.approve.after")
  local held = {}
  for _, id in ipairs(instance_ids(opts.hold or "", "batch-approval.approve.hold")) do held[id] = true end
  return function(event)
    local reject = {}
    for _, target in ipairs(event.targets) do
      if held[target] then reject[#reject + 1] = target end
    end
    if #reject > 0 then return { reject = reject, approve = "*", after = after } end
    return { approve = "*", after = after }
  end
end

return M
