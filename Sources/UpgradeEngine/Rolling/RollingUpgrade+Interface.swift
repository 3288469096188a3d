import Formats

// What the rolling upgrade reads (a FleetView), what it returns (steps and timers) and the
// terms it was started with: the vocabulary between the state machine and its owner.

/// What a rolling upgrade reads about the scale set while it decides: a view it cannot change
/// (the simulation, or a snapshot a test builds). It returns `RollingStep`s, and its owner
/// carries them out in order.
protocol FleetView {
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
    /// The instance as Azure's errors name it: its instance id, or for a Flexible scale set,
    /// whose instance ids are VM names (SPEC §6b), its name.
    func wireID(of id: Int) -> String
    /// Present instances that count as unhealthy, ascending.
    var unhealthyPresent: [Int] { get }
    /// Instances that exist (not deleted), for the MaxSurge quota.
    var existingCount: Int { get }
    /// The id the next created instance gets (ids are handed out in order, never reused).
    var nextInstanceID: Int { get }
    /// Whether bringing any out-of-date instance to model `version` restarts it.
    func upgradeIsDisruptive(to version: Int) -> Bool
}

/// A wake-up a rolling upgrade asks its owner for: at the time given, the owner hands the
/// matching input back (`resume`, `settle`, `approve`), if the upgrade is still the latest.
enum RollingTimer: Equatable {
    /// The pause between batches ends: `resume`.
    case resume
    /// A wait ends (a cancel's settling, an automatic OS upgrade's health deadline): `settle`.
    case settle
    /// Instance `id`'s deferral runs out: `approve(id, byAction: false)`.
    case approve(Int)
}

/// One thing a rolling upgrade asks its owner to do.
enum RollingStep {
    /// Record an event.
    case emit(Payload, instance: Int? = nil, batch: Int? = nil, phase: Int? = nil)
    /// Start an operation on an instance (the owner asks the fault injector).
    case begin(OperationKind, id: Int, targetVersion: Int)
    /// Create the MaxSurge instance that replaces `old`, in its place, on `version`; it gets
    /// `expectedID` (the owner checks).
    case addSurgeInstance(replacing: Int, expectedID: Int, version: Int, batch: Int, phase: Int?)
    /// Wake the upgrade at `at` (milliseconds).
    case schedule(RollingTimer, at: Millis)
    /// The upgrade stopped moving (a cancelled batch settled): a superseding one may start.
    case settled
    /// Tell these instances their OS upgrade is coming and hand their answers back, in this
    /// order, to `deferralsAnswered` (the upgrade never calls a behaviour itself).
    case askDeferrals([Int])
    /// Raise the batch hook's lifecycle hook event for these instances, before batch `batch`;
    /// when it completes, hand the outcome to `batchHookCompleted`.
    case raiseBatchHook([Int], hook: LifecycleHook, batch: Int, phase: Int?)
    /// The batch hook's event still waiting no longer matters (the upgrade was cancelled): complete it.
    case abandonHook
}

/// What an owner asks of a rolling upgrade most often (before every event, at every health
/// change), as plain values: reading them from an upgrade held in an optional copies it (a
/// dozen retains and releases).
struct RollingOutline {
    /// The latest upgrade's number; nil before the first.
    var number: Int?
    var code: RunningCode?
    /// The batch it is in (0 before the first).
    var batchNumber = 0
    /// Instances are being upgraded, created, deleted or restored.
    var isWorking = false
    /// Some instance defers until approved, and every operation still running is such an
    /// upgrade.
    var waitsOnlyOnApprovals = false
    /// Instances whose health change may move it.
    var watching: InstanceIDSet = []
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

extension FleetView {
    /// A Uniform scale set's instance id, by default.
    func wireID(of id: Int) -> String { String(id) }
}
