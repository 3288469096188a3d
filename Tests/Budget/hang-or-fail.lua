-- A third of the seeds hang in a backtracking pattern (2^40 ways to split 40 a's among 20 a*),
-- a third raise a plain error, the rest pass: sweeps must name the same failed seed whatever
-- the number of jobs.
scaleset { name = "web", capacity = 2, upgradePolicy = { mode = "Rolling" },
           healthExtension = { protocol = "http", port = 80, requestPath = "/" } }
health(function(vm) return { applicationHealthState = "Healthy" } end)
at("PT1M", function()
  local r = math.random(1, 3)
  if r == 1 then string.find(string.rep("a", 40), string.rep("a*", 20) .. "b")
  elseif r == 2 then error("plain script error") end
end)
