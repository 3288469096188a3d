-- rehearse.bundle_options: checks the table a script passes to a bundle's exported function
-- against the options the bundle's manifest declares. The host wraps the entry module of every
-- bundle whose manifest has "options"; a script never needs to require this itself.
local M = {}

local accepts = {
  string = { string = true },
  number = { number = true },
  integer = { integer = true },
  boolean = { boolean = true },
  duration = { string = true, number = true },
  table = { table = true },
  ["function"] = { ["function"] = true },
}

local function kind_of(value)
  if math.type(value) == "integer" then return "integer" end
  return type(value)
end

local function fits(kind, value)
  local got = kind_of(value)
  if accepts[kind][got] then return true end
  return got == "integer" and (kind == "number" or kind == "duration")
end

-- exports: what the entry module returned; label: "name version"; declared: export name ->
-- { option name -> kind }; listing: export name -> the options it reads, as messages list them.
function M.guard(exports, label, declared, listing)
  if type(exports) ~= "table" then return exports end
  for export, options in pairs(declared) do
    local inner = rawget(exports, export)
    if type(inner) == "function" then
      rawset(exports, export, function(opts, ...)
        if type(opts) == "table" then
          -- A metatable could answer the bundle's reads (__index) or hide keys from this walk
          -- (__pairs) that the bundle then reads: the table checked must be the table read.
          -- getmetatable is never nil when a metatable is set (__metatable = false included).
          if getmetatable(opts) ~= nil then
            error(label .. ": the option table passed to " .. export .. " has a metatable; metatables are not allowed"
              .. " on a bundle's option table (pass a plain table such as { name = value }); " .. listing[export], 2)
          end
          -- next, not pairs: the walk sees every key the table holds. The bundle gets a copy of
          -- what was checked, so a change the script makes to its table later reaches nothing.
          local checked = {}
          for key, value in next, opts do
            if type(key) ~= "string" then
              local shown = math.type(key) and tostring(key) or type(key)
              error(label .. ": " .. export .. " has no option [" .. shown .. "]: options are named (name = value); "
                .. listing[export], 2)
            end
            local kind = options[key]
            if kind == nil then
              error(label .. ": " .. export .. " has no option '" .. key .. "'; " .. listing[export], 2)
            end
            if not fits(kind, value) then
              error(label .. ": option '" .. key .. "' of " .. export .. " takes a " .. kind .. ", not a "
                .. kind_of(value) .. "; " .. listing[export], 2)
            end
            checked[key] = value
          end
          opts = checked
        end
        return inner(opts, ...)
      end)
    end
  end
  return exports
end

return M
