import Formats

/// The batch cycle of a rolling upgrade: check, start, wait, finish, restore, judge. Every
/// function adds the steps it decides to `steps`, in order.
extension RollingUpgrade {
    func startNextBatch(_ fleet: any FleetView, _ steps: inout [RollingStep]) {
        guard track.code == .rollingForward else { return }
        stage = .idle
        let policy = terms.policy, capacity = terms.capacity, target = terms.targetVersion
        while true {
            guard !queue.isEmpty else { return complete(fleet, &steps) }
            let unhealthy = fleet.unhealthyPresent
            let verdict = Thresholds.beforeBatch(unhealthy: unhealthy, capacity: capacity,
                                                 thresholdPercent: policy.maxUnhealthyInstancePercent,
                                                 firstBatch: current.number == 0, scaleSet: terms.scaleSet)
            steps.append(.emit(.preBatchCheck(verdict.check), batch: current.number + 1))
            if let error = verdict.error { return fault(error, fleet, &steps) }
            let size = Planner.batchSize(capacity: capacity, percent: policy.maxBatchInstancePercent)
            // Only a batch that takes instances down shrinks to the unhealthy budget: a MaxSurge
            // batch creates its new instances first, an in-place change stops nothing (SPEC §4.3).
            let takesDown = !(policy.maxSurge && !surge.fellBack) && fleet.upgradeIsDisruptive(to: target)
            let room = takesDown
                ? Planner.unhealthyAllowance(capacity: capacity, percent: policy.maxUnhealthyInstancePercent) - unhealthy.count
                : Int.max
            guard let (planned, shrunk) = queue.next(size: size, room: room, isUnhealthy: { fleet.health(of: $0.id).countsAsUnhealthy }) else {
                return complete(fleet, &steps)
            }
            // Instances deleted, upgraded by hand or busy since the upgrade started drop out.
            let ids = planned.instances.map(\.id).filter {
                fleet.isPresent($0) && fleet.modelVersion(of: $0) != target && !fleet.isBusy($0)
            }
            guard !ids.isEmpty else { continue }
            current.number += 1
            current.phase = planned.phase
            current.ids = ids
            current.waitCursor = 0
            current.operationFailed = []
            surge.created = [:]
            surge.failed = []
            steps.append(.emit(.batchStarted(instances: ids, shrunk: shrunk), batch: current.number, phase: current.phase))
            if policy.maxSurge && !surge.fellBack {
                let existing = fleet.existingCount
                if let quota = terms.quota, existing + ids.count > quota {
                    surge.fellBack = true
                    steps.append(.emit(.surgeFallback(needed: existing + ids.count, quota: quota), batch: current.number, phase: current.phase))
                } else {
                    return startSurgeBatch(ids, fleet, &steps)
                }
            }
            stage = .upgrading
            for id in ids {
                tally.previousVersion[id] = fleet.modelVersion(of: id)
                current.inFlight.insert(id)
                current.watching.insert(id)
            }
            // Instances told their OS upgrade is coming answer first (`deferralsAnswered`).
            if terms.os?.deferral == true {
                steps.append(.askDeferrals(ids))
            } else {
                steps += ids.map { .begin(.upgrade, id: $0, targetVersion: target) }
            }
            return
        }
    }

    private func startSurgeBatch(_ ids: [Int], _ fleet: any FleetView, _ steps: inout [RollingStep]) {
        stage = .surgeCreating
        var next = fleet.nextInstanceID
        for old in ids {
            let new = next
            next += 1
            surge.created[old] = new
            current.inFlight.insert(new)
            current.watching.insert(new)
            steps.append(.addSurgeInstance(replacing: old, expectedID: new, version: terms.targetVersion, batch: current.number, phase: current.phase))
            steps.append(.begin(.create, id: new, targetVersion: terms.targetVersion))
        }
    }

    /// Moves the current batch on once its operations have ended and its instances have left
    /// Initializing (after a cancel, without waiting for health).
    func advance(_ fleet: any FleetView, _ steps: inout [RollingStep]) {
        guard current.inFlight.isEmpty else { return }
        let waitForHealth = track.code == .rollingForward
        switch stage {
        case .upgrading:
            if waitForHealth && batchAwaitsHealth(fleet) { return }
            finishBatch(fleet, &steps)
        case .surgeCreating:
            let created = surge.created.values.filter { !current.operationFailed.contains($0) && fleet.isRunning($0) }
            if waitForHealth && created.contains(where: { awaitsHealth($0, fleet) }) { return }
            stage = .surgeDeleting
            for old in current.ids {
                guard let new = surge.created[old] else { continue }
                let ok = !current.operationFailed.contains(new) && fleet.isRunning(new) && fleet.health(of: new) == .healthy
                let doomed = ok ? old : new
                if !ok { surge.failed.insert(old) }
                if ok { surge.replacement[old] = new }
                guard !fleet.isDeleted(doomed) else { continue }
                current.inFlight.insert(doomed)
                steps.append(.begin(.delete, id: doomed, targetVersion: fleet.modelVersion(of: doomed)))
            }
            if current.inFlight.isEmpty { finishBatch(fleet, &steps) }
        case .surgeDeleting:
            finishBatch(fleet, &steps)
        case .idle, .restoring, .pausing, .done:
            return
        }
    }

    /// Whether some instance of the batch still waits for its health. Outside automatic OS
    /// upgrades an instance that has left Initializing stays out of it for the rest of the batch,
    /// so the scan resumes where the last one stopped: a batch costs one pass, not one per health
    /// change.
    private func batchAwaitsHealth(_ fleet: any FleetView) -> Bool {
        let resumable = waits.healthDeadline.isEmpty
        var i = resumable ? current.waitCursor : 0
        while i < current.ids.count {
            let id = current.ids[i]
            if awaitsHealth(id, fleet) && !current.operationFailed.contains(id) {
                if resumable { current.waitCursor = i }
                return true
            }
            i += 1
        }
        return false
    }

    /// Whether the batch still waits for instance `id`'s health: until it leaves Initializing or,
    /// in an automatic OS upgrade, until it is Healthy or its time to become Healthy runs out.
    private func awaitsHealth(_ id: Int, _ fleet: any FleetView) -> Bool {
        // Only automatic OS upgrades keep deadlines: other runs skip the lookup (it is hashed,
        // and a batch's wait is checked for every health change of its instances).
        if !waits.healthDeadline.isEmpty, let deadline = waits.healthDeadline[id] {
            return fleet.health(of: id) != .healthy && fleet.now < deadline
        }
        return fleet.health(of: id) == .initializing
    }

    /// Health that counts for candidate `id`: its own, or its MaxSurge replacement's.
    private func countsAsBad(_ id: Int, _ fleet: any FleetView) -> Bool {
        fleet.health(of: surge.replacement[id] ?? id).countsAsUnhealthy
    }

    /// Automatic OS upgrades judge each instance once, when its five minutes end: whatever is
    /// not Healthy then (Initializing included) failed in its own batch, and nothing is counted
    /// against a later batch (SPEC §6).
    private var judgedAtDeadline: Bool { terms.os?.healthWait != nil }

    /// Whether candidate `id` of the batch being finished counts as failed.
    private func failedInBatch(_ id: Int, surged: Bool, _ fleet: any FleetView) -> Bool {
        if surged { return surge.failed.contains(id) }
        if current.operationFailed.contains(id) { return true }
        // After a cancel, instances count by their own operation's outcome.
        guard track.code == .rollingForward else { return false }
        return judgedAtDeadline ? fleet.health(of: surge.replacement[id] ?? id) != .healthy : countsAsBad(id, fleet)
    }

    private func finishBatch(_ fleet: any FleetView, _ steps: inout [RollingStep]) {
        current.watching = []
        let surged = !surge.created.isEmpty
        var good = 0
        for id in current.ids {
            if failedInBatch(id, surged: surged, fleet) {
                tally.failed.append(id)
            } else {
                tally.successful.insert(id)
                good += 1
            }
        }
        let count = current.ids.count
        current.last = InstanceIDSet(current.ids)
        current.ids = []
        stage = .idle
        steps.append(.emit(.batchFinished(healthy: good, count: count), batch: current.number, phase: current.phase))
        if track.code == .rollingForward, restoreFailed(fleet, &steps) { return }
        judgeBatch(fleet, &steps)
    }

    /// Automatic OS upgrades: every instance of the finished batch that was upgraded but did not
    /// become Healthy in time goes back to its previous image, unless `disableAutomaticRollback`.
    /// True when restores started (the batch is judged once they end).
    private func restoreFailed(_ fleet: any FleetView, _ steps: inout [RollingStep]) -> Bool {
        guard terms.os?.restoreFailed == true else { return false }
        let targets = tally.failed.filter {
            current.last.contains($0) && !current.operationFailed.contains($0) && fleet.isPresent($0) && !fleet.isBusy($0)
                && fleet.modelVersion(of: $0) == terms.targetVersion && tally.previousVersion[$0] != nil
        }
        guard !targets.isEmpty else { return false }
        stage = .restoring
        for id in targets {
            let previous = tally.previousVersion[id]!
            tally.rollingBack.insert(id)
            current.inFlight.insert(id)
            steps.append(.emit(.imageRestoreStarted(name: fleet.name(of: id), toVersion: previous), instance: id, batch: current.number,
                               phase: current.phase))
            steps.append(.begin(.rollback, id: id, targetVersion: previous))
        }
        return true
    }

    /// After a batch (and any restore): the post-batch check, then the next batch, a pause, the
    /// end, or a fault.
    func judgeBatch(_ fleet: any FleetView, _ steps: inout [RollingStep]) {
        stage = .idle
        guard track.code == .rollingForward else {
            stage = .done
            if track.code == .cancelled { track.endTime = fleet.now }
            steps.append(.settled)
            return
        }
        let policy = terms.policy
        let badNow = judgedAtDeadline ? tally.failed : tally.failed + tally.successful.filter { countsAsBad($0, fleet) }
        let verdict = Thresholds.afterBatch(counted: badNow, failedToUpgrade: current.operationFailed, lastBatch: current.last,
                                            capacity: terms.capacity, thresholdPercent: policy.maxUnhealthyUpgradedInstancePercent,
                                            scaleSet: terms.scaleSet)
        steps.append(.emit(.postBatchCheck(verdict.check), batch: current.number))
        if let error = verdict.error {
            fault(error, fleet, &steps)
            if policy.rollbackFailedInstancesOnPolicyBreach { rollBack(badNow, fleet, &steps) }
            return
        }
        if queue.isEmpty { return complete(fleet, &steps) }
        if policy.pauseTimeBetweenBatches > 0 {
            stage = .pausing
            steps.append(.emit(.pause(duration: policy.pauseTimeBetweenBatches), batch: current.number))
            steps.append(.schedule(.resume(upgrade: Int32(terms.number)), at: fleet.now + policy.pauseTimeBetweenBatches))
        } else {
            startNextBatch(fleet, &steps)
        }
    }

    /// Returns each failed or unhealthy upgraded instance to the model it ran before; the status
    /// reads RollingBack until every rollback has ended, then Faulted (SPEC §4.7).
    private func rollBack(_ ids: [Int], _ fleet: any FleetView, _ steps: inout [RollingStep]) {
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

    private func complete(_ fleet: any FleetView, _ steps: inout [RollingStep]) {
        track.code = .completed
        stage = .done
        track.endTime = fleet.now
        steps.append(.emit(.upgradeCompleted(upgrade: terms.number, successful: tally.successful.count, failed: tally.failed.count)))
    }

    private func fault(_ error: UpgradeError, _ fleet: any FleetView, _ steps: inout [RollingStep]) {
        track.code = .faulted
        stage = .done
        track.endTime = fleet.now
        track.error = error
        steps.append(.emit(.upgradeFaulted(code: error.code, message: error.message), batch: current.number))
    }
}
