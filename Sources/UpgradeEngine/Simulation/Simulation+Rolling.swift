import Formats

extension Simulation {
    /// Asks for a rolling upgrade. A running one is superseded: it is cancelled, its operations
    /// in flight finish, and then the new one starts for the newest model (README: decisions).
    func requestRollingUpgrade(reason: String, os: OSUpgradeTerms? = nil) throws {
        if upgrades.outline.code == .rollingForward { try drive { $0.cancel(supersededBy: reason, at: now) } }
        upgrades.pending = UpgradeDriver.Request(reason: reason, os: os)
        try startPendingUpgradeIfReady()
    }

    func startPendingUpgradeIfReady() throws {
        guard let request = upgrades.pending else { return }
        if let run = upgrades.current, !run.isQuiet { return }
        upgrades.pending = nil
        try startRollingUpgrade(reason: request.reason, os: request.os)
    }

    private func startRollingUpgrade(reason: String, os: OSUpgradeTerms?) throws {
        noteActivity()
        upgrades.count += 1
        let inputs = try planInputs()
        // An automatic OS upgrade batches with the default policy unless told to use the scale
        // set's (SPEC §6).
        let policy = os?.usesDefaultPolicy == true ? RollingUpgradePolicy() : self.policy.rolling
        let (queue, skipped, protected) = Planner.queue(inputs, zonal: !definition.zones.isEmpty,
                                                        orchestration: definition.orchestration,
                                                        faultDomains: definition.effectiveFaultDomains,
                                                        policy: policy)
        let run = RollingUpgrade(terms: RollingTerms(number: upgrades.count, policy: policy, capacity: inputs.count, targetVersion: modelVersion,
                                                     startTime: now, scaleSet: definition.name, quota: definition.quota,
                                                     skipped: skipped, protected: protected, os: os),
                                 queue: queue)
        upgrades.start(run)
        let size = Planner.batchSize(capacity: run.capacity, percent: run.policy.maxBatchInstancePercent)
        emit(.upgradeStarted(upgrade: run.number, targetVersion: modelVersion, reason: reason, candidates: queue.pending,
                             capacity: run.capacity, batchSize: size, skipped: skipped, protected: protected))
        var phased: [PhaseCount] = []
        for group in queue.groups {
            if let i = phased.firstIndex(where: { $0.phase == group.phase }) { phased[i].count += group.members.count }
            else { phased.append(PhaseCount(phase: group.phase, count: group.members.count)) }
        }
        // Numbered phases ascending, then the unphased group (the order the upgrade takes them).
        phased.sort { ($0.phase ?? Int.max) < ($1.phase ?? Int.max) }
        emit(.metricsRead(phases: phased))
        if let observe = setup.observers.onRollingUpgradeStart {
            var plan = Planner.plan(inputs, capacity: inputs.count, zonal: !definition.zones.isEmpty, orchestration: definition.orchestration,
                                    faultDomains: definition.effectiveFaultDomains, policy: run.policy,
                                    takesDown: !run.policy.maxSurge && upgradeIsDisruptive(to: run.targetVersion))
            plan.policy = run.policy
            observe(plan)
        }
        try drive { $0.begin(self) }
    }

    /// Hands an input to the latest rolling upgrade and carries out the steps it returns. The
    /// upgrade reads the fleet (`self` as a `FleetView`) while it changes, never `upgrades`.
    func drive(_ input: (inout RollingUpgrade) -> [RollingStep]) throws {
        try perform(upgrades.update(input))
    }

    /// What the simulation schedules for a wake-up of upgrade number `upgrade`.
    static func scheduled(_ timer: RollingTimer, upgrade: Int) -> Scheduled {
        switch timer {
        case .resume: return .resume(upgrade: Int32(upgrade))
        case .settle: return .settle(upgrade: Int32(upgrade))
        case .approve(let id): return .approve(upgrade: Int32(upgrade), id: Int32(id))
        }
    }

    /// Carries out what the rolling upgrade asked for, in order.
    func perform(_ steps: [RollingStep]) throws {
        for step in steps {
            switch step {
            case .emit(let payload, let instance, let batch, let phase):
                emit(payload, instance: instance, batch: batch, phase: phase)
            case .begin(let kind, let id, let version):
                try beginOperation(kind, on: id, targetVersion: version, upgrade: upgrades.outline.number)
            case .addSurgeInstance(let old, let expected, let version, let batch, let phase):
                let vm = fleet.instances[old]
                let new = addInstance(lifecycle: .creating, version: version, place: (vm.zone, vm.faultDomain, vm.updateDomain))
                precondition(new == expected, "instance ids are handed out in order")
                fleet.instances[new].replaces = old
                emit(.surgeCreated(name: fleet.instances[new].name, replaces: old, replacesName: vm.name, version: version),
                     instance: new, batch: batch, phase: phase)
            case .schedule(let timer, let time):
                guard let number = upgrades.outline.number else { continue }
                clock.queue.schedule(Self.scheduled(timer, upgrade: number), at: time)
            case .settled:
                try startPendingUpgradeIfReady()
            case .askDeferrals(let ids):
                // The instances' answers, asked in batch order; a behaviour may run for each.
                let answers = try ids.map { id in (id: id, answer: try setup.behaviours.deferrals?.deferral(of: fleet.instances[id], at: now) ?? .untilApproved) }
                try drive { $0.deferralsAnswered(answers, self) }
            case .raiseBatchHook(let ids, let hook, let batch, let phase):
                try raiseHook(hook, targets: ids, upgrade: upgrades.outline.number, batch: batch, phase: phase)
            case .abandonHook:
                if let index = hooks.active, hooks.events[index].upgrade != nil { try completeActiveHook(abandoned: true) }
            }
        }
    }

    /// Cancels the running rolling upgrade: operations already started finish, no new batch
    /// starts. Throws when none is running.
    public func cancelRollingUpgrade() throws {
        guard upgrades.outline.code == .rollingForward else {
            throw EngineError("There is no ongoing Rolling Upgrade to cancel.", .nothingToCancel)
        }
        try drive { $0.cancel(supersededBy: nil, at: now) }
    }

    func statusOf(_ run: RollingUpgrade) -> RollingUpgradeStatus { run.status(location: definition.location) }
}

/// The scale set as the rolling upgrade reads it.
extension Simulation: FleetView {
    /// The committed health; Unknown for an instance whose model has no health source while
    /// the scale set's others have one (it has no health state of its own, SPEC §6).
    func health(of id: Int) -> HealthState {
        guard probes.plan.uniformProbing || reportsHealth(id) else { return .unknown }
        return fleet.instances[id].health.state
    }
    func isPresent(_ id: Int) -> Bool { fleet.instances[id].isPresent }
    func isRunning(_ id: Int) -> Bool { fleet.instances[id].lifecycle == .running }
    func isDeleted(_ id: Int) -> Bool { fleet.instances[id].lifecycle == .deleted }
    func modelVersion(of id: Int) -> Int { fleet.instances[id].modelVersion }
    func isBusy(_ id: Int) -> Bool { fleet.operations[id] != nil }
    func name(of id: Int) -> String { fleet.instances[id].name }
    func wireID(of id: Int) -> String { definition.orchestration == .flexible ? fleet.instances[id].name : String(id) }
    /// Unhealthy or Unknown, or down from an upgrade: under a disruptive upgrade or rollback
    /// now, or booting after one (SPEC §4.5: instances "unhealthy, either as a result of being
    /// upgraded, or by being found in an unhealthy state"), whoever started it.
    var unhealthyPresent: [Int] {
        // Fields read in place: binding an element copies the instance (and retains its strings).
        fleet.instances.indices.filter { id in
            guard fleet.instances[id].isPresent else { return false }
            if health(of: id).countsAsUnhealthy || fleet.instances[id].isBootingAfterUpgrade { return true }
            guard let op = fleet.operations[id] else { return false }
            return op.kind != .create && op.kind != .delete && op.disruptive
        }
    }
    var existingCount: Int { fleet.instances.count { $0.lifecycle != .deleted } }
    var nextInstanceID: Int { fleet.instances.count }

    func upgradeIsDisruptive(to version: Int) -> Bool {
        let target = models[version - 1]
        let versions = Set(fleet.instances.indices.lazy.filter { self.instances[$0].isPresent && self.instances[$0].modelVersion != version }
            .map { self.instances[$0].modelVersion })
        return versions.contains { ChangeRules.isDisruptive(from: models[$0 - 1], to: target) }
    }
}
