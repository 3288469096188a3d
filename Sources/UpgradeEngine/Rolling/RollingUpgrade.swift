import Formats

/// What a rolling upgrade reads about the scale set while it decides. It never changes the
/// scale set itself: it returns `RollingStep`s, and its host carries them out in order.
protocol FleetView: AnyObject {
    /// The virtual clock, in milliseconds.
    var now: Millis { get }
    func health(of id: Int) -> HealthState
    /// Exists and runs (not being created, deleted or gone).
    func isPresent(_ id: Int) -> Bool
    /// Runs (lifecycle `running`).
    func isRunning(_ id: Int) -> Bool
    func isDeleted(_ id: Int) -> Bool
    func modelVersion(of id: Int) -> Int
    /// An operation is in flight on it.
    func isBusy(_ id: Int) -> Bool
    func name(of id: Int) -> String
    /// Present instances that count as unhealthy, ascending.
    var unhealthyPresent: [Int] { get }
    /// Instances that exist (not deleted), for the MaxSurge quota.
    var existingCount: Int { get }
    /// The id the next created instance gets (ids are handed out in order, never reused).
    var nextInstanceID: Int { get }
    /// Whether bringing any out-of-date instance to model `version` restarts it.
    func upgradeIsDisruptive(to version: Int) -> Bool
}

/// One thing a rolling upgrade asks its host to do.
enum RollingStep {
    /// Record an event.
    case emit(Payload, instance: Int? = nil, batch: Int? = nil, phase: Int? = nil)
    /// Start an operation on an instance (the host asks the fault injector).
    case begin(OperationKind, id: Int, targetVersion: Int)
    /// Create the MaxSurge instance that replaces `old`, in its place, on `version`; it gets
    /// `expectedID` (the host checks).
    case addSurgeInstance(replacing: Int, expectedID: Int, version: Int, batch: Int, phase: Int?)
    /// Schedule an event of this upgrade.
    case schedule(Scheduled, at: Millis)
    /// The upgrade stopped moving (a cancelled batch settled): a superseding one may start.
    case settled
    /// Tell these instances their OS upgrade is coming and hand their answers back, in this
    /// order, to `deferralsAnswered` (the upgrade never calls a behaviour itself).
    case askDeferrals([Int])
}

/// What a rolling upgrade is bound to from its start: the upgrade's number, policy and target,
/// the capacity every threshold divides by, and the instances it leaves out.
struct RollingTerms {
    let number: Int
    let policy: RollingUpgradePolicy
    /// Instances when the upgrade started: the denominator of every threshold.
    let capacity: Int
    let targetVersion: Int
    let startTime: Millis
    /// The scale set's name (error targets) and its quota (MaxSurge).
    let scaleSet: String
    let quota: Int?
    let skipped: [Int]
    let protected: [Int]
    /// Set for an OS image upgrade (automatic or on demand).
    let os: OSUpgradeTerms?
}

/// One rolling upgrade (SPEC §4, §5, §6) as a state machine: each input (it starts, an
/// operation ends, a watched instance's health changes, a pause or a wait ends, the instances'
/// answers to a deferral notice, an approval, a cancel) updates its state and returns the steps
/// its host carries out. Decisions read the scale set through a `FleetView` and change nothing
/// there; the host reads the upgrade only through the read-only properties below.
final class RollingUpgrade {
    /// `restoring`: an automatic OS upgrade returns the batch's failed instances to their
    /// previous image before it judges the batch.
    enum Stage { case idle, upgrading, surgeCreating, surgeDeleting, restoring, pausing, done }

    /// The status `get-latest` reports, as it moves.
    struct Track {
        var code: RunningCode = .rollingForward
        var lastAction = "Start"
        var lastActionTime: Millis
        var error: UpgradeError?
        /// When the upgrade reached its final code (ms); nil while it runs.
        var endTime: Millis?
    }

    /// The batch in progress (or last finished).
    struct Batch {
        var number = 0
        var phase: Int?
        /// The candidates (the old instances, under MaxSurge).
        var ids: [Int] = []
        /// The instances of the batch last finished, for the check that judges it.
        var last: InstanceIDSet = []
        /// Operations of this upgrade still running.
        var inFlight: InstanceIDSet = []
        /// Instances whose health change may end the batch's wait.
        var watching: InstanceIDSet = []
        var operationFailed: InstanceIDSet = []
        /// Where the scan for instances still awaiting health resumes (`batchAwaitsHealth`).
        var waitCursor = 0
    }

    /// MaxSurge's bookkeeping.
    struct Surge {
        /// Old id → new id for the current batch.
        var created: [Int: Int] = [:]
        /// A batch met the quota: this batch and every later one run in place (SPEC §5).
        var fellBack = false
        /// Candidates of the current batch whose new instance did not become Healthy.
        var failed: InstanceIDSet = []
        /// For a candidate, the new instance whose health now counts for it.
        var replacement: [Int: Int] = [:]
    }

    /// What the upgrade has done to instances so far.
    struct Tally {
        var successful: InstanceIDSet = []
        var failed: [Int] = []
        /// The model each upgraded instance ran before, for rollback.
        var previousVersion: [Int: Int] = [:]
        /// Instances rolling back after a breach (status RollingBack meanwhile).
        var rollingBack: InstanceIDSet = []
        /// Instances rolled back (or restored to their previous image) successfully.
        var rolledBack = 0
        /// Instances whose rollback failed: they stay failed on the new model.
        var rollbackFailed: [Int] = []
        /// Instances a cancel took out of their batch before they started: pending again.
        var returnedToPending = 0
    }

    /// An OS image upgrade's waits.
    struct OSWaits {
        /// Automatic OS upgrades: when each upgraded instance's time to become Healthy runs out (ms).
        var healthDeadline: [Int: Millis] = [:]
        /// Instances of the current batch deferring their upgrade until approved.
        var deferred: InstanceIDSet = []
        /// Those of `deferred` that only an approve action can release.
        var untilApproved: InstanceIDSet = []
    }

    let terms: RollingTerms
    /// Read by the host's run loop between every two events; like the simulation's hot
    /// properties, only ever touched on the simulation's thread and never while a behaviour runs.
    @exclusivity(unchecked) var track: Track
    var queue: BatchQueue
    @exclusivity(unchecked) var stage = Stage.idle
    @exclusivity(unchecked) var current = Batch()
    var surge = Surge()
    var tally = Tally()
    @exclusivity(unchecked) var waits = OSWaits()

    init(terms: RollingTerms, queue: BatchQueue) {
        self.terms = terms
        self.queue = queue
        track = Track(lastActionTime: terms.startTime)
    }

    // MARK: What the host reads

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
    /// The batch being upgraded now (0 before the first).
    var batchNumber: Int { current.number }
    var deferred: InstanceIDSet { waits.deferred }
    var untilApproved: InstanceIDSet { waits.untilApproved }
    /// No operation of this upgrade is running.
    var isQuiet: Bool { current.inFlight.isEmpty }
    /// Every operation still running is an upgrade waiting for an approval.
    var waitsOnlyForApprovals: Bool { current.inFlight.isSubset(of: waits.untilApproved) }
    /// Instances are being upgraded, created, deleted or restored.
    var isWorking: Bool {
        switch stage {
        case .upgrading, .surgeCreating, .surgeDeleting, .restoring: return true
        default: return false
        }
    }

    /// Instances not yet reached: still queued, or taken back out of a cancelled batch.
    var pendingCount: Int { queue.pending + tally.returnedToPending }

    var inProgressCount: Int {
        switch stage {
        case .upgrading, .surgeCreating, .surgeDeleting: return current.ids.count
        default: return 0
        }
    }

    // MARK: Inputs

    /// Runs one input's handling and hands back the steps it produced.
    private func handle(_ body: (inout [RollingStep]) -> Void) -> [RollingStep] {
        var steps: [RollingStep] = []
        body(&steps)
        return steps
    }

    /// The first batch (after the host announced the upgrade).
    func begin(_ fleet: any FleetView) -> [RollingStep] { handle { startNextBatch(fleet, &$0) } }

    /// The pause between batches ended.
    func resume(_ fleet: any FleetView) -> [RollingStep] {
        handle { if track.code == .rollingForward { startNextBatch(fleet, &$0) } }
    }

    /// A wait ended (a cancel's settling, an automatic OS upgrade's health deadline).
    func settle(_ fleet: any FleetView) -> [RollingStep] { handle { advance(fleet, &$0) } }

    /// A watched instance's committed health changed.
    func healthChanged(_ id: Int, _ fleet: any FleetView) -> [RollingStep] {
        guard track.code == .rollingForward, current.watching.contains(id) else { return [] }
        return handle { advance(fleet, &$0) }
    }

    /// An operation this upgrade started ended.
    func operationFinished(_ id: Int, succeeded: Bool, kind: OperationKind, _ fleet: any FleetView) -> [RollingStep] {
        handle { steps in
            current.inFlight.remove(id)
            if kind == .rollback {
                tally.rollingBack.remove(id)
                if succeeded { tally.rolledBack += 1 } else { tally.rollbackFailed.append(id) }
                guard tally.rollingBack.isEmpty else { return }
                if track.code == .rollingBack {
                    track.code = .faulted
                    track.endTime = fleet.now
                } else if stage == .restoring {
                    judgeBatch(fleet, &steps)
                }
                return
            }
            if !succeeded { current.operationFailed.insert(id) }
            if succeeded, kind == .upgrade || kind == .create, let wait = terms.os?.healthWait {
                waits.healthDeadline[id] = fleet.now + wait
                steps.append(.schedule(.settle(upgrade: Int32(terms.number)), at: fleet.now + wait))
            }
            advance(fleet, &steps)
        }
    }

    /// The answers to `askDeferrals`, in the order asked: an instance that goes ahead starts its
    /// upgrade; one that defers waits for an approval or for its own time to run out.
    func deferralsAnswered(_ answers: [(id: Int, answer: OSUpgradeDeferral)], _ fleet: any FleetView) -> [RollingStep] {
        handle { steps in
            for (id, answer) in answers {
                switch answer {
                case .none:
                    steps.append(.begin(.upgrade, id: id, targetVersion: terms.targetVersion))
                    continue
                case .untilApproved:
                    steps.append(.emit(.osUpgradeDeferred(approveAfter: nil), instance: id, batch: current.number, phase: current.phase))
                    waits.untilApproved.insert(id)
                case .approveAfter(let wait):
                    steps.append(.emit(.osUpgradeDeferred(approveAfter: wait), instance: id, batch: current.number, phase: current.phase))
                    steps.append(.schedule(.approve(upgrade: Int32(terms.number), id: Int32(id)), at: fleet.now + max(0, wait)))
                }
                waits.deferred.insert(id)
            }
        }
    }

    /// Instance `id`'s deferral ends (`byAction`: approved, else its own time ran out).
    func approve(_ id: Int, byAction: Bool) -> [RollingStep] {
        waits.deferred.remove(id)
        waits.untilApproved.remove(id)
        return [.emit(.osUpgradeApproved(byAction: byAction), instance: id, batch: current.number, phase: current.phase),
                .begin(.upgrade, id: id, targetVersion: terms.targetVersion)]
    }

    /// The one cancel: no new batch starts; operations already started finish and count by their
    /// own outcome. `supersededBy` names the newer model update that cancels it, if one does.
    func cancel(supersededBy reason: String?, at now: Millis) -> [RollingStep] {
        track.code = .cancelled
        track.lastAction = "Cancel"
        track.lastActionTime = now
        track.endTime = now
        if stage == .pausing { stage = .done }
        returnDeferred()
        // A batch waiting only for its instances' health settles now: nothing stays in
        // progress, and MaxSurge deletes the old instances whose new ones are Healthy.
        return [.emit(.upgradeCancelled(upgrade: terms.number, supersededBy: reason)), .schedule(.settle(upgrade: Int32(terms.number)), at: now)]
    }

    /// A cancel takes deferred instances out of their batch untouched: they count as pending.
    private func returnDeferred() {
        let deferred = waits.deferred
        guard !deferred.isEmpty else { return }
        tally.returnedToPending += deferred.count
        current.ids.removeAll { deferred.contains($0) }
        current.waitCursor = 0
        current.inFlight.subtract(deferred)
        current.watching.subtract(deferred)
        for id in deferred { tally.previousVersion[id] = nil }
        waits.deferred = []
        waits.untilApproved = []
    }

    /// The status `get-latest` shows for this upgrade.
    func status(location: String) -> RollingUpgradeStatus {
        RollingUpgradeStatus(location: location, policy: terms.policy,
                             progress: Progress(successfulInstanceCount: tally.successful.count, failedInstanceCount: tally.failed.count,
                                                inProgressInstanceCount: inProgressCount, pendingInstanceCount: pendingCount),
                             code: track.code, lastAction: track.lastAction, lastActionTime: track.lastActionTime,
                             startTime: terms.startTime, error: track.error)
    }
}
