public import AzureWire
public import Formats
public import UpgradeEngine

/// The starting scenario `rehearse import` prints for a scale set document: the scale set read
/// from the document (`from`, so the document stays the one source), what was read as a Lua
/// table (`document`: values as literals, never in comments, so no value can become code), the
/// warnings as data, and the actions that fit the upgrade mode: Rolling updates the model (the
/// next version of what the document names, `NextModel`) and expects the rolling upgrade to
/// complete; Manual and Automatic rehearse what the mode does beside adopting Rolling, chosen by
/// the parameter `rollout` (`ModeStarter`); with automatic OS image upgrades on, an image is
/// released too. Its `expect` holds when every probe answers Healthy; a team then scripts its
/// own health, timing and faults.
public enum StarterScenario {
    /// The scenario's text, rendered from `definition` (the importer's: `ScenarioDefinition(imported:path:parameters:fleet:)`)
    /// with what `imported` read. `path`, `parameters` and the instance list's path are written as
    /// given: relative to the folder the script will be saved in (or absolute). `context` is
    /// import's `--context NAME=VALUE` settings, written as the table's `context`. The scale set is
    /// written as read `from` the document; every typed timeline entry becomes an `at`, every
    /// expectation an `expect`.
    public static func text(_ definition: ScenarioDefinition, imported: ImportedScaleSet, path: String, resource: String?, parameters: String?,
                            instances: (path: String, fleet: [ExistingInstance])? = nil, context: [String] = []) -> String {
        let d = definition.scaleSet
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
        if d.policy.mode != .rolling, let change = definition.timeline.lazy.compactMap({ entry -> String? in
            if case .perform(let action) = entry.action, case .updateModel = action { return call(action) } else { return nil }
        }).first {
            // Manual and Automatic: what the mode does today beside the Rolling alternative.
            let all = d.fleet.map { $0.map(\.id) } ?? Array(0..<d.capacity)
            let ids = (d.fleet.map { $0.filter { !$0.protectFromScaleSetActions }.map(\.id) } ?? all).filter { !d.protected.contains($0) }
            ModeStarter.write(&w, mode: d.policy.mode, change: change, ids: ids, hasHealthSource: d.hasHealthSource,
                              loadBalancerProbe: d.loadBalancerProbe, osUpgrades: osUpgrades(definition), protected: all.count - ids.count)
            for entry in definition.timeline {
                guard case .perform(let action) = entry.action, case .releaseImage = action else { continue }
                for line in comments(action, at: entry.time, mode: d.policy.mode) { w.comment(line) }
                w.code("at(\(LuaWriter.string(time(entry.time))), function() \(call(action)) end)")
            }
            return w.text
        }
        if d.hasHealthSource {
            w.comment("Every probe answers Healthy. Script your application here: how long it takes to answer")
            w.comment("after a restart (now - vm.startedAt), boots that never answer, phases (PhaseOrderingNumber).")
            if d.loadBalancerProbe { w.comment(ModeStarter.loadBalancerNote) }
            w.code("health(function(vm, now)")
            w.code("  return { applicationHealthState = \"Healthy\" }")
            w.code("end)")
            w.blank()
        }
        for entry in definition.timeline {
            guard case .perform(let action) = entry.action else { continue }
            for line in comments(action, at: entry.time, mode: d.policy.mode) { w.comment(line) }
            w.code("at(\(LuaWriter.string(time(entry.time))), function() \(call(action)) end)")
        }
        w.blank()
        for expectation in definition.expectations { w.code(expect(expectation)) }
        return w.text
    }

    /// The starter of `imported` read from `path`: `text` of the importer's definition.
    public static func text(_ imported: ImportedScaleSet, path: String, resource: String?, parameters: String?,
                            instances: (path: String, fleet: [ExistingInstance])? = nil, context: [String] = []) -> String {
        text(ScenarioDefinition(imported: imported, path: path, parameters: parameters, fleet: instances?.fleet), imported: imported,
             path: path, resource: resource, parameters: parameters, instances: instances, context: context)
    }

    /// The automatic OS upgrades the releases of `definition`'s timeline start: one each when the
    /// model after its update still names image version latest (a pinned version takes none).
    static func osUpgrades(_ definition: ScenarioDefinition) -> Int {
        var model = definition.scaleSet.model
        for entry in definition.timeline {
            if case .perform(.updateModel(let changes, _)) = entry.action { model.merge(changes) { $1 } }
        }
        guard (model[Simulation.imageVersionAttribute] ?? "latest").lowercased() == "latest" else { return 0 }
        return definition.timeline.count { if case .perform(.releaseImage) = $0.action { true } else { false } }
    }

    /// What the starter says about an action of its timeline.
    static func comments(_ action: SessionAction, at time: Millis, mode: UpgradeMode) -> [String] {
        switch action {
        case .updateModel:
            switch mode {
            case .rolling: return ["One model update \(when(time)): the rolling upgrade the policy describes."]
            case .automatic: return ["One model update \(when(time)): in Automatic mode every instance is upgraded at once,", "and no rolling upgrade starts."]
            case .manual:
                return ["One model update \(when(time)); in Manual mode nothing upgrades until asked: every",
                        "instance is upgraded a minute later, as az vmss update-instances --instance-ids '*' does."]
            }
        case .releaseImage: return ["Automatic OS image upgrades are on: a new platform image is released \(when(time))."]
        default: return []
        }
    }

    /// "a minute in", "an hour in", else the duration.
    static func when(_ time: Millis) -> String {
        switch time {
        case 60_000: "a minute in"
        case 3_600_000: "an hour in"
        default: "at \(ISODuration.format(time))"
        }
    }

    /// A time of the timeline as `at` takes it: whole minutes as minutes (`PT60M`), else the ISO 8601 duration.
    static func time(_ time: Millis) -> String {
        time > 0 && time % 60_000 == 0 ? "PT\(time / 60_000)M" : ISODuration.format(time)
    }

    /// The script call that performs `action`, every value a literal.
    static func call(_ action: SessionAction) -> String {
        func ids(_ ids: [Int]?) -> String { ids.map { "{ \($0.map(String.init).joined(separator: ", ")) }" } ?? "\"*\"" }
        func field(_ name: String, _ value: String?) -> String { value.map { " { \(name) = \(LuaWriter.string($0)) }" } ?? "()" }
        switch action {
        case .updateModel(let changes, let health):
            let fields = changes.keys.sorted().map { "[\(LuaWriter.string($0))] = \(LuaWriter.string(changes[$0]!))" }
            let plain = changes.keys.sorted().map { "\($0) = \(LuaWriter.string(changes[$0]!))" }
            let identifiers = changes.keys.allSatisfy { key in key.first.map { $0.isLetter || $0 == "_" } == true && key.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_") } }
            var written = identifiers ? plain : fields
            switch health {
            case .set(let settings)?: written.append("healthExtension = \(LuaWriter.value(settings.json))")
            case .remove?: written.append("healthExtension = false")
            case nil: break
            }
            return written.isEmpty ? "update_model()" : "update_model { \(written.joined(separator: ", ")) }"
        case .cancel: return "cancel()"
        case .manualUpgrade(let list): return "manual_upgrade(\(ids(list)))"
        case .startOSUpgrade(let image): return "start_os_upgrade" + field("image", image)
        case .releaseImage(let version): return "release_image" + field("version", version)
        case .approveOSUpgrade(let list): return "approve_os_upgrade(\(ids(list)))"
        case .startExtensionUpgrade(let version): return "start_extension_upgrade" + field("version", version)
        case .scale(let count): return "scale(\(count))"
        case .reimage(let list): return "reimage(\(ids(list)))"
        case .updatePolicy(let patch): return "update_policy(\(LuaWriter.value(patch.json)))"
        // Actions serve makes (an import never writes them).
        case .deleteInstances(let list): return "delete_instances(\(ids(list)))"
        case .protect(let id, let scaleIn, let actions):
            return "protect { id = \(id), protectFromScaleIn = \(scaleIn), protectFromScaleSetActions = \(actions) }"
        case .answerHook(let event, let response): return LuaHookAnswerSource.call(event: event, response)
        case .setLifecycleHooks(let hooks):
            guard case .object(let profile) = LifecycleHooksWire.profileJSON(hooks), let list = profile["lifecycleHooks"] else { return "set_lifecycle_hooks {}" }
            return "set_lifecycle_hooks(\(LuaWriter.value(list)))"
        case .restart(let list): return "restart_instances(\(ids(list)))"
        case .stop(let list, let deallocate): return "stop_instances(\(ids(list))\(deallocate ? ", { deallocate = true }" : ""))"
        case .start(let list): return "start_instances(\(ids(list)))"
        // A script has no per-instance call: the set's action naming the one id.
        case .onInstance(let id, let action): return call(action.onSet(ids: [id]))
        }
    }

    /// `expect { … }` of the fields an expectation sets (code and upgrades, as the starter writes them).
    static func expect(_ expectation: Expectation) -> String {
        var fields: [String] = []
        if let code = expectation.code { fields.append("code = \(LuaWriter.string(code.rawValue))") }
        if let upgrades = expectation.upgrades { fields.append("upgrades = \(upgrades)") }
        return "expect { \(fields.joined(separator: ", ")) }"
    }

    /// What the document says, as data: the scale set, its policy and health source, the
    /// instance list and the warnings (`notes`: each `{ field = …, message = … }`).
    public static func summary(_ imported: ImportedScaleSet, path: String, instances: (path: String, fleet: [ExistingInstance])?) -> JSON {
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
