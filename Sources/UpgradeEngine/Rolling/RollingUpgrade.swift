import AzureWire

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
    /// The instance's answer to the notice of its OS upgrade (a behaviour may run).
    func deferral(of id: Int) throws -> OSUpgradeDeferral
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
}

/// One rolling upgrade (SPEC §4, §5, §6) as a state machine: each input (it starts, an
/// operation ends, a watched instance's health changes, a pause or a wait ends, an approval, a
/// cancel) updates its state and returns the steps its host carries out. Decisions read the
/// scale set through a `FleetView` and change nothing there.
final class RollingUpgrade {
    /// `restoring`: an automatic OS upgrade returns the batch's failed instances to their
    /// previous image before it judges the batch.
    enum Stage { case idle, upgrading, surgeCreating, surgeDeleting, restoring, pausing, done }

    let number: Int
    let policy: RollingUpgradePolicy
    /// Instances when the upgrade started: the denominator of every threshold.
    let capacity: Int
    let targetVersion: Int
    let startTime: Millis
    /// The scale set's name (error targets) and its quota (MaxSurge).
    let scaleSet: String
    let quota: Int?
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
    /// The instances of the batch last finished, for the check that judges it.
    var lastBatch: Set<Int> = []
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
    /// The steps of the input being handled.
    var steps: [RollingStep] = []

    init(number: Int, policy: RollingUpgradePolicy, capacity: Int, targetVersion: Int, startTime: Millis, scaleSet: String,
         quota: Int?, queue: BatchQueue, skipped: [Int], protected: [Int], os: OSUpgradeTerms?) {
        self.os = os
        self.number = number
        self.policy = policy
        self.capacity = capacity
        self.targetVersion = targetVersion
        self.startTime = startTime
        self.lastActionTime = startTime
        self.scaleSet = scaleSet
        self.quota = quota
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

    // MARK: Inputs

    /// Runs one input's handling and hands back the steps it produced.
    private func handle(_ body: () throws -> Void) rethrows -> [RollingStep] {
        steps = []
        try body()
        defer { steps = [] }
        return steps
    }

    /// The first batch (after the host announced the upgrade).
    func begin(_ fleet: any FleetView) throws -> [RollingStep] { try handle { try startNextBatch(fleet) } }

    /// The pause between batches ended.
    func resume(_ fleet: any FleetView) throws -> [RollingStep] {
        try handle { if code == .rollingForward { try startNextBatch(fleet) } }
    }

    /// A wait ended (a cancel's settling, an automatic OS upgrade's health deadline).
    func settle(_ fleet: any FleetView) throws -> [RollingStep] { try handle { try advance(fleet) } }

    /// A watched instance's committed health changed.
    func healthChanged(_ id: Int, _ fleet: any FleetView) throws -> [RollingStep] {
        guard code == .rollingForward, watching.contains(id) else { return [] }
        return try handle { try advance(fleet) }
    }

    /// An operation this upgrade started ended.
    func operationFinished(_ id: Int, succeeded: Bool, kind: OperationKind, _ fleet: any FleetView) throws -> [RollingStep] {
        try handle {
            inFlight.remove(id)
            if kind == .rollback {
                rollingBack.remove(id)
                if succeeded { rolledBack += 1 } else { rollbackFailed.append(id) }
                guard rollingBack.isEmpty else { return }
                if code == .rollingBack {
                    code = .faulted
                    endTime = fleet.now
                } else if stage == .restoring {
                    try judgeBatch(fleet)
                }
                return
            }
            if !succeeded { opFailed.insert(id) }
            if succeeded, kind == .upgrade || kind == .create, let wait = os?.healthWait {
                healthDeadline[id] = fleet.now + wait
                steps.append(.schedule(.settle(upgrade: number), at: fleet.now + wait))
            }
            try advance(fleet)
        }
    }

    /// Instance `id`'s deferral ends (`byAction`: approved, else its own time ran out).
    func approve(_ id: Int, byAction: Bool) -> [RollingStep] {
        handle {
            deferred.remove(id)
            untilApproved.remove(id)
            steps.append(.emit(.osUpgradeApproved(byAction: byAction), instance: id, batch: batchNumber, phase: phase))
            steps.append(.begin(.upgrade, id: id, targetVersion: targetVersion))
        }
    }

    /// The one cancel: no new batch starts; operations already started finish and count by their
    /// own outcome. `supersededBy` names the newer model update that cancels it, if one does.
    func cancel(supersededBy reason: String?, at now: Millis) -> [RollingStep] {
        handle {
            code = .cancelled
            lastAction = "Cancel"
            lastActionTime = now
            endTime = now
            if stage == .pausing { stage = .done }
            steps.append(.emit(.upgradeCancelled(upgrade: number, supersededBy: reason)))
            returnDeferred()
            // A batch waiting only for its instances' health settles now: nothing stays in
            // progress, and MaxSurge deletes the old instances whose new ones are Healthy.
            steps.append(.schedule(.settle(upgrade: number), at: now))
        }
    }

    /// A cancel takes deferred instances out of their batch untouched: they count as pending.
    private func returnDeferred() {
        guard !deferred.isEmpty else { return }
        returnedToPending += deferred.count
        batch.removeAll { deferred.contains($0) }
        waitCursor = 0
        inFlight.subtract(deferred)
        watching.subtract(deferred)
        for id in deferred { previousVersion[id] = nil }
        deferred = []
        untilApproved = []
    }

    /// The status `get-latest` shows for this upgrade.
    func status(location: String) -> RollingUpgradeStatus {
        RollingUpgradeStatus(location: location, policy: policy,
                             progress: Progress(successfulInstanceCount: successful.count, failedInstanceCount: failed.count,
                                                inProgressInstanceCount: inProgressCount, pendingInstanceCount: pendingCount),
                             code: code, lastAction: lastAction, lastActionTime: lastActionTime, startTime: startTime, error: error)
    }
}
