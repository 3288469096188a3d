import AzureWire

/// One rolling upgrade in progress or finished (SPEC §4, §5).
final class RollingUpgradeRun {
    /// `restoring`: an automatic OS upgrade returns the batch's failed instances to their
    /// previous image before it judges the batch.
    enum Stage { case idle, upgrading, surgeCreating, surgeDeleting, restoring, pausing, done }

    let number: Int
    let policy: RollingUpgradePolicy
    /// Instances when the upgrade started: the denominator of every threshold.
    let capacity: Int
    let targetVersion: Int
    let startTime: Millis
    var code: RunningCode = .rollingForward
    var lastAction = "Start"
    var lastActionTime: Millis
    var error: UpgradeError?
    var queue: BatchQueue
    let skipped: [Int]
    let protected: [Int]

    var stage = Stage.idle
    var batchNumber = 0
    var phase: Int?
    /// The candidates of the current batch (the old instances, under MaxSurge).
    var batch: [Int] = []
    /// Old id → new id for the current MaxSurge batch.
    var surge: [Int: Int] = [:]
    /// A MaxSurge batch met the quota: this batch and every later one of this upgrade run in
    /// place (SPEC §5).
    var surgeFellBack = false
    /// Instances rolling back to their previous model after a breach (status RollingBack meanwhile).
    var rollingBack: Set<Int> = []
    /// Instances whose rollback failed: they stay failed on the new model.
    var rollbackFailed: [Int] = []
    var surgeFailed: Set<Int> = []
    var inFlight: Set<Int> = []
    /// Instances whose health change may end the current batch's wait.
    var watching: Set<Int> = []
    var opFailed: Set<Int> = []
    /// The model each upgraded instance ran before, for rollback.
    var previousVersion: [Int: Int] = [:]
    var successful: Set<Int> = []
    var failed: [Int] = []
    /// For a MaxSurge candidate, the new instance whose health now counts for it.
    var replacement: [Int: Int] = [:]
    /// Set for an OS image upgrade (automatic or on demand).
    let os: OSUpgradeTerms?
    /// Automatic OS upgrades: when each upgraded instance's time to become Healthy runs out (ms).
    var healthDeadline: [Int: Millis] = [:]
    /// Where the scan for instances still awaiting health resumes (`batchAwaitsHealth`).
    var waitCursor = 0
    /// Instances of the current batch deferring their OS upgrade until approved.
    var deferred: Set<Int> = []
    /// Those of `deferred` that only an approve action can release.
    var untilApproved: Set<Int> = []
    /// Instances a cancel took out of their batch before they started: pending again.
    var returnedToPending = 0
    /// Instances rolled back (or restored to their previous image) successfully.
    var rolledBack = 0
    /// When the upgrade reached its final code (ms); nil while it runs.
    var endTime: Millis?

    init(number: Int, policy: RollingUpgradePolicy, capacity: Int, targetVersion: Int, startTime: Millis,
         queue: BatchQueue, skipped: [Int], protected: [Int], os: OSUpgradeTerms?) {
        self.os = os
        self.number = number
        self.policy = policy
        self.capacity = capacity
        self.targetVersion = targetVersion
        self.startTime = startTime
        self.lastActionTime = startTime
        self.queue = queue
        self.skipped = skipped
        self.protected = protected
    }

    /// Instances not yet reached: still queued, or taken back out of a cancelled batch.
    var pendingCount: Int { queue.pending + returnedToPending }

    var inProgressCount: Int {
        switch stage {
        case .upgrading, .surgeCreating, .surgeDeleting: return batch.count
        default: return 0
        }
    }
}

extension Simulation {
    /// Asks for a rolling upgrade. A running one is superseded: it is cancelled, its operations
    /// in flight finish, and then the new one starts for the newest model (README: decisions).
    func requestRollingUpgrade(reason: String, os: OSUpgradeTerms? = nil) throws {
        if let run = rolling, run.code == .rollingForward { cancel(run, supersededBy: reason) }
        pendingReason = reason
        pendingOS = os
        startPending = true
        try startPendingUpgradeIfReady()
    }

    func startPendingUpgradeIfReady() throws {
        guard startPending else { return }
        if let run = rolling, !run.inFlight.isEmpty { return }
        startPending = false
        try startRollingUpgrade(reason: pendingReason, os: pendingOS)
    }

    private func startRollingUpgrade(reason: String, os: OSUpgradeTerms?) throws {
        noteActivity()
        upgradeCount += 1
        let inputs = try planInputs()
        // An automatic OS upgrade batches with the default policy unless told to use the scale
        // set's (SPEC §6).
        let policy = os?.usesDefaultPolicy == true ? RollingUpgradePolicy() : definition.policy.rolling
        let (queue, skipped, protected) = Planner.queue(inputs, zonal: !definition.zones.isEmpty,
                                                        orchestration: definition.orchestration,
                                                        faultDomains: definition.effectiveFaultDomains,
                                                        policy: policy)
        let run = RollingUpgradeRun(number: upgradeCount, policy: policy, capacity: inputs.count,
                                    targetVersion: modelVersion, startTime: now, queue: queue, skipped: skipped,
                                    protected: protected, os: os)
        rolling = run
        if os != nil { osUpgrades.append(run) }
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
        onRollingUpgradeStart?(Planner.plan(inputs, capacity: inputs.count, zonal: !definition.zones.isEmpty,
                                            orchestration: definition.orchestration,
                                            faultDomains: definition.effectiveFaultDomains, policy: run.policy,
                                            takesDown: !run.policy.maxSurge && upgradeIsDisruptive(run)))
        try startNextBatch(run)
    }

    private func unhealthyPresent() -> [Int] {
        presentInstances.filter { $0.health.state.countsAsUnhealthy }.map(\.id)
    }

    func startNextBatch(_ run: RollingUpgradeRun) throws {
        guard run.code == .rollingForward else { return }
        run.stage = .idle
        while true {
            guard !run.queue.isEmpty else { return complete(run) }
            let unhealthy = unhealthyPresent()
            let verdict = Thresholds.beforeBatch(unhealthy: unhealthy, capacity: run.capacity,
                                                 thresholdPercent: run.policy.maxUnhealthyInstancePercent,
                                                 firstBatch: run.batchNumber == 0, scaleSet: definition.name)
            emit(.preBatchCheck(verdict.check), batch: run.batchNumber + 1)
            if let error = verdict.error { return fault(run, error) }
            let size = Planner.batchSize(capacity: run.capacity, percent: run.policy.maxBatchInstancePercent)
            // Only a batch that takes instances down shrinks to the unhealthy budget: a MaxSurge
            // batch creates its new instances first, an in-place change stops nothing (SPEC §4.3).
            let takesDown = !(run.policy.maxSurge && !run.surgeFellBack) && upgradeIsDisruptive(run)
            let room = takesDown
                ? Planner.unhealthyAllowance(capacity: run.capacity, percent: run.policy.maxUnhealthyInstancePercent) - unhealthy.count
                : Int.max
            guard let (planned, shrunk) = run.queue.next(size: size, room: room, isUnhealthy: { self.instances[$0].health.state.countsAsUnhealthy }) else {
                return complete(run)
            }
            // Instances deleted, upgraded by hand or busy since the upgrade started drop out.
            let ids = planned.instances.map(\.id).filter {
                instances[$0].isPresent && instances[$0].modelVersion != run.targetVersion && operations[$0] == nil
            }
            guard !ids.isEmpty else { continue }
            run.batchNumber += 1
            run.phase = planned.phase
            run.batch = ids
            run.waitCursor = 0
            run.surge = [:]
            run.surgeFailed = []
            run.opFailed = []
            emit(.batchStarted(instances: ids, shrunk: shrunk), batch: run.batchNumber, phase: run.phase)
            if run.policy.maxSurge && !run.surgeFellBack {
                let existing = instances.count { $0.lifecycle != .deleted }
                if let quota = definition.quota, existing + ids.count > quota {
                    run.surgeFellBack = true
                    emit(.surgeFallback(needed: existing + ids.count, quota: quota), batch: run.batchNumber, phase: run.phase)
                } else {
                    return try startSurgeBatch(run, ids)
                }
            }
            run.stage = .upgrading
            for id in ids {
                run.previousVersion[id] = instances[id].modelVersion
                run.inFlight.insert(id)
                run.watching.insert(id)
                if try deferUpgrade(run, id) { continue }
                try beginOperation(.upgrade, on: id, targetVersion: run.targetVersion, upgrade: run.number)
            }
            return
        }
    }

    /// Whether bringing any out-of-date instance to the upgrade's model restarts it.
    private func upgradeIsDisruptive(_ run: RollingUpgradeRun) -> Bool {
        let target = models[run.targetVersion - 1]
        let versions = Set(instances.lazy.filter { $0.isPresent && $0.modelVersion != run.targetVersion }.map(\.modelVersion))
        return versions.contains { ChangeRules.isDisruptive(from: models[$0 - 1], to: target) }
    }

    private func startSurgeBatch(_ run: RollingUpgradeRun, _ ids: [Int]) throws {
        run.stage = .surgeCreating
        for old in ids {
            let vm = instances[old]
            let new = addInstance(lifecycle: .creating, version: run.targetVersion,
                                  place: (vm.zone, vm.faultDomain, vm.updateDomain))
            run.surge[old] = new
            run.inFlight.insert(new)
            run.watching.insert(new)
            emit(.surgeCreated(name: instances[new].name, replaces: old, replacesName: vm.name, version: run.targetVersion),
                 instance: new, batch: run.batchNumber, phase: run.phase)
            try beginOperation(.create, on: new, targetVersion: run.targetVersion, upgrade: run.number)
        }
    }

    func operationFinished(_ run: RollingUpgradeRun, id: Int, succeeded: Bool, kind: OperationKind) throws {
        run.inFlight.remove(id)
        if kind == .rollback {
            run.rollingBack.remove(id)
            if succeeded { run.rolledBack += 1 } else { run.rollbackFailed.append(id) }
            guard run.rollingBack.isEmpty else { return }
            if run.code == .rollingBack {
                run.code = .faulted
                run.endTime = now
            } else if run.stage == .restoring {
                try judgeBatch(run)
            }
            return
        }
        if !succeeded { run.opFailed.insert(id) }
        if succeeded, kind == .upgrade || kind == .create, let wait = run.os?.healthWait {
            run.healthDeadline[id] = now + wait
            queue.schedule(.settle(upgrade: run.number), at: now + wait)
        }
        try advance(run)
    }

    /// Moves the current batch on once its operations have ended and its instances have left
    /// Initializing (after a cancel, without waiting for health).
    func advance(_ run: RollingUpgradeRun) throws {
        guard run.inFlight.isEmpty else { return }
        let waitForHealth = run.code == .rollingForward
        switch run.stage {
        case .upgrading:
            if waitForHealth && batchAwaitsHealth(run) { return }
            try finishBatch(run)
        case .surgeCreating:
            let created = run.surge.values.filter { !run.opFailed.contains($0) && instances[$0].lifecycle == .running }
            if waitForHealth && created.contains(where: { awaitsHealth(run, $0) }) { return }
            run.stage = .surgeDeleting
            for old in run.batch {
                guard let new = run.surge[old] else { continue }
                let ok = !run.opFailed.contains(new) && instances[new].lifecycle == .running && instances[new].health.state == .healthy
                let doomed = ok ? old : new
                if !ok { run.surgeFailed.insert(old) }
                if ok { run.replacement[old] = new }
                guard instances[doomed].lifecycle != .deleted else { continue }
                run.inFlight.insert(doomed)
                try beginOperation(.delete, on: doomed, targetVersion: instances[doomed].modelVersion, upgrade: run.number)
            }
            if run.inFlight.isEmpty { try finishBatch(run) }
        case .surgeDeleting:
            try finishBatch(run)
        case .idle, .restoring, .pausing, .done:
            return
        }
    }

    /// Whether some instance of the batch still waits for its health. Outside automatic OS
    /// upgrades an instance that has left Initializing stays out of it for the rest of the batch,
    /// so the scan resumes where the last one stopped: a batch costs one pass, not one per health
    /// change.
    private func batchAwaitsHealth(_ run: RollingUpgradeRun) -> Bool {
        let resumable = run.healthDeadline.isEmpty
        var i = resumable ? run.waitCursor : 0
        while i < run.batch.count {
            let id = run.batch[i]
            if awaitsHealth(run, id) && !run.opFailed.contains(id) {
                if resumable { run.waitCursor = i }
                return true
            }
            i += 1
        }
        return false
    }

    /// Whether the batch still waits for instance `id`'s health: until it leaves Initializing or,
    /// in an automatic OS upgrade, until it is Healthy or its time to become Healthy runs out.
    private func awaitsHealth(_ run: RollingUpgradeRun, _ id: Int) -> Bool {
        // Only automatic OS upgrades keep deadlines: other runs skip the lookup (it is hashed,
        // and a batch's wait is checked for every health change of its instances).
        if !run.healthDeadline.isEmpty, let deadline = run.healthDeadline[id] {
            return instances[id].health.state != .healthy && now < deadline
        }
        return instances[id].health.state == .initializing
    }

    /// Health that counts for candidate `id`: its own, or its MaxSurge replacement's.
    private func countsAsBad(_ run: RollingUpgradeRun, _ id: Int) -> Bool {
        instances[run.replacement[id] ?? id].health.state.countsAsUnhealthy
    }

    private func finishBatch(_ run: RollingUpgradeRun) throws {
        run.watching = []
        let surge = !run.surge.isEmpty
        var good = 0
        for id in run.batch {
            let bad = surge ? run.surgeFailed.contains(id) : (run.opFailed.contains(id) || (run.code == .rollingForward && countsAsBad(run, id)))
            if bad { run.failed.append(id) } else {
                run.successful.insert(id)
                good += 1
            }
        }
        let count = run.batch.count
        let finished = Set(run.batch)
        run.batch = []
        run.stage = .idle
        emit(.batchFinished(healthy: good, count: count), batch: run.batchNumber, phase: run.phase)
        lastFinishedBatch = finished
        if run.code == .rollingForward, try restoreFailed(run, among: finished) { return }
        try judgeBatch(run)
    }

    /// After a batch (and any restore): the post-batch check, then the next batch, a pause, the
    /// end, or a fault.
    private func judgeBatch(_ run: RollingUpgradeRun) throws {
        run.stage = .idle
        let finished = lastFinishedBatch
        guard run.code == .rollingForward else {
            run.stage = .done
            if run.code == .cancelled { run.endTime = now }
            return try startPendingUpgradeIfReady()
        }
        let badNow = run.failed + run.successful.sorted().filter { countsAsBad(run, $0) }
        let verdict = Thresholds.afterBatch(counted: badNow, failedToUpgrade: run.opFailed, lastBatch: finished, capacity: run.capacity,
                                            thresholdPercent: run.policy.maxUnhealthyUpgradedInstancePercent, scaleSet: definition.name)
        emit(.postBatchCheck(verdict.check), batch: run.batchNumber)
        if let error = verdict.error {
            fault(run, error)
            if run.policy.rollbackFailedInstancesOnPolicyBreach { try rollBack(run, badNow) }
            return
        }
        if run.queue.isEmpty { return complete(run) }
        if run.policy.pauseTimeBetweenBatches > 0 {
            run.stage = .pausing
            emit(.pause(duration: run.policy.pauseTimeBetweenBatches), batch: run.batchNumber)
            queue.schedule(.resume(upgrade: run.number), at: now + run.policy.pauseTimeBetweenBatches)
        } else {
            try startNextBatch(run)
        }
    }

    /// Returns each failed or unhealthy upgraded instance to the model it ran before; the status
    /// reads RollingBack until every rollback has ended, then Faulted (SPEC §4.7).
    private func rollBack(_ run: RollingUpgradeRun, _ ids: [Int]) throws {
        let targets = ids.filter {
            run.previousVersion[$0] != nil && instances[$0].isPresent && operations[$0] == nil && instances[$0].modelVersion == run.targetVersion
        }
        guard !targets.isEmpty else { return }
        run.code = .rollingBack
        run.rollingBack = Set(targets)
        for id in targets {
            let previous = run.previousVersion[id]!
            emit(.rollbackStarted(name: instances[id].name, toVersion: previous), instance: id)
            try beginOperation(.rollback, on: id, targetVersion: previous, upgrade: run.number)
        }
    }

    private func complete(_ run: RollingUpgradeRun) {
        run.code = .completed
        run.stage = .done
        run.endTime = now
        emit(.upgradeCompleted(upgrade: run.number, successful: run.successful.count, failed: run.failed.count))
    }

    private func fault(_ run: RollingUpgradeRun, _ error: UpgradeError) {
        run.code = .faulted
        run.stage = .done
        run.endTime = now
        run.error = error
        emit(.upgradeFaulted(code: error.code, message: error.message), batch: run.batchNumber)
    }

    /// Cancels the running rolling upgrade: operations already started finish, no new batch
    /// starts. Throws when none is running.
    public func cancelRollingUpgrade() throws(EngineError) {
        guard let run = rolling, run.code == .rollingForward else {
            throw EngineError("There is no ongoing Rolling Upgrade to cancel.")
        }
        cancel(run, supersededBy: nil)
    }

    /// The one cancel: no new batch starts; operations already started finish and count by their
    /// own outcome. `supersededBy` names the newer model update that cancels it, if one does.
    private func cancel(_ run: RollingUpgradeRun, supersededBy reason: String?) {
        run.code = .cancelled
        run.lastAction = "Cancel"
        run.lastActionTime = now
        run.endTime = now
        if run.stage == .pausing { run.stage = .done }
        emit(.upgradeCancelled(upgrade: run.number, supersededBy: reason))
        returnDeferred(run)
        // A batch waiting only for its instances' health settles now: nothing stays in
        // progress, and MaxSurge deletes the old instances whose new ones are Healthy.
        queue.schedule(.settle(upgrade: run.number), at: now)
    }

    func statusOf(_ run: RollingUpgradeRun) -> RollingUpgradeStatus {
        RollingUpgradeStatus(location: definition.location, policy: run.policy,
                             progress: Progress(successfulInstanceCount: run.successful.count, failedInstanceCount: run.failed.count,
                                                inProgressInstanceCount: run.inProgressCount, pendingInstanceCount: run.pendingCount),
                             code: run.code, lastAction: run.lastAction, lastActionTime: run.lastActionTime,
                             startTime: run.startTime, error: run.error)
    }
}
