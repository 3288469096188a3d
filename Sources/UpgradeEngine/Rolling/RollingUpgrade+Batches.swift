import AzureWire

/// The batch cycle of a rolling upgrade: check, start, wait, finish, restore, judge.
extension RollingUpgrade {
    func startNextBatch(_ fleet: any FleetView) throws {
        guard code == .rollingForward else { return }
        stage = .idle
        while true {
            guard !queue.isEmpty else { return complete(fleet) }
            let unhealthy = fleet.unhealthyPresent
            let verdict = Thresholds.beforeBatch(unhealthy: unhealthy, capacity: capacity,
                                                 thresholdPercent: policy.maxUnhealthyInstancePercent,
                                                 firstBatch: batchNumber == 0, scaleSet: scaleSet)
            steps.append(.emit(.preBatchCheck(verdict.check), batch: batchNumber + 1))
            if let error = verdict.error { return fault(error, fleet) }
            let size = Planner.batchSize(capacity: capacity, percent: policy.maxBatchInstancePercent)
            // Only a batch that takes instances down shrinks to the unhealthy budget: a MaxSurge
            // batch creates its new instances first, an in-place change stops nothing (SPEC §4.3).
            let takesDown = !(policy.maxSurge && !surgeFellBack) && fleet.upgradeIsDisruptive(to: targetVersion)
            let room = takesDown
                ? Planner.unhealthyAllowance(capacity: capacity, percent: policy.maxUnhealthyInstancePercent) - unhealthy.count
                : Int.max
            guard let (planned, shrunk) = queue.next(size: size, room: room, isUnhealthy: { fleet.health(of: $0).countsAsUnhealthy }) else {
                return complete(fleet)
            }
            // Instances deleted, upgraded by hand or busy since the upgrade started drop out.
            let ids = planned.instances.map(\.id).filter {
                fleet.isPresent($0) && fleet.modelVersion(of: $0) != targetVersion && !fleet.isBusy($0)
            }
            guard !ids.isEmpty else { continue }
            batchNumber += 1
            phase = planned.phase
            batch = ids
            waitCursor = 0
            surge = [:]
            surgeFailed = []
            opFailed = []
            steps.append(.emit(.batchStarted(instances: ids, shrunk: shrunk), batch: batchNumber, phase: phase))
            if policy.maxSurge && !surgeFellBack {
                let existing = fleet.existingCount
                if let quota, existing + ids.count > quota {
                    surgeFellBack = true
                    steps.append(.emit(.surgeFallback(needed: existing + ids.count, quota: quota), batch: batchNumber, phase: phase))
                } else {
                    return startSurgeBatch(ids, fleet)
                }
            }
            stage = .upgrading
            for id in ids {
                previousVersion[id] = fleet.modelVersion(of: id)
                inFlight.insert(id)
                watching.insert(id)
                if try deferUpgrade(id, fleet) { continue }
                steps.append(.begin(.upgrade, id: id, targetVersion: targetVersion))
            }
            return
        }
    }

    private func startSurgeBatch(_ ids: [Int], _ fleet: any FleetView) {
        stage = .surgeCreating
        var next = fleet.nextInstanceID
        for old in ids {
            let new = next
            next += 1
            surge[old] = new
            inFlight.insert(new)
            watching.insert(new)
            steps.append(.addSurgeInstance(replacing: old, expectedID: new, version: targetVersion, batch: batchNumber, phase: phase))
            steps.append(.begin(.create, id: new, targetVersion: targetVersion))
        }
    }

    /// Asks whether instance `id` defers its OS upgrade; true when it does (its upgrade then
    /// starts on approval).
    private func deferUpgrade(_ id: Int, _ fleet: any FleetView) throws -> Bool {
        guard os?.deferral == true else { return false }
        switch try fleet.deferral(of: id) {
        case .none:
            return false
        case .untilApproved:
            steps.append(.emit(.osUpgradeDeferred(approveAfter: nil), instance: id, batch: batchNumber, phase: phase))
            untilApproved.insert(id)
        case .approveAfter(let wait):
            steps.append(.emit(.osUpgradeDeferred(approveAfter: wait), instance: id, batch: batchNumber, phase: phase))
            steps.append(.schedule(.approve(upgrade: number, id: id), at: fleet.now + max(0, wait)))
        }
        deferred.insert(id)
        return true
    }

    /// Moves the current batch on once its operations have ended and its instances have left
    /// Initializing (after a cancel, without waiting for health).
    func advance(_ fleet: any FleetView) throws {
        guard inFlight.isEmpty else { return }
        let waitForHealth = code == .rollingForward
        switch stage {
        case .upgrading:
            if waitForHealth && batchAwaitsHealth(fleet) { return }
            try finishBatch(fleet)
        case .surgeCreating:
            let created = surge.values.filter { !opFailed.contains($0) && fleet.isRunning($0) }
            if waitForHealth && created.contains(where: { awaitsHealth($0, fleet) }) { return }
            stage = .surgeDeleting
            for old in batch {
                guard let new = surge[old] else { continue }
                let ok = !opFailed.contains(new) && fleet.isRunning(new) && fleet.health(of: new) == .healthy
                let doomed = ok ? old : new
                if !ok { surgeFailed.insert(old) }
                if ok { replacement[old] = new }
                guard !fleet.isDeleted(doomed) else { continue }
                inFlight.insert(doomed)
                steps.append(.begin(.delete, id: doomed, targetVersion: fleet.modelVersion(of: doomed)))
            }
            if inFlight.isEmpty { try finishBatch(fleet) }
        case .surgeDeleting:
            try finishBatch(fleet)
        case .idle, .restoring, .pausing, .done:
            return
        }
    }

    /// Whether some instance of the batch still waits for its health. Outside automatic OS
    /// upgrades an instance that has left Initializing stays out of it for the rest of the batch,
    /// so the scan resumes where the last one stopped: a batch costs one pass, not one per health
    /// change.
    private func batchAwaitsHealth(_ fleet: any FleetView) -> Bool {
        let resumable = healthDeadline.isEmpty
        var i = resumable ? waitCursor : 0
        while i < batch.count {
            let id = batch[i]
            if awaitsHealth(id, fleet) && !opFailed.contains(id) {
                if resumable { waitCursor = i }
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
        if !healthDeadline.isEmpty, let deadline = healthDeadline[id] {
            return fleet.health(of: id) != .healthy && fleet.now < deadline
        }
        return fleet.health(of: id) == .initializing
    }

    /// Health that counts for candidate `id`: its own, or its MaxSurge replacement's.
    private func countsAsBad(_ id: Int, _ fleet: any FleetView) -> Bool {
        fleet.health(of: replacement[id] ?? id).countsAsUnhealthy
    }

    /// Automatic OS upgrades judge each instance once, when its five minutes end: whatever is
    /// not Healthy then (Initializing included) failed in its own batch, and nothing is counted
    /// against a later batch (SPEC §6).
    private var judgedAtDeadline: Bool { os?.healthWait != nil }

    /// Whether candidate `id` of the batch being finished counts as failed.
    private func failedInBatch(_ id: Int, surged: Bool, _ fleet: any FleetView) -> Bool {
        if surged { return surgeFailed.contains(id) }
        if opFailed.contains(id) { return true }
        // After a cancel, instances count by their own operation's outcome.
        guard code == .rollingForward else { return false }
        return judgedAtDeadline ? fleet.health(of: replacement[id] ?? id) != .healthy : countsAsBad(id, fleet)
    }

    private func finishBatch(_ fleet: any FleetView) throws {
        watching = []
        let surged = !surge.isEmpty
        var good = 0
        for id in batch {
            let bad = failedInBatch(id, surged: surged, fleet)
            if bad { failed.append(id) } else {
                successful.insert(id)
                good += 1
            }
        }
        let count = batch.count
        lastBatch = Set(batch)
        batch = []
        stage = .idle
        steps.append(.emit(.batchFinished(healthy: good, count: count), batch: batchNumber, phase: phase))
        if code == .rollingForward, restoreFailed(fleet) { return }
        try judgeBatch(fleet)
    }

    /// Automatic OS upgrades: every instance of the finished batch that was upgraded but did not
    /// become Healthy in time goes back to its previous image, unless `disableAutomaticRollback`.
    /// True when restores started (the batch is judged once they end).
    private func restoreFailed(_ fleet: any FleetView) -> Bool {
        guard os?.restoreFailed == true else { return false }
        let targets = failed.filter {
            lastBatch.contains($0) && !opFailed.contains($0) && fleet.isPresent($0) && !fleet.isBusy($0)
                && fleet.modelVersion(of: $0) == targetVersion && previousVersion[$0] != nil
        }
        guard !targets.isEmpty else { return false }
        stage = .restoring
        for id in targets {
            let previous = previousVersion[id]!
            rollingBack.insert(id)
            inFlight.insert(id)
            steps.append(.emit(.imageRestoreStarted(name: fleet.name(of: id), toVersion: previous), instance: id, batch: batchNumber, phase: phase))
            steps.append(.begin(.rollback, id: id, targetVersion: previous))
        }
        return true
    }

    /// After a batch (and any restore): the post-batch check, then the next batch, a pause, the
    /// end, or a fault.
    func judgeBatch(_ fleet: any FleetView) throws {
        stage = .idle
        guard code == .rollingForward else {
            stage = .done
            if code == .cancelled { endTime = fleet.now }
            steps.append(.settled)
            return
        }
        let badNow = judgedAtDeadline ? failed : failed + successful.sorted().filter { countsAsBad($0, fleet) }
        let verdict = Thresholds.afterBatch(counted: badNow, failedToUpgrade: opFailed, lastBatch: lastBatch, capacity: capacity,
                                            thresholdPercent: policy.maxUnhealthyUpgradedInstancePercent, scaleSet: scaleSet)
        steps.append(.emit(.postBatchCheck(verdict.check), batch: batchNumber))
        if let error = verdict.error {
            fault(error, fleet)
            if policy.rollbackFailedInstancesOnPolicyBreach { rollBack(badNow, fleet) }
            return
        }
        if queue.isEmpty { return complete(fleet) }
        if policy.pauseTimeBetweenBatches > 0 {
            stage = .pausing
            steps.append(.emit(.pause(duration: policy.pauseTimeBetweenBatches), batch: batchNumber))
            steps.append(.schedule(.resume(upgrade: number), at: fleet.now + policy.pauseTimeBetweenBatches))
        } else {
            try startNextBatch(fleet)
        }
    }

    /// Returns each failed or unhealthy upgraded instance to the model it ran before; the status
    /// reads RollingBack until every rollback has ended, then Faulted (SPEC §4.7).
    private func rollBack(_ ids: [Int], _ fleet: any FleetView) {
        let targets = ids.filter {
            previousVersion[$0] != nil && fleet.isPresent($0) && !fleet.isBusy($0) && fleet.modelVersion(of: $0) == targetVersion
        }
        guard !targets.isEmpty else { return }
        code = .rollingBack
        rollingBack = Set(targets)
        for id in targets {
            let previous = previousVersion[id]!
            steps.append(.emit(.rollbackStarted(name: fleet.name(of: id), toVersion: previous), instance: id))
            steps.append(.begin(.rollback, id: id, targetVersion: previous))
        }
    }

    private func complete(_ fleet: any FleetView) {
        code = .completed
        stage = .done
        endTime = fleet.now
        steps.append(.emit(.upgradeCompleted(upgrade: number, successful: successful.count, failed: failed.count)))
    }

    private func fault(_ error: UpgradeError, _ fleet: any FleetView) {
        code = .faulted
        stage = .done
        endTime = fleet.now
        self.error = error
        steps.append(.emit(.upgradeFaulted(code: error.code, message: error.message), batch: batchNumber))
    }
}
