import Formats

/// Automatic instance repairs on the upgrade's clock (SPEC §6b). An unprotected instance that is
/// Unhealthy or Unknown is repaired once the grace period has passed since each of: it became so,
/// its own last state change, and the scale set's last state-changing operation (any operation's
/// end, a rolling upgrade's included; none may be running), so repairs wait while an upgrade keeps
/// the scale set changing. One batch at a time: at most 5% of the capacity, one instance below 20.
/// Replace creates the new instance on the latest model. An instance line repaired
/// `attemptsBeforeSuspension` times and unhealthy again suspends the service.
extension Simulation {
    /// The repair service's state.
    struct RepairState {
        /// When each present instance became Unhealthy or Unknown (absent: it is neither).
        var unhealthySince: [Int: Millis] = [:]
        /// When the last operation on the scale set ended (0: the fleet's creation).
        var lastStateChange: Millis = 0
        /// The repairs running: instance → the action (Replace: the old instance's delete).
        var running: [Int: RepairAction] = [:]
        /// Repairs so far per instance line (a replacement inherits its predecessor's count).
        var attempts: [Int: Int] = [:]
        /// When the next check is due; nil: none scheduled.
        var checkAt: Millis?
        /// The service suspended itself: no more repairs.
        var suspended = false
        /// Repaired instances (or their replacements) whose health has not changed since: the run
        /// goes on until it does, so a repair's outcome is seen.
        var settling: Set<Int> = []
    }

    /// `Running` or `Suspended` (`orchestrationServices` of the instance view); nil: repairs off.
    public var repairServiceState: String? {
        guard definition.automaticRepairs?.enabled == true else { return nil }
        return repairs.suspended ? "Suspended" : "Running"
    }

    private var repairPolicy: AutomaticRepairsPolicy? {
        guard let policy = definition.automaticRepairs, policy.enabled, !repairs.suspended else { return nil }
        return policy
    }

    /// Instance `id`'s committed health changed: note when it became unhealthy, and look again.
    func repairsSawHealth(_ id: Int) {
        guard repairPolicy != nil else { return }
        repairs.settling.remove(id)
        if fleet.instances[id].health.state.countsAsUnhealthy {
            if repairs.unhealthySince[id] == nil { repairs.unhealthySince[id] = now }
        } else {
            repairs.unhealthySince[id] = nil
        }
        scheduleRepairCheck()
    }

    /// An operation ended: the grace period restarts; a repair's end lets the next batch come.
    func repairsSawOperationEnd(_ id: Int) {
        guard definition.automaticRepairs?.enabled == true else { return }
        repairs.lastStateChange = now
        repairs.running[id] = nil
        if fleet.instances[id].lifecycle == .deleted {
            repairs.unhealthySince[id] = nil
            repairs.settling.remove(id)
        }
        scheduleRepairCheck()
    }

    /// When instance `id` may be repaired (nil: it may not: healthy, protected, gone or busy).
    private func repairableAt(_ id: Int, grace: Millis) -> Millis? {
        guard let since = repairs.unhealthySince[id], fleet.instances[id].lifecycle == .running,
              fleet.instances[id].health.state.countsAsUnhealthy,
              !fleet.instances[id].protectFromScaleSetActions, fleet.operations[id] == nil else { return nil }
        let own = fleet.instances[id].lastOperation?.endedAt ?? 0
        return max(since, own, repairs.lastStateChange) + grace
    }

    /// Schedules a check at the earliest time some instance may be repaired, if it is sooner
    /// than the one scheduled.
    func scheduleRepairCheck() {
        guard let policy = repairPolicy, repairs.running.isEmpty else { return }
        let next = repairs.unhealthySince.keys.compactMap { repairableAt($0, grace: policy.gracePeriod) }.min()
        guard let next else { return }
        let at = max(next, now)
        if let due = repairs.checkAt, due <= at { return }
        repairs.checkAt = at
        clock.queue.schedule(.repairCheck, at: at)
    }

    /// A check is due: with no operation running on the scale set, repair the instances whose
    /// time has come, at most one batch, lowest ids first.
    func repairCheckDue() throws {
        guard repairs.checkAt == now else { return }
        repairs.checkAt = nil
        guard let policy = repairPolicy, repairs.running.isEmpty else { return }
        guard fleet.operations.isEmpty else { return }  // the next operation's end looks again
        let due = repairs.unhealthySince.keys.filter { (repairableAt($0, grace: policy.gracePeriod) ?? .max) <= now }.sorted()
        guard !due.isEmpty else { return scheduleRepairCheck() }
        if let worn = due.first(where: { repairs.attempts[$0, default: 0] >= AutomaticRepairsPolicy.attemptsBeforeSuspension }) {
            repairs.suspended = true
            emit(.repairsSuspended(attempts: repairs.attempts[worn, default: 0]), instance: worn)
            return
        }
        for id in due.prefix(AutomaticRepairsPolicy.batchSize(capacity: capacity)) { try repair(id, policy.repairAction) }
    }

    private func repair(_ id: Int, _ action: RepairAction) throws {
        repairs.unhealthySince[id] = nil
        let attempts = repairs.attempts[id, default: 0] + 1
        repairs.running[id] = action
        switch action {
        case .replace:
            let vm = fleet.instances[id]
            let new = addInstance(lifecycle: .creating, version: modelVersion, place: (vm.zone, vm.faultDomain, vm.updateDomain))
            repairs.attempts[new] = attempts
            repairs.running[new] = action
            repairs.settling.insert(new)
            emit(.repairStarted(action: action, name: vm.name, replacement: new), instance: id)
            try beginOperation(.delete, on: id, targetVersion: vm.modelVersion, upgrade: nil)
            try beginOperation(.create, on: new, targetVersion: modelVersion, upgrade: nil)
        case .restart, .reimage:
            repairs.attempts[id] = attempts
            repairs.settling.insert(id)
            emit(.repairStarted(action: action, name: fleet.instances[id].name, replacement: nil), instance: id)
            try beginOperation(.reimage, on: id, targetVersion: fleet.instances[id].modelVersion, upgrade: nil)
        }
    }
}
