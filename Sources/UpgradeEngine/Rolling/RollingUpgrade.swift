import Formats

/// One rolling upgrade (SPEC §4, §5, §6) as a value state machine, in the manner of swift-nio's
/// `NIOAsyncWriter.StateMachine`: each input (it starts, an operation ends, a watched instance's
/// health changes, a pause or a wait ends, the instances' answers to a deferral notice, an
/// approval, a cancel) moves `state` and returns the steps its owner carries out. Decisions read
/// the scale set through a `FleetView` and change nothing there.
struct RollingUpgrade {
    /// Where the upgrade is, each stage with the data only it has.
    enum State {
        /// No batch runs: before the first, or between a batch judged and the next.
        case idle
        /// The batch's instances are upgraded in place (some perhaps deferring, in an OS
        /// upgrade), then their health is awaited.
        case upgrading(Batch, Deferrals)
        /// MaxSurge: the batch's new instances are created (old id → new id), then their health
        /// is awaited.
        case surgeCreating(Batch, created: [Int: Int])
        /// MaxSurge: the old instances whose new ones are Healthy, or the new ones that are not,
        /// are deleted; `failed`: candidates whose new instance did not become Healthy.
        case surgeDeleting(Batch, created: [Int: Int], failed: InstanceIDSet)
        /// Automatic OS upgrade: the finished batch's failed instances go back to their previous
        /// image; the batch is judged once they are back.
        case restoring(FinishedBatch)
        /// Automatic OS upgrade with a batch hook: the next batch's lifecycle hook event waits
        /// for answers (SPEC §6b).
        case awaitingHook(PlannedBatch)
        /// The pause between batches runs.
        case pausing
        /// Nothing more moves: completed, faulted (perhaps rolling back), or cancelled and settled.
        case done
    }

    /// The batch in progress.
    struct Batch {
        /// The candidates (the old instances, under MaxSurge).
        var ids: [Int]
        var operationFailed: InstanceIDSet = []
        /// Where the scan for instances still awaiting health resumes (`batchAwaitsHealth`).
        var waitCursor = 0
    }

    /// A batch taken from the queue that waits for its lifecycle hook event.
    struct PlannedBatch {
        let ids: [Int]
        /// The unhealthy budget made it smaller than maxBatchInstancePercent.
        let shrunk: Bool
        let phase: Int?
    }

    /// A batch just finished, as the check that judges it reads it.
    struct FinishedBatch {
        /// Its candidates.
        let ids: InstanceIDSet
        /// Those whose own operation failed.
        let operationFailed: InstanceIDSet
    }

    /// Instances of an OS upgrade's batch that defer their upgrade.
    struct Deferrals {
        /// Deferring until approved or until their own time runs out.
        var deferred: InstanceIDSet = []
        /// Those of `deferred` that only an approve action can release.
        var untilApproved: InstanceIDSet = []
    }

    /// The status `get-latest` reports, as it moves.
    struct Track {
        var code: RunningCode = .rollingForward
        var lastAction = "Start"
        var lastActionTime: Millis
        var error: UpgradeError?
        /// When the upgrade reached its final code (ms); nil while it runs.
        var endTime: Millis?
    }

    /// What the upgrade has done to instances so far, across batches.
    struct Tally {
        var successful: InstanceIDSet = []
        var failed: [Int] = []
        /// The model each upgraded instance ran before, for rollback.
        var previousVersion: [Int: Int] = [:]
        /// Instances rolling back or restoring (status RollingBack meanwhile, after a breach).
        var rollingBack: InstanceIDSet = []
        /// Instances rolled back (or restored to their previous image) successfully.
        var rolledBack = 0
        /// Instances whose rollback failed: they stay failed on the new model.
        var rollbackFailed: [Int] = []
        /// Instances a cancel took out of their batch before they started: pending again.
        var returnedToPending = 0
        /// MaxSurge: for a candidate, the new instance whose health now counts for it.
        var replacement: [Int: Int] = [:]
        /// MaxSurge: a batch met the quota; this batch and every later one run in place (SPEC §5).
        var surgeFellBack = false
        /// Automatic OS upgrades: when each upgraded instance's time to become Healthy runs out (ms).
        var healthDeadline: [Int: Millis] = [:]
        /// Instances a batch hook's event rejected: skipped for this upgrade (SPEC §6b).
        var hookRejected: [Int] = []
        /// How long each batch hook's event waited, in the order raised (ms).
        var hookWaits: [Millis] = []
    }

    let terms: RollingTerms
    /// The instances not yet taken, in batch order.
    var queue: BatchQueue
    var state = State.idle
    /// Operations of this upgrade still running: the batch's, or the restores of an automatic
    /// OS upgrade (rollbacks after a breach are in `tally.rollingBack` only). Kept beside the
    /// state, not in it: every operation's end reads it, and reading a state's data copies it.
    var inFlight: InstanceIDSet = []
    /// Instances whose health change may end the batch's wait; empty outside a batch (read at
    /// every health change, hence beside the state too).
    var watching: InstanceIDSet = []
    var track: Track
    var tally = Tally()
    /// The batch being upgraded now, or the last one (0 before the first).
    var batchNumber = 0
    /// That batch's phase (nil: unphased).
    var batchPhase: Int?

    init(terms: RollingTerms, queue: BatchQueue) {
        self.terms = terms
        self.queue = queue
        track = Track(lastActionTime: terms.startTime)
    }

    // MARK: What the owner reads

    var number: Int { terms.number }
    var policy: RollingUpgradePolicy { terms.policy }
    var capacity: Int { terms.capacity }
    var targetVersion: Int { terms.targetVersion }
    var os: OSUpgradeTerms? { terms.os }
    var code: RunningCode { track.code }
    var endTime: Millis? { track.endTime }
    var error: UpgradeError? { track.error }
    var skipped: [Int] { terms.skipped }
    var protected: [Int] { terms.protected }
    var successful: InstanceIDSet { tally.successful }
    var failed: [Int] { tally.failed }
    var rolledBack: Int { tally.rolledBack }
    var rollbackFailed: [Int] { tally.rollbackFailed }
    var hookRejected: [Int] { tally.hookRejected }
    var hookWaits: [Millis] { tally.hookWaits }

    /// The batch in progress, if one is (in place, or creating or deleting under MaxSurge).
    var batch: Batch? {
        switch state {
        case .upgrading(let batch, _), .surgeCreating(let batch, _), .surgeDeleting(let batch, _, _): return batch
        case .idle, .restoring, .awaitingHook, .pausing, .done: return nil
        }
    }

    /// Instances of the batch deferring their OS upgrade.
    var deferred: InstanceIDSet {
        if case .upgrading(_, let deferrals) = state { return deferrals.deferred }
        return []
    }

    /// Those of `deferred` only an approve action releases.
    var untilApproved: InstanceIDSet {
        if case .upgrading(_, let deferrals) = state { return deferrals.untilApproved }
        return []
    }

    /// No operation of this upgrade is running.
    var isQuiet: Bool { inFlight.isEmpty }
    /// Every operation still running is an upgrade waiting for an approval.
    var waitsOnlyForApprovals: Bool { inFlight.isSubset(of: untilApproved) }
    /// Instances are being upgraded, created, deleted or restored.
    var isWorking: Bool {
        switch state {
        case .upgrading, .surgeCreating, .surgeDeleting, .restoring: return true
        case .idle, .awaitingHook, .pausing, .done: return false
        }
    }

    /// What its owner asks of it most often, in plain values, read with one look at the state
    /// (each look at a state's data copies it).
    var outline: RollingOutline {
        var outline = RollingOutline(number: terms.number, code: track.code, batchNumber: batchNumber)
        outline.isWorking = isWorking
        outline.watching = watching
        // Only an OS upgrade with deferral has deferrals to look at (a look copies the state's data).
        if terms.os?.deferral == true { outline.waitsOnlyOnApprovals = !untilApproved.isEmpty && waitsOnlyForApprovals }
        return outline
    }

    /// Instances not yet reached: still queued, or taken back out of a cancelled batch.
    var pendingCount: Int { queue.pending + tally.returnedToPending }

    /// Instances of the batch in progress.
    var inProgressCount: Int { batch?.ids.count ?? 0 }

    // MARK: Inputs

    /// Runs one input's handling and hands back the steps it produced.
    mutating func handle(_ body: (inout Self, inout [RollingStep]) -> Void) -> [RollingStep] {
        var steps: [RollingStep] = []
        body(&self, &steps)
        return steps
    }

    /// The first batch (after the owner announced the upgrade).
    mutating func begin(_ fleet: some FleetView) -> [RollingStep] { handle { $0.startNextBatch(fleet, &$1) } }

    /// The pause between batches ended.
    mutating func resume(_ fleet: some FleetView) -> [RollingStep] {
        handle { run, steps in if run.track.code == .rollingForward { run.startNextBatch(fleet, &steps) } }
    }

    /// A wait ended (a cancel's settling, an automatic OS upgrade's health deadline).
    mutating func settle(_ fleet: some FleetView) -> [RollingStep] { handle { $0.advance(fleet, &$1) } }

    /// A watched instance's committed health changed.
    mutating func healthChanged(_ id: Int, _ fleet: some FleetView) -> [RollingStep] {
        guard track.code == .rollingForward, isWatching(id) else { return [] }
        return handle { $0.advance(fleet, &$1) }
    }

    /// Whether instance `id`'s health change may end the batch's wait (read in place: called
    /// for every health change while the upgrade runs).
    private func isWatching(_ id: Int) -> Bool { watching.contains(id) }

    /// An operation this upgrade started ended.
    mutating func operationFinished(_ id: Int, succeeded: Bool, kind: OperationKind, _ fleet: some FleetView) -> [RollingStep] {
        handle { run, steps in
            run.removeInFlight(id)
            if kind == .rollback {
                run.tally.rollingBack.remove(id)
                if succeeded { run.tally.rolledBack += 1 } else { run.tally.rollbackFailed.append(id) }
                guard run.tally.rollingBack.isEmpty else { return }
                if run.track.code == .rollingBack {
                    run.track.code = .faulted
                    run.track.endTime = fleet.now
                } else if case .restoring(let finished) = run.state {
                    run.judgeBatch(finished, fleet, &steps)
                }
                return
            }
            if !succeeded { run.updateBatch { $0.operationFailed.insert(id) } }
            if succeeded, kind == .upgrade || kind == .create, let wait = run.terms.os?.healthWait {
                run.tally.healthDeadline[id] = fleet.now + wait
                steps.append(.schedule(.settle, at: fleet.now + wait))
            }
            run.advance(fleet, &steps)
        }
    }

    /// The answers to `askDeferrals`, in the order asked: an instance that goes ahead starts its
    /// upgrade; one that defers waits for an approval or for its own time to run out.
    mutating func deferralsAnswered(_ answers: [(id: Int, answer: OSUpgradeDeferral)], _ fleet: some FleetView) -> [RollingStep] {
        handle { run, steps in
            var deferrals = Deferrals()
            for (id, answer) in answers {
                switch answer {
                case .none:
                    steps.append(.begin(.upgrade, id: id, targetVersion: run.terms.targetVersion))
                    continue
                case .untilApproved:
                    steps.append(.emit(.osUpgradeDeferred(approveAfter: nil), instance: id, batch: run.batchNumber, phase: run.batchPhase))
                    deferrals.untilApproved.insert(id)
                case .approveAfter(let wait):
                    steps.append(.emit(.osUpgradeDeferred(approveAfter: wait), instance: id, batch: run.batchNumber, phase: run.batchPhase))
                    steps.append(.schedule(.approve(id), at: fleet.now + max(0, wait)))
                }
                deferrals.deferred.insert(id)
            }
            run.updateDeferrals { current in
                for id in deferrals.deferred { current.deferred.insert(id) }
                for id in deferrals.untilApproved { current.untilApproved.insert(id) }
            }
        }
    }

    /// Instance `id`'s deferral ends (`byAction`: approved, else its own time ran out).
    mutating func approve(_ id: Int, byAction: Bool) -> [RollingStep] {
        updateDeferrals { deferrals in
            deferrals.deferred.remove(id)
            deferrals.untilApproved.remove(id)
        }
        return [.emit(.osUpgradeApproved(byAction: byAction), instance: id, batch: batchNumber, phase: batchPhase),
                .begin(.upgrade, id: id, targetVersion: terms.targetVersion)]
    }

    /// The one cancel: no new batch starts; operations already started finish and count by their
    /// own outcome. `supersededBy` names the newer model update that cancels it, if one does.
    mutating func cancel(supersededBy reason: String?, at now: Millis) -> [RollingStep] {
        track.code = .cancelled
        track.lastAction = "Cancel"
        track.lastActionTime = now
        track.endTime = now
        if case .pausing = state { state = .done }
        returnDeferred()
        // A batch waiting for its hook event never starts: its instances are pending again.
        if case .awaitingHook(let planned) = state {
            tally.returnedToPending += planned.ids.count
            state = .done
            return [.emit(.upgradeCancelled(upgrade: terms.number, supersededBy: reason)), .abandonHook, .settled]
        }
        // A batch waiting only for its instances' health settles now: nothing stays in
        // progress, and MaxSurge deletes the old instances whose new ones are Healthy.
        return [.emit(.upgradeCancelled(upgrade: terms.number, supersededBy: reason)), .schedule(.settle, at: now)]
    }

    /// A cancel takes deferred instances out of their batch untouched: they count as pending.
    private mutating func returnDeferred() {
        guard case .upgrading(var batch, let deferrals) = state, !deferrals.deferred.isEmpty else { return }
        let deferred = deferrals.deferred
        state = .idle  // the batch is changed as the only copy, then put back
        tally.returnedToPending += deferred.count
        batch.ids.removeAll { deferred.contains($0) }
        batch.waitCursor = 0
        inFlight.subtract(deferred)
        watching.subtract(deferred)
        for id in deferred { tally.previousVersion[id] = nil }
        state = .upgrading(batch, Deferrals())
    }

    /// The status `get-latest` shows for this upgrade.
    func status(location: String) -> RollingUpgradeStatus {
        RollingUpgradeStatus(location: location, policy: terms.policy,
                             progress: Progress(successfulInstanceCount: tally.successful.count, failedInstanceCount: tally.failed.count,
                                                inProgressInstanceCount: inProgressCount, pendingInstanceCount: pendingCount),
                             code: track.code, lastAction: track.lastAction, lastActionTime: track.lastActionTime,
                             startTime: terms.startTime, error: track.error)
    }

    // MARK: Changing a state's data in place

    /// Changes the batch in progress, if one is. The state is emptied meanwhile, so the batch's
    /// sets are changed as the only copy rather than copied.
    mutating func updateBatch(_ change: (inout Batch) -> Void) {
        switch state {
        case .upgrading(var batch, let deferrals):
            state = .idle
            change(&batch)
            state = .upgrading(batch, deferrals)
        case .surgeCreating(var batch, let created):
            state = .idle
            change(&batch)
            state = .surgeCreating(batch, created: created)
        case .surgeDeleting(var batch, let created, let failed):
            state = .idle
            change(&batch)
            state = .surgeDeleting(batch, created: created, failed: failed)
        case .idle, .restoring, .awaitingHook, .pausing, .done:
            return
        }
    }

    /// Changes the deferrals of an in-place batch, if one runs.
    private mutating func updateDeferrals(_ change: (inout Deferrals) -> Void) {
        guard case .upgrading(let batch, var deferrals) = state else { return }
        state = .idle
        change(&deferrals)
        state = .upgrading(batch, deferrals)
    }

    /// Instance `id`'s operation ended: it is no longer in flight (in a batch or a restore).
    private mutating func removeInFlight(_ id: Int) { inFlight.remove(id) }
}
