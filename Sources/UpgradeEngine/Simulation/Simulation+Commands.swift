public import Formats

/// What users do to a scale set during a scenario.
extension Simulation {
    /// Updates the model with `changes` (attribute → value) and `healthExtension` (nil: as it
    /// is). No changes, or changes that leave the model as it is, make a generic update: the
    /// version stays and, in Rolling mode, a rolling upgrade checks every instance against it
    /// (the way to restart one). Adding, changing or removing the health extension is a change
    /// applied in place; removing it is refused when the policy needs a health source, adding it
    /// beside a load-balancer probe too (one health source only).
    public func updateModel(_ changes: [String: String], healthExtension: HealthExtensionChange? = nil) throws {
        var attributes = models[models.count - 1]
        for (key, value) in changes { attributes[key] = value }
        let oldExtension = probes.plan.extensions[models.count - 1]
        var newExtension = oldExtension
        switch healthExtension {
        case .set(let settings)?:
            if definition.loadBalancerProbe {
                throw EngineError("update_model refused: Only one source of health monitoring can be used: this scale set has a load-balancer probe; the Application Health extension cannot be added beside it", .oneHealthSource)
            }
            let problems = settings.validate().problems
            if !problems.isEmpty { throw EngineError("update_model refused: " + problems.map(\.description).joined(separator: "; "), .invalid(problems)) }
            newExtension = settings
        case .remove?:
            newExtension = nil
            let problems = definition.policyProblems(policy, healthSource: definition.hasHealthSource(extension: nil))
            if !problems.isEmpty {
                throw EngineError("update_model refused: without the health extension the policy in effect is refused: " + problems.map(\.description).joined(separator: "; "),
                                  .invalid(problems))
            }
        case nil: break
        }
        let generic = attributes == models[models.count - 1] && newExtension == oldExtension
        if let problem = ModelLimits.problem(attributes) { throw EngineError("update_model refused: \(problem)", .invalid([Problem(field: "model", problem)])) }
        if !generic && models.count >= limits.modelVersions {
            reachLimit("modelVersions", limits.modelVersions, detail: "a model update")
            throw EngineError(counters.limitReached!.description, .runLimit(counters.limitReached!))
        }
        if !generic {
            appendModel(attributes, extension: newExtension)
            let moved: HealthExtensionChange? = newExtension == oldExtension ? nil : newExtension.map(HealthExtensionChange.set) ?? .remove
            emit(.modelUpdated(version: modelVersion, changes: changes.filter { models[models.count - 2][$0.key] != $0.value }, via: nil,
                               healthExtension: moved))
        } else {
            emit(.modelUpdated(version: modelVersion, changes: [:], via: nil))
        }
        switch policy.mode {
        case .rolling:
            try requestRollingUpgrade(reason: generic ? "generic model update" : "model update")
        case .automatic:
            try upgradeAllAtOnce()
        case .manual:
            let outdated = presentInstances.count { $0.modelVersion != modelVersion }
            emit(.manualModeUpdate(outdated: outdated))
        }
    }

    /// Automatic mode: every unprotected, out-of-date instance upgrades at once, with no order
    /// and no thresholds.
    private func upgradeAllAtOnce() throws {
        let targets = presentInstances.filter { !$0.protectFromScaleSetActions && !$0.isPoweredOff && $0.modelVersion != modelVersion && fleet.operations[$0.id] == nil }
        emit(.automaticUpgrade(upgrading: targets.count))
        for vm in targets { try beginOperation(.upgrade, on: vm.id, targetVersion: modelVersion, upgrade: nil) }
    }

    /// Manual upgrade of `ids` (nil: every instance, like `*`): those out of date upgrade at
    /// once. Refused whole when an id does not exist or is protected.
    public func manualUpgrade(ids: [Int]?) throws {
        let chosen = ids.map(Self.distinct) ?? presentInstances.map(\.id)
        if ids != nil { try refuseMissingOrProtected(chosen, action: "manual upgrade") }
        let targets = chosen.filter { $0 >= 0 && $0 < fleet.instances.count && fleet.instances[$0].isPresent && !fleet.instances[$0].protectFromScaleSetActions && !fleet.instances[$0].isPoweredOff }
            .filter { fleet.instances[$0].modelVersion != modelVersion && fleet.operations[$0] == nil }
        emit(.manualUpgrade(ids: ids == nil ? nil : chosen, upgrading: targets.count, version: modelVersion))
        for id in targets { try beginOperation(.upgrade, on: id, targetVersion: modelVersion, upgrade: nil) }
    }

    /// Reimages `ids` (nil: every instance, like `*`): a disruptive operation on the model each
    /// already runs (it restarts at Initializing). Refused whole when an id does not exist or is
    /// protected, with the text a manual upgrade gets; instances busy with another operation are
    /// left as they are. `onInstance`: the call is made on the one instance itself (Azure's
    /// per-VM reimage), which protection from scale set actions does not block.
    public func reimage(ids: [Int]?, onInstance: Bool = false) throws {
        let chosen = ids.map(Self.distinct) ?? presentInstances.map(\.id)
        if ids != nil { try refuseMissingOrProtected(chosen, action: "reimage", onInstance: onInstance) }
        let targets = chosen.filter { fleet.instances[$0].isPresent && (onInstance || !fleet.instances[$0].protectFromScaleSetActions) && !fleet.instances[$0].isPoweredOff && fleet.operations[$0] == nil }
        emit(.reimage(ids: ids == nil ? nil : chosen, reimaging: targets.count))
        for id in targets { try beginOperation(.reimage, on: id, targetVersion: fleet.instances[id].modelVersion, upgrade: nil) }
    }

    /// `ids` with each id once, where it first appears: an instance named twice in a list of
    /// instance ids is acted on once, as Azure runs one operation per instance of the list
    /// (`reimage { 1, 1, 1 }` reimages instance 1 once).
    static func distinct(_ ids: [Int]) -> [Int] {
        var seen = Set<Int>()
        return ids.filter { seen.insert($0).inserted }
    }

    /// Refuses an action on `ids` naming an instance that does not exist, or one protected from
    /// scale set actions (Azure's text for a manual upgrade, ids ascending) unless the call is
    /// made `onInstance` (a per-VM call, which that protection does not block).
    func refuseMissingOrProtected(_ ids: [Int], action: String, onInstance: Bool = false) throws(EngineError) {
        let missing = ids.filter { $0 < 0 || $0 >= fleet.instances.count || !fleet.instances[$0].isPresent }
        if !missing.isEmpty {
            throw EngineError("\(action) refused: instance(s) \(missing.map(String.init).joined(separator: ", ")) do not exist", .noSuchInstances(missing))
        }
        let protected = Set(ids.filter { fleet.instances[$0].protectFromScaleSetActions }).sorted()
        if !protected.isEmpty && !onInstance {
            throw EngineError("InstanceIds may not contain instances that are protected from scale set actions. The following instance ids are protected from scale set action: \(protected.map(String.init).joined(separator: ", ")).",
                              .protected(protected))
        }
    }

    /// Scales to `count` instances: new ones get the latest model; scale-in removes the
    /// highest ids first, sparing `protectFromScaleIn` and busy instances.
    public func scale(to count: Int) throws {
        guard (0...100_000).contains(count) else { throw EngineError("scale(\(count)): allowed 0–100000 instances", .capacity(count, allowed: 0...100_000)) }
        let present = fleet.instances.filter { $0.lifecycle != .deleted && $0.lifecycle != .deleting }
        // A refused scale-out leaves the capacity as it was: the model never took the count.
        if count > present.count, let quota = definition.quota, count > quota {
            throw EngineError("scale(\(count)) refused: over the quota of \(quota)", .overQuota(count: count, quota: quota))
        }
        capacity = count
        if count > present.count {
            emit(.scaled(from: present.count, to: count, deleted: [], short: false))
            for _ in present.count..<count {
                let id = addInstance(lifecycle: .creating, version: modelVersion, place: nil)
                try beginOperation(.create, on: id, targetVersion: modelVersion, upgrade: nil)
            }
        } else if count < present.count {
            let removable = present.filter { !$0.protectFromScaleIn && !$0.protectFromScaleSetActions && fleet.operations[$0.id] == nil }
                .map(\.id).sorted(by: >)
            let victims = Array(removable.prefix(present.count - count))
            emit(.scaled(from: present.count, to: count, deleted: victims.sorted(), short: victims.count < present.count - count))
            for id in victims { try beginOperation(.delete, on: id, targetVersion: fleet.instances[id].modelVersion, upgrade: nil) }
        }
    }

    /// Handles, in order and as `run` does, what is scheduled up to `time` while work is left and
    /// `stop` is not called, without ending the run: a run stepped this way and then `run` to its
    /// end gives the same events as `run` alone. With `whileWorking` false it also handles what
    /// is due when no work is left (probes of an idle scale set), as a scheduled action at `time`
    /// would have made `run` do, and the clock reaches `time`. Returns whether work is left.
    @discardableResult
    public func proceed(through time: Millis, whileWorking: Bool = true) throws -> Bool {
        clock.stopped = false
        try handle(through: time, whileWorking: whileWorking, stoppable: true)
        if !whileWorking, !clock.stopped, time > now { advanceClock(to: time) }
        return hasWork
    }

    /// When `run` would handle its next scheduled thing; nil when no work is left (the run would end).
    public var nextEventTime: Millis? { hasWork ? clock.queue.nextTime : nil }

    /// Processes everything scheduled up to `time` whether or not work is left or `stop` was
    /// called (used to let instances settle before planning); the run limits hold as in `run`.
    public func advance(to time: Millis) throws {
        try handle(through: time, whileWorking: false, stoppable: false)
        advanceClock(to: max(now, time))
    }
}
