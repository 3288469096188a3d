import Formats
import UpgradeEngine

/// The part of an imported starter that rehearses what a Manual or Automatic scale set really
/// does, beside the Rolling alternative, chosen by the script parameter `rollout`, so that
/// `rehearse compare STARTER --set param.rollout=…` compares the two in one command:
/// - Manual: `manual` is the team's rollout (the model is updated, then `az vmss update-instances`
///   in batches of `batch` instances, each started once the previous one answers Healthy on the
///   new model, checked every `wait`; after `patience` without an answer the team stops; with no
///   health source to ask, each batch starts `settle` after the one before); `rolling`
///   is seed 001's adoption of Rolling (the Application Health extension added to the model when
///   the document has none and installed a fifth of the fleet at a time, each fifth once the one
///   before answers Healthy, never all at once; the policy switched to Rolling
///   with the seeds' 20% batches and 20% budgets, then the same model change rolled out).
/// - Automatic: `automatic` is the model change upgrading every instance at once; `rolling` is
///   the same change after switching to Rolling with that policy (with no health source, the
///   extension is installed by fifths under Manual first).
/// Both expect the whole fleet on the new model at the end but the instances protected from scale
/// set actions (`leftBehind` = how many), so a rollout that stops partway fails its run, and count the rolling upgrades: one for `rolling`, plus one per
/// platform image the automatic OS upgrades roll out (`osUpgrades`).
enum ModeStarter {
    /// What a load-balancer probe reads of an answer (the starter's health comment says it).
    static let loadBalancerNote = "The load-balancer probe reads only the HTTP status: answer { status = 503 } to fail it."

    /// The policy the seeds recommend for a first Rolling upgrade (seed 001).
    static let rollingPolicy = "{ mode = \"Rolling\", rollingUpgradePolicy = { maxBatchInstancePercent = 20, maxUnhealthyInstancePercent = 20, maxUnhealthyUpgradedInstancePercent = 20, pauseTimeBetweenBatches = \"PT30S\" } }"

    /// Writes the parameters, the health callback and the timeline of `mode` into `w`; `change`
    /// is the `update_model` call of the next model; `ids` the instances (ascending);
    /// `osUpgrades`, the automatic OS upgrades the starter's image releases start.
    /// `protected`, the instances protected from scale set actions, which no rollout upgrades.
    static func write(_ w: inout LuaWriter, mode: UpgradeMode, change: String, ids: [Int], hasHealthSource: Bool, loadBalancerProbe: Bool,
                      osUpgrades: Int, protected: Int) {
        let first = mode == .manual ? "manual" : "automatic"
        w.comment("The rollout is a parameter: \"\(first)\" is what this \(mode.rawValue) scale set does today, \"rolling\"")
        w.comment("adopts Rolling as seed 001 does. Compare the two over many seeds in one command:")
        w.comment("  rehearse compare THIS.lua --set param.rollout=\(first),rolling --seeds 0..199")
        w.code("local rollout = param(\"rollout\", \(LuaWriter.string(first)))")
        if mode == .manual {
            w.code("local batch = param(\"batch\", \(max(1, ids.count / 5)))        -- instances per az vmss update-instances")
            w.code("if batch < 1 then error(\"param batch is \" .. batch .. \": allowed 1 or more instances per batch\") end")
            if hasHealthSource {
                w.code("local wait = duration(param(\"wait\", \"PT30S\"))       -- how often the team looks at health")
                w.code("local patience = duration(param(\"patience\", \"PT30M\")) -- how long it waits for one batch")
            } else {
                w.code("local settle = duration(param(\"settle\", \"PT5M\"))    -- the wait between batches: no health source to ask")
            }
        }
        w.blank()
        w.comment("Every probe answers Healthy. Script your application here: how long it takes to answer")
        for line in hasHealthSource
            ? ["after a restart (now - vm.startedAt), boots that never answer. `answered` keeps the model",
               "version each instance last answered Healthy on: the team's health wait reads it."]
            : ["after a restart (now - vm.startedAt), boots that never answer. This scale set has no health",
               "source: nothing is probed until the rolling rollout adds the extension."] { w.comment(line) }
        if loadBalancerProbe { w.comment(loadBalancerNote) }
        w.code("local answered = {}")
        w.code("health(function(vm, now)")
        w.code("  local answer = { applicationHealthState = \"Healthy\" }")
        w.code("  if answer.applicationHealthState == \"Healthy\" then answered[vm.id] = vm.model.version end")
        w.code("  return answer")
        w.code("end)")
        w.blank()
        if !ids.isEmpty, ids == Array(0..<ids.count) {
            w.code("local ids = {}")
            w.code("for id = 0, \(ids.count - 1) do ids[#ids + 1] = id end")
        } else {
            w.code("local ids = { \(ids.map(String.init).joined(separator: ", ")) }")
        }
        w.blank()
        if mode == .manual {
            for line in hasHealthSource
                ? ["The team's rollout: the model, then the instances in batches, each once the previous",
                   "one answers Healthy on the new model (version 2)."]
                : ["The team's rollout: the model, then the instances in batches, one every `settle`."] { w.comment(line) }
            w.code("local function upgrade(from, time)")
            w.code("  if from > #ids then return end")
            w.code("  at(time, function()")
            w.code("    local chosen = {}")
            w.code("    for i = from, math.min(from + batch - 1, #ids) do chosen[#chosen + 1] = ids[i] end")
            w.code("    manual_upgrade(chosen)")
            if hasHealthSource {
                w.code("    local function check(t)")
                w.code("      at(t, function()")
                w.code("        for _, id in ipairs(chosen) do")
                w.code("          if answered[id] ~= 2 then")
                w.code("            if t - time < patience then check(t + wait) else print(\"instance \" .. id .. \" never answered: the team stops\") end")
                w.code("            return")
                w.code("          end")
                w.code("        end")
                w.code("        upgrade(from + batch, t)")
                w.code("      end)")
                w.code("    end")
                w.code("    check(time + wait)")
            } else {
                w.code("    upgrade(from + batch, time + settle)")
            }
            w.code("  end)")
            w.code("end")
            w.blank()
        }
        w.code("if rollout == \(LuaWriter.string(first)) then")
        w.code("  at(\"PT1M\", function() \(change) end)")
        if mode == .manual { w.code("  upgrade(1, 120)") }
        w.code("else")
        if hasHealthSource {
            w.code("  at(\"PT1M\", function() update_policy \(rollingPolicy) end)")
            w.code("  at(\"PT2M\", function() \(change) end)")
        } else {
            // Installed on every instance at once, the new extension would hold them all
            // Initializing together (0 healthy): it goes in by fifths, each once the one before
            // answers Healthy, under Manual (an Automatic scale set is switched to Manual first).
            w.code("  -- Rolling needs a health source: add the extension to the model, install it a fifth of the")
            w.code("  -- fleet at a time (each once the one before answers Healthy), then switch to Rolling.")
            w.code("  local step = math.max(1, math.ceil(#ids / 5))")
            w.code("  local function install(from, time)")
            w.code("    if from > #ids then")
            w.code("      at(time + 60, function() update_policy \(rollingPolicy) end)")
            w.code("      at(time + 120, function() \(change) end)")
            w.code("      return")
            w.code("    end")
            w.code("    at(time, function()")
            w.code("      local chosen = {}")
            w.code("      for i = from, math.min(from + step - 1, #ids) do chosen[#chosen + 1] = ids[i] end")
            w.code("      manual_upgrade(chosen)")
            w.code("      local function check(t)")
            w.code("        at(t, function()")
            w.code("          for _, id in ipairs(chosen) do")
            w.code("            if answered[id] ~= 2 then")
            w.code("              if t - time < 1800 then check(t + 10) else print(\"instance \" .. id .. \" never answered: the install stops\") end")
            w.code("              return")
            w.code("            end")
            w.code("          end")
            w.code("          install(from + step, t)")
            w.code("        end)")
            w.code("      end")
            w.code("      check(time + 10)")
            w.code("    end)")
            w.code("  end")
            w.code("  at(\"PT1M\", function()")
            if mode == .automatic { w.code("    update_policy { mode = \"Manual\" }") }
            w.code("    update_model { healthExtension = { protocol = \"http\", port = 80, requestPath = \"/health\", gracePeriod = 600 } }")
            w.code("  end)")
            w.code("  install(1, 90)")
        }
        w.code("end")
        w.blank()
        if osUpgrades > 0 {
            w.comment("Each platform image released below starts an automatic OS upgrade: one rolling upgrade more.")
        }
        if protected > 0 {
            w.comment("Either way the fleet ends on the new model but the \(protected) protected from scale set actions, which")
            w.comment("no rollout upgrades: a rollout that stops partway leaves more behind and fails the run.")
        } else {
            w.comment("Either way the whole fleet ends on the new model: a rollout that stops partway fails the run.")
        }
        w.code("if rollout == \"rolling\" then")
        w.code("  expect { code = \"Completed\", upgrades = \(1 + osUpgrades), leftBehind = \(protected) }")
        w.code("else")
        w.code("  expect { upgrades = \(osUpgrades), leftBehind = \(protected) }")
        w.code("end")
    }
}
