import Formats

/// The batch cycle of a rolling upgrade: check, start, wait, finish, restore, judge. Every
/// function moves `state` and adds the steps it decides to `steps`, in order.
extension RollingUpgrade {
    mutating func startNextBatch(_ fleet: some FleetView, _ steps: inout [RollingStep]) {
        guard track.code == .rollingForward else { return }
        state = .idle
        let policy = terms.policy, capacity = terms.capacity, target = terms.targetVersion
        while true {
            guard !queue.isEmpty else { return complete(fleet, &steps) }
            let unhealthy = fleet.unhealthyPresent
            // With a batch hook the check runs once the event completes, on the instances that go.
            let hook = terms.os?.batchHook
            if hook == nil, let error = preBatchCheck(unhealthy, fleet, &steps) { return fault(error, fleet, &steps) }
            let size = Planner.batchSize(capacity: capacity, percent: policy.maxBatchInstancePercent)
            // Only a batch that takes instances down shrinks to the unhealthy budget: a MaxSurge
            // batch creates its new instances first, an in-place change stops nothing (SPEC §4.3).
            let takesDown = !(policy.maxSurge && !tally.surgeFellBack) && fleet.upgradeIsDisruptive(to: target)
            let room = takesDown
                ? Planner.unhealthyAllowance(capacity: capacity, percent: policy.maxUnhealthyInstancePercent) - unhealthy.count
                : Int.max
            guard let (planned, shrunk) = queue.next(size: size, room: room, isUnhealthy: { fleet.health(of: $0.id).countsAsUnhealthy }) else {
                return complete(fleet, &steps)
            }
            // Instances deleted, upgraded by hand, busy, stopped or deallocated since the upgrade
            // started drop out (an instance neither busy nor gone runs unless it was stopped).
            let ids = planned.instances.map(\.id).filter {
                fleet.isRunning($0) && fleet.modelVersion(of: $0) != target && !fleet.isBusy($0)
            }
            guard !ids.isEmpty else { continue }
            if let hook {
                state = .awaitingHook(PlannedBatch(ids: ids, shrunk: shrunk, phase: planned.phase))
                steps.append(.raiseBatchHook(ids, hook: hook, batch: batchNumber + 1, phase: planned.phase))
                return
            }
            return launchBatch(ids, shrunk: shrunk, phase: planned.phase, fleet, &steps)
        }
    }

    /// The pre-batch check on the instances unhealthy now, as an event; the error when it fails.
    private func preBatchCheck(_ unhealthy: [Int], _ fleet: some FleetView, _ steps: inout [RollingStep]) -> UpgradeError? {
        let verdict = Thresholds.beforeBatch(unhealthy: unhealthy, capacity: terms.capacity,
                                             thresholdPercent: terms.policy.maxUnhealthyInstancePercent,
                                             firstBatch: batchNumber == 0, scaleSet: terms.scaleSet, wireID: fleet.wireID(of:))
        steps.append(.emit(.preBatchCheck(verdict.check), batch: batchNumber + 1))
        return verdict.error
    }

    /// The batch's lifecycle hook event completed (SPEC §6b): rejected instances stay on their
    /// model, skipped for this upgrade; the pre-batch check runs; the approved ones start as the
    /// batch, or the batch is passed over when none is left.
    mutating func batchHookCompleted(approved: [Int], rejected: [Int], waited: Millis, _ fleet: some FleetView) -> [RollingStep] {
        handle { run, steps in
            guard case .awaitingHook(let planned) = run.state else { return }
            run.state = .idle
            run.tally.hookRejected += rejected
            run.tally.hookWaits.append(waited)
            guard run.track.code == .rollingForward else { return }
            let target = run.terms.targetVersion
            let ids = planned.ids.filter { id in
                approved.contains(id) && fleet.isPresent(id) && fleet.modelVersion(of: id) != target && !fleet.isBusy(id)
            }
            guard !ids.isEmpty else { return run.startNextBatch(fleet, &steps) }
            if let error = run.preBatchCheck(fleet.unhealthyPresent, fleet, &steps) { return run.fault(error, fleet, &steps) }
            run.launchBatch(ids, shrunk: planned.shrunk, phase: planned.phase, fleet, &steps)
        }
    }

    /// Starts batch `ids` (the next number): in place, or creating new instances under MaxSurge.
    private mutating func launchBatch(_ ids: [Int], shrunk: Bool, phase: Int?, _ fleet: some FleetView, _ steps: inout [RollingStep]) {
        let policy = terms.policy, target = terms.targetVersion
        batchNumber += 1
        batchPhase = phase
        steps.append(.emit(.batchStarted(instances: ids, shrunk: shrunk), batch: batchNumber, phase: batchPhase))
        if policy.maxSurge && !tally.surgeFellBack {
            let existing = fleet.existingCount
            if let quota = terms.quota, existing + ids.count > quota {
                tally.surgeFellBack = true
                steps.append(.emit(.surgeFallback(needed: existing + ids.count, quota: quota), batch: batchNumber, phase: batchPhase))
            } else {
                return startSurgeBatch(ids, fleet, &steps)
            }
        }
        for id in ids {
            tally.previousVersion[id] = fleet.modelVersion(of: id)
            inFlight.insert(id)
            watching.insert(id)
        }
        state = .upgrading(Batch(ids: ids), Deferrals())
        // Instances told their OS upgrade is coming answer first (`deferralsAnswered`).
        if terms.os?.deferral == true {
            steps.append(.askDeferrals(ids))
        } else {
            steps += ids.map { .begin(.upgrade, id: $0, targetVersion: target) }
        }
    }

    private mutating func startSurgeBatch(_ ids: [Int], _ fleet: some FleetView, _ steps: inout [RollingStep]) {
        var created: [Int: Int] = [:]
        var next = fleet.nextInstanceID
        for old in ids {
            let new = next
            next += 1
            created[old] = new
            inFlight.insert(new)
            watching.insert(new)
            steps.append(.addSurgeInstance(replacing: old, expectedID: new, version: terms.targetVersion, batch: batchNumber, phase: batchPhase))
            steps.append(.begin(.create, id: new, targetVersion: terms.targetVersion))
        }
        state = .surgeCreating(Batch(ids: ids), created: created)
    }

    /// Moves the current batch on once its operations have ended and its instances have left
    /// Initializing (after a cancel, without waiting for health).
    mutating func advance(_ fleet: some FleetView, _ steps: inout [RollingStep]) {
        guard inFlight.isEmpty else { return }
        let waitForHealth = track.code == .rollingForward
        switch state {
        case .upgrading(var batch, let deferrals):
            if waitForHealth {
                state = .idle  // the cursor moves in the only copy
                let waiting = batchAwaitsHealth(&batch, fleet)
                state = .upgrading(batch, deferrals)
                if waiting { return }
            }
            finishBatch(batch, surgeFailed: nil, fleet, &steps)
        case .surgeCreating(let batch, let created):
            let alive = created.values.filter { !batch.operationFailed.contains($0) && fleet.isRunning($0) }
            let deadlines = tally.healthDeadline
            if waitForHealth && alive.contains(where: { Self.awaitsHealth($0, deadlines, fleet) }) { return }
            var failed: InstanceIDSet = []
            for old in batch.ids {
                guard let new = created[old] else { continue }
                let ok = !batch.operationFailed.contains(new) && fleet.isRunning(new) && fleet.health(of: new) == .healthy
                let doomed = ok ? old : new
                if !ok { failed.insert(old) }
                if ok { tally.replacement[old] = new }
                guard !fleet.isDeleted(doomed) else { continue }
                inFlight.insert(doomed)
                steps.append(.begin(.delete, id: doomed, targetVersion: fleet.modelVersion(of: doomed)))
            }
            state = .surgeDeleting(batch, created: created, failed: failed)
            if inFlight.isEmpty { finishBatch(batch, surgeFailed: failed, fleet, &steps) }
        case .surgeDeleting(let batch, _, let failed):
            finishBatch(batch, surgeFailed: failed, fleet, &steps)
        case .idle, .restoring, .awaitingHook, .pausing, .done:
            return
        }
    }

    /// Whether some instance of `batch` still waits for its health. Outside automatic OS
    /// upgrades an instance that has left Initializing stays out of it for the rest of the batch,
    /// so the scan resumes where the last one stopped: a batch costs one pass, not one per health
    /// change.
    private func batchAwaitsHealth(_ batch: inout Batch, _ fleet: some FleetView) -> Bool {
        let resumable = tally.healthDeadline.isEmpty
        var i = resumable ? batch.waitCursor : 0
        while i < batch.ids.count {
            let id = batch.ids[i]
            if Self.awaitsHealth(id, tally.healthDeadline, fleet) && !batch.operationFailed.contains(id) {
                if resumable { batch.waitCursor = i }
                return true
            }
            i += 1
        }
        return false
    }

    /// Whether the batch still waits for instance `id`'s health: until it leaves Initializing or,
    /// in an automatic OS upgrade, until it is Healthy or its time to become Healthy runs out.
    private static func awaitsHealth(_ id: Int, _ deadlines: [Int: Millis], _ fleet: some FleetView) -> Bool {
        // Only automatic OS upgrades keep deadlines: other runs skip the lookup (it is hashed,
        // and a batch's wait is checked for every health change of its instances).
        if !deadlines.isEmpty, let deadline = deadlines[id] {
            return fleet.health(of: id) != .healthy && fleet.now < deadline
        }
        return fleet.health(of: id) == .initializing
    }

    /// Health that counts for candidate `id`: its own, or its MaxSurge replacement's (in
    /// `replacement`). Static, and given the map: a closure calling a method of the upgrade
    /// from a mutating one copies the whole upgrade for each call.
    private static func countsAsBad(_ id: Int, _ replacement: [Int: Int], _ fleet: some FleetView) -> Bool {
        fleet.health(of: replacement[id] ?? id).countsAsUnhealthy
    }

    /// Automatic OS upgrades judge each instance once, when its five minutes end: whatever is
    /// not Healthy then (Initializing included) failed in its own batch, and nothing is counted
    /// against a later batch (SPEC §6).
    private var judgedAtDeadline: Bool { terms.os?.healthWait != nil }

    /// Whether candidate `id` of `batch`, being finished, counts as failed (`surgeFailed`: the
    /// candidates of a MaxSurge batch whose new instance did not become Healthy).
    private static func failedInBatch(_ id: Int, _ batch: Batch, surgeFailed: InstanceIDSet?, rollingForward: Bool, judgedAtDeadline: Bool,
                                      _ replacement: [Int: Int], _ fleet: some FleetView) -> Bool {
        if let surgeFailed { return surgeFailed.contains(id) }
        if batch.operationFailed.contains(id) { return true }
        // After a cancel, instances count by their own operation's outcome.
        guard rollingForward else { return false }
        return judgedAtDeadline ? fleet.health(of: replacement[id] ?? id) != .healthy : countsAsBad(id, replacement, fleet)
    }

    private mutating func finishBatch(_ batch: Batch, surgeFailed: InstanceIDSet?, _ fleet: some FleetView, _ steps: inout [RollingStep]) {
        watching = []
        var good = 0
        let rollingForward = track.code == .rollingForward, judgedAtDeadline = judgedAtDeadline, replacement = tally.replacement
        for id in batch.ids {
            if Self.failedInBatch(id, batch, surgeFailed: surgeFailed, rollingForward: rollingForward, judgedAtDeadline: judgedAtDeadline,
                                  replacement, fleet) {
                tally.failed.append(id)
            } else {
                tally.successful.insert(id)
                good += 1
            }
        }
        let finished = FinishedBatch(ids: InstanceIDSet(batch.ids), operationFailed: batch.operationFailed)
        state = .idle
        steps.append(.emit(.batchFinished(healthy: good, count: batch.ids.count), batch: batchNumber, phase: batchPhase))
        if track.code == .rollingForward, restoreFailed(finished, fleet, &steps) { return }
        judgeBatch(finished, fleet, &steps)
    }

    /// Automatic OS upgrades: every instance of the finished batch that was upgraded but did not
    /// become Healthy in time goes back to its previous image, unless `disableAutomaticRollback`.
    /// True when restores started (the batch is judged once they end).
    private mutating func restoreFailed(_ finished: FinishedBatch, _ fleet: some FleetView, _ steps: inout [RollingStep]) -> Bool {
        guard terms.os?.restoreFailed == true else { return false }
        let targets = tally.failed.filter {
            finished.ids.contains($0) && !finished.operationFailed.contains($0) && fleet.isPresent($0) && !fleet.isBusy($0)
                && fleet.modelVersion(of: $0) == terms.targetVersion && tally.previousVersion[$0] != nil
        }
        guard !targets.isEmpty else { return false }
        for id in targets {
            let previous = tally.previousVersion[id]!
            tally.rollingBack.insert(id)
            inFlight.insert(id)
            steps.append(.emit(.imageRestoreStarted(name: fleet.name(of: id), toVersion: previous), instance: id, batch: batchNumber,
                               phase: batchPhase))
            steps.append(.begin(.rollback, id: id, targetVersion: previous))
        }
        state = .restoring(finished)
        return true
    }

    /// After a batch (and any restore): the post-batch check, then the next batch, a pause, the
    /// end, or a fault.
    mutating func judgeBatch(_ finished: FinishedBatch, _ fleet: some FleetView, _ steps: inout [RollingStep]) {
        state = .idle
        guard track.code == .rollingForward else {
            state = .done
            if track.code == .cancelled { track.endTime = fleet.now }
            steps.append(.settled)
            return
        }
        let policy = terms.policy
        let replacement = tally.replacement
        let badNow = judgedAtDeadline ? tally.failed : tally.failed + tally.successful.filter { Self.countsAsBad($0, replacement, fleet) }
        let verdict = Thresholds.afterBatch(counted: badNow, failedToUpgrade: finished.operationFailed, lastBatch: finished.ids,
                                            capacity: terms.capacity, thresholdPercent: policy.maxUnhealthyUpgradedInstancePercent,
                                            scaleSet: terms.scaleSet, wireID: fleet.wireID(of:))
        steps.append(.emit(.postBatchCheck(verdict.check), batch: batchNumber))
        if let error = verdict.error {
            fault(error, fleet, &steps)
            if policy.rollbackFailedInstancesOnPolicyBreach { rollBack(badNow, fleet, &steps) }
            return
        }
        if queue.isEmpty { return complete(fleet, &steps) }
        if policy.pauseTimeBetweenBatches > 0 {
            state = .pausing
            steps.append(.emit(.pause(duration: policy.pauseTimeBetweenBatches), batch: batchNumber))
            steps.append(.schedule(.resume, at: fleet.now + policy.pauseTimeBetweenBatches))
        } else {
            startNextBatch(fleet, &steps)
        }
    }

    /// Returns each failed or unhealthy upgraded instance to the model it ran before; the status
    /// reads RollingBack until every rollback has ended, then Faulted (SPEC §4.7).
    private mutating func rollBack(_ ids: [Int], _ fleet: some FleetView, _ steps: inout [RollingStep]) {
        let targets = ids.filter {
            tally.previousVersion[$0] != nil && fleet.isPresent($0) && !fleet.isBusy($0) && fleet.modelVersion(of: $0) == terms.targetVersion
        }
        guard !targets.isEmpty else { return }
        track.code = .rollingBack
        tally.rollingBack = InstanceIDSet(targets)
        for id in targets {
            let previous = tally.previousVersion[id]!
            steps.append(.emit(.rollbackStarted(name: fleet.name(of: id), toVersion: previous), instance: id))
            steps.append(.begin(.rollback, id: id, targetVersion: previous))
        }
    }

    private mutating func complete(_ fleet: some FleetView, _ steps: inout [RollingStep]) {
        track.code = .completed
        state = .done
        track.endTime = fleet.now
        steps.append(.emit(.upgradeCompleted(upgrade: terms.number, successful: tally.successful.count, failed: tally.failed.count)))
    }

    private mutating func fault(_ error: UpgradeError, _ fleet: some FleetView, _ steps: inout [RollingStep]) {
        track.code = .faulted
        state = .done
        track.endTime = fleet.now
        track.error = error
        steps.append(.emit(.upgradeFaulted(code: error.code, message: error.message), batch: batchNumber))
    }
}
