import AzureWire
import Formats
import Hummingbird
import Scenario
import UpgradeEngine

extension UpgradePolicy {
    /// Whether `other` makes the engine behave the same (which booleans were written aside).
    func behavesLike(_ other: UpgradePolicy) -> Bool {
        let a = rolling, b = other.rolling
        return mode == other.mode && automaticOS == other.automaticOS && a.maxBatchInstancePercent == b.maxBatchInstancePercent
            && a.maxUnhealthyInstancePercent == b.maxUnhealthyInstancePercent
            && a.maxUnhealthyUpgradedInstancePercent == b.maxUnhealthyUpgradedInstancePercent
            && a.pauseTimeBetweenBatches == b.pauseTimeBetweenBatches && a.prioritizeUnhealthyInstances == b.prioritizeUnhealthyInstances
            && a.enableCrossZoneUpgrade == b.enableCrossZoneUpgrade && a.maxSurge == b.maxSurge
            && a.rollbackFailedInstancesOnPolicyBreach == b.rollbackFailedInstancesOnPolicyBreach
    }
}

/// What a PATCH or PUT of the scale set asks for, read from its body: the model attributes that
/// change, a capacity, a policy. Every problem is found before anything is done.
struct ScaleSetUpdate {
    var changes: [String: String] = [:]
    var capacity: Int?
    /// The policy fields given, when applied they change the policy in effect (Azure's PATCH:
    /// a field left out keeps its value).
    var policy: PolicyPatch?
    /// `lifecycleHooksProfile` when given and different from the hooks now.
    var hooks: [LifecycleHook]?

    /// Reads `body` against the scale set as it is (`policy` in effect); a bad policy, or one the
    /// patch would make invalid, is refused here.
    static func read(_ body: JSON, scaleSet: ScaleSetDefinition, policy inEffect: UpgradePolicy, model: [String: String]) throws(ARMError) -> ScaleSetUpdate {
        guard body.object != nil else {
            throw ARMError(.badRequest, code: "InvalidRequestContent", message: "The request content is \(body.kindName); expected a virtualMachineScaleSet object.")
        }
        var update = ScaleSetUpdate()
        // The parts read must be objects where given: a string in their place is no patch.
        for (name, part) in [("sku", body.field("sku")), ("properties", body.field("properties"))] {
            if let part, part.object == nil, part != .null {
                throw ARMError(.badRequest, code: "InvalidParameter", message: "\(name) is \(part.kindName); expected an object", target: name)
            }
        }
        let properties = body.field("properties")
        if let policyValue = properties?.field("upgradePolicy") {
            let (patch, problems) = PolicyPatch.read(policyValue)
            if !problems.isEmpty { throw ARMError.invalid(ValidationFailure(problems)) }
            var changed = scaleSet
            changed.policy = patch.applied(to: inEffect)
            let invalid = changed.validate()
            if !invalid.isEmpty { throw ARMError.invalid(ValidationFailure(invalid)) }
            // A patch that changes the policy is the scenario's update_policy: the next rolling upgrade uses it.
            if !changed.policy.behavesLike(inEffect) { update.policy = patch }
        }
        if let profile = properties?.field("lifecycleHooksProfile") {
            let (read, found) = LifecycleHooksWire.profile(profile, prefix: "properties.lifecycleHooksProfile")
            let problems = found + ScaleSetDefinition.hookProblems(read).map { Problem(field: "properties." + $0.field, $0.message) }
            if !problems.isEmpty { throw ARMError.invalid(ValidationFailure(problems)) }
            if read != scaleSet.lifecycleHooks { update.hooks = read }
        }
        if let image = properties?.field("virtualMachineProfile")?.field("storageProfile")?.field("imageReference") {
            guard image.object != nil else {
                throw ARMError(.badRequest, code: "InvalidParameter", message: "imageReference is \(image.kindName); expected an object",
                               target: "virtualMachineProfile.storageProfile.imageReference")
            }
            for part in ["publisher", "offer", "sku", "version"] {
                guard let value = image.field(part) else { continue }
                guard case .string(let text) = value else {
                    throw ARMError(.badRequest, code: "InvalidParameter", message: "\(part) is \(value.kindName); expected a string",
                                   target: "virtualMachineProfile.storageProfile.imageReference.\(part)")
                }
                // A part given must name something: empty, or holding control characters, it names no image.
                if text.isEmpty || text.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) {
                    throw ARMError(.badRequest, code: "InvalidParameter", message: "\(part) \(value.serialized(pretty: false)) is not an image \(part); expected a non-empty name without control characters",
                                   target: "virtualMachineProfile.storageProfile.imageReference.\(part)")
                }
                let key = "imageReference.\(part)"
                let current = model[key] ?? ScaleSetShapes.defaultImage[part]
                if text != current { update.changes[key] = text }
            }
        }
        // The VM size and tier are model attributes: a change is a model update (instances upgrade to it).
        for part in ["name", "tier"] {
            guard let value = body.field("sku")?.field(part) else { continue }
            guard case .string(let text) = value, !text.isEmpty, !text.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
                throw ARMError(.badRequest, code: "InvalidParameter", message: "sku.\(part) \(value.brief()) is not a VM \(part == "name" ? "size such as Standard_D2s_v3" : "tier such as Standard"); expected a non-empty string",
                               target: "sku.\(part)")
            }
            let current = model["sku.\(part)"] ?? (part == "name" ? ScaleSetShapes.vmSize : "Standard")
            if text != current { update.changes["sku.\(part)"] = text }
        }
        if let sku = body.field("sku"), let count = sku.field("capacity") {
            guard case .int(let n) = count, (0...100_000).contains(n) else {
                let what: String
                if case .int = count { what = "is out of range" } else { what = "is \(count.kindName), not a whole number" }
                throw ARMError(.badRequest, code: "InvalidParameter", message: "sku.capacity \(count.serialized(pretty: false)) \(what); allowed a whole number 0–100000",
                               target: "sku.capacity")
            }
            update.capacity = n
        }
        return update
    }

    /// The request's actions, in Azure's order (policy, hooks, model, capacity), after checking what the
    /// engine would refuse, so that a refused request changes nothing: a model past the model
    /// limits (400), a scale-out over the quota (409).
    func actions(_ run: isolated ServedRun) throws(ARMError) -> [SessionAction] {
        var actions: [SessionAction] = []
        if let policy { actions.append(.updatePolicy(policy)) }
        if let hooks { actions.append(.setLifecycleHooks(hooks)) }
        if !changes.isEmpty {
            let attributes = run.model.merging(changes) { $1 }
            if let problem = ModelLimits.problem(attributes) {
                throw ARMError(.badRequest, code: "InvalidParameter", message: problem, target: "virtualMachineProfile")
            }
            actions.append(.updateModel(changes))
        }
        if let capacity, capacity != run.capacity {
            let present = run.instances.count { $0.lifecycle != .deleting }
            if capacity > present, let quota = run.scaleSet.quota, capacity > quota {
                throw ARMError.notAllowed("Operation could not be completed as it results in exceeding approved quota: sku.capacity \(capacity) is over the quota of \(quota) instances.")
            }
            actions.append(.scale(to: capacity))
        }
        return actions
    }
}

/// `{"instanceIds": ["0", "1"]}` of the actions on instances; nil for every instance: the list
/// absent or empty, or `["*"]` (what `az vmss restart` and its kin send when no id is given).
/// `required` names an action whose `instanceIds` Azure requires (manualupgrade, delete): there
/// an absent or empty list is 400, and `["*"]` still means every instance.
func instanceIDs(_ body: JSON?, required: String? = nil) throws(ARMError) -> [Int]? {
    let list = body?.field("instanceIds")
    if let required, list == nil || list == .array([]) {
        throw ARMError(.badRequest, code: "InvalidParameter",
                       message: "instanceIds is required: the instances to \(required), such as [\"0\", \"1\"], or [\"*\"] for every instance", target: "instanceIds")
    }
    guard let list else { return nil }
    guard case .array(let items) = list else {
        throw ARMError(.badRequest, code: "InvalidParameter", message: "instanceIds is \(list.kindName); expected a list of instance ids such as [\"0\", \"1\"]", target: "instanceIds")
    }
    if items.contains(.string("*")) {
        guard items.count == 1 else {
            throw ARMError(.badRequest, code: "InvalidParameter", message: "instanceIds holds \"*\" beside instance ids; \"*\" alone means every instance", target: "instanceIds")
        }
        return nil
    }
    var ids: [Int] = []
    for item in items {
        switch item {
        // Digits only: "+1" and "-0" are no instance ids, though Int reads them.
        case .string(let text) where !text.isEmpty && text.utf8.allSatisfy({ (48...57).contains($0) }) && Int(text) != nil: ids.append(Int(text)!)
        case .int(let n) where n >= 0: ids.append(n)
        default:
            throw ARMError(.badRequest, code: "InvalidParameter", message: "instanceIds holds \(item.serialized(pretty: false)); each is an instance id such as \"0\", or \"*\" alone for every instance", target: "instanceIds")
        }
    }
    // A repeated id is one instance, acted on once (as Azure collapses them).
    var seen = Set<Int>()
    ids = ids.filter { seen.insert($0).inserted }
    return ids.isEmpty ? nil : ids
}
