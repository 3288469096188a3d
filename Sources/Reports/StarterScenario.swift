public import AzureWire
import Formats
public import UpgradeEngine

/// The starting scenario `rehearse import` prints for a scale set document: the scale set read
/// from the document (`from`, so the document stays the one source), what was read as a Lua
/// table (`document`: values as literals, never in comments, so no value can become code), the
/// warnings as data, and the actions that fit the upgrade mode: Rolling updates the model and
/// expects the rolling upgrade to complete; Automatic updates the model, which upgrades every
/// instance at once and starts no rolling upgrade; Manual updates the model and upgrades every
/// instance with `manual_upgrade("*")`; with automatic OS image upgrades on, an image is
/// released too. Its `expect` holds when every probe answers Healthy; a team then scripts its
/// own health, timing and faults.
public enum StarterScenario {
    /// The scenario's text. `path`, `parameters` and the instance list's path are written as
    /// given: relative to the folder the script will be saved in (or absolute).
    /// `context` is import's `--context NAME=VALUE` settings, written as the table's `context`.
    public static func text(_ imported: ImportedScaleSet, path: String, resource: String?, parameters: String?,
                            instances: (path: String, fleet: [ExistingInstance])? = nil, context: [String] = []) -> String {
        let d = imported.definition
        var w = LuaWriter()
        w.comment("A starting scenario printed by rehearse import. What the document says is in the table")
        w.comment("`document` below (read from it; changing the table changes nothing). Paths in from,")
        w.comment("parameters and instances are relative to this script's folder.")
        w.code("local document = \(LuaWriter.value(summary(imported, path: path, instances: instances)))")
        w.blank()
        w.code("scaleset {")
        w.indent = 2
        w.code("from = \(LuaWriter.string(path)),")
        if let resource { w.code("resource = \(LuaWriter.string(resource)),") }
        if let parameters { w.code("parameters = \(LuaWriter.string(parameters)),") }
        if let (file, _) = instances { w.code("instances = \(LuaWriter.string(file)),") }
        if !context.isEmpty {
            var entries: [String: JSON] = [:]
            for setting in context {
                let parts = setting.split(separator: "=", maxSplits: 1).map(String.init)
                if parts.count == 2 { entries[parts[0]] = .string(parts[1]) }
            }
            w.code("context = \(LuaWriter.value(.object(entries))),")
        }
        w.comment("Fields given here override the document's, e.g. capacity = 30 or")
        w.comment("upgradePolicy = { mode = \"Rolling\", rollingUpgradePolicy = { maxBatchInstancePercent = 10 } }.")
        w.indent = 0
        w.code("}")
        w.blank()
        if d.hasHealthSource {
            w.comment("Every probe answers Healthy. Script your application here: how long it takes to answer")
            w.comment("after a restart (now - vm.startedAt), boots that never answer, phases (PhaseOrderingNumber).")
            w.code("health(function(vm, now)")
            w.code("  return { applicationHealthState = \"Healthy\" }")
            w.code("end)")
            w.blank()
        }
        switch d.policy.mode {
        case .rolling:
            w.comment("One model update a minute in: the rolling upgrade the policy describes.")
            w.code("at(\"PT1M\", function() update_model { image = \"next\" } end)")
        case .automatic:
            w.comment("One model update a minute in: in Automatic mode every instance is upgraded at once,")
            w.comment("and no rolling upgrade starts.")
            w.code("at(\"PT1M\", function() update_model { image = \"next\" } end)")
        case .manual:
            w.comment("One model update a minute in; in Manual mode nothing upgrades until asked: every")
            w.comment("instance is upgraded a minute later, as az vmss update-instances --instance-ids '*' does.")
            w.code("at(\"PT1M\", function() update_model { image = \"next\" } end)")
            w.code("at(\"PT2M\", function() manual_upgrade(\"*\") end)")
        }
        let osUpgrades = d.policy.automaticOS.enableAutomaticOSUpgrade
        if osUpgrades {
            w.comment("Automatic OS image upgrades are on: a new platform image is released an hour in.")
            w.code("at(\"PT60M\", function() release_image { version = \"next\" } end)")
        }
        w.blank()
        if d.policy.mode == .rolling || osUpgrades {
            w.code("expect { code = \"Completed\" }")
        } else {
            w.code("expect { upgrades = 0 }")
        }
        return w.text
    }

    /// What the document says, as data: the scale set, its policy and health source, the
    /// instance list and the warnings (`notes`: each `{ field = …, message = … }`).
    static func summary(_ imported: ImportedScaleSet, path: String, instances: (path: String, fleet: [ExistingInstance])?) -> JSON {
        let d = imported.definition
        let r = d.policy.rolling
        var out: [String: JSON] = [
            "file": .string(path), "format": .string(imported.format.rawValue), "resource": .string(imported.resource),
            "name": .string(d.name), "capacity": .int(d.capacity), "orchestration": .string(d.orchestration.rawValue),
            "zones": .array(d.zones.map(JSON.string)), "mode": .string(d.policy.mode.rawValue),
            "maxBatchInstancePercent": .int(r.maxBatchInstancePercent), "maxUnhealthyInstancePercent": .int(r.maxUnhealthyInstancePercent),
            "maxUnhealthyUpgradedInstancePercent": .int(r.maxUnhealthyUpgradedInstancePercent),
            "pauseTimeBetweenBatches": .string(ISODuration.format(r.pauseTimeBetweenBatches)), "maxSurge": .bool(r.maxSurge),
            "automaticOSUpgrade": .bool(d.policy.automaticOS.enableAutomaticOSUpgrade), "loadBalancerProbe": .bool(d.loadBalancerProbe),
        ]
        if let faultDomains = d.faultDomainCount { out["faultDomains"] = .int(faultDomains) }
        if let e = d.healthExtension {
            var extensionFields: [String: JSON] = ["protocol": .string(e.protocol.rawValue), "intervalInSeconds": .int(e.intervalInSeconds),
                                                   "numberOfProbes": .int(e.numberOfProbes), "gracePeriod": .int(e.gracePeriod), "richStates": .bool(e.richStates)]
            if let port = e.port { extensionFields["port"] = .int(port) }
            if let requestPath = e.requestPath { extensionFields["requestPath"] = .string(requestPath) }
            out["healthExtension"] = .object(extensionFields)
        }
        if let (file, fleet) = instances {
            out["instances"] = .object(["file": .string(file), "ids": .array(fleet.map { .int($0.id) }),
                                        "notOnLatestModel": .array(fleet.filter { !$0.latestModelApplied }.map { .int($0.id) }),
                                        "protected": .array(fleet.filter(\.protectFromScaleSetActions).map { .int($0.id) })])
        }
        out["notes"] = .array(imported.warnings.map { .object(["field": .string($0.field), "message": .string($0.message)]) })
        return .object(out)
    }
}
