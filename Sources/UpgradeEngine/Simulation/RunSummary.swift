public import Formats

/// An error an action meets (the scenario's action fails; the run goes on unless it says so).
public struct EngineError: Error, Equatable, CustomStringConvertible {
    /// What the action met.
    public var message: String
    /// What refused it, as data (nil: an error of another kind passed on).
    public var refusal: Refusal?
    /// An error saying `message`; `refusal`, what refused the action.
    public init(_ message: String, _ refusal: Refusal? = nil) {
        self.message = message
        self.refusal = refusal
    }
    public var description: String { message }

    /// Why the engine refused an action: the facts its message says.
    public enum Refusal: Equatable, Sendable {
        /// The instances named do not exist (or are being deleted).
        case noSuchInstances([Int])
        /// The instances named are in another operation.
        case busy([Int])
        /// The instances named are protected from scale set actions (Azure's refusal).
        case protected([Int])
        /// No rolling upgrade is running to cancel (Azure's refusal).
        case nothingToCancel
        /// No unprotected instance runs `imageReference.version` latest (Azure's refusal of an
        /// on-demand OS upgrade).
        case notOnLatestImage
        /// The action runs as a rolling upgrade and the scale set has no health source.
        case needsHealthSource
        /// A load-balancer probe is the health source: the extension cannot be added too.
        case oneHealthSource
        /// The model, policy or hooks the action would make have these problems.
        case invalid([Problem])
        /// The action would go past one of the run's limits.
        case runLimit(RunLimitExceeded)
        /// These instances are not deferring an OS upgrade (none named: no instance is).
        case notDeferring([Int])
        /// A capacity outside the range allowed.
        case capacity(Int, allowed: ClosedRange<Int>)
        /// A scale-out past the subscription's quota.
        case overQuota(count: Int, quota: Int)
        /// No lifecycle hook event is Active.
        case noActiveHookEvent
        /// The event named is not the Active one (`exists`: it is one, Completed).
        case hookEventNotActive(String, exists: Bool, active: String)
        /// The instance is not a target of the Active event.
        case notAHookTarget(Int, event: String)
        /// A `waitUntil` outside the event's window (from now to its `maxWaitUntil`).
        case waitOutside(until: Millis, earliest: Millis, latest: Millis)
        /// The clock asked to move by this amount, which is negative.
        case clockBackwards(Millis)
        /// A time past the virtual clock's latest instant.
        case pastLatestInstant
        /// The run has finished.
        case runFinished
        /// The run's time limit, this one, has passed.
        case timeLimitPassed(Millis)
    }
}

extension EngineError: UserFacingError {
    /// An action's error has no place of its own; the script's error names the line.
    public var place: Location? { nil }
    /// Bad input: 2.
    public var exitCode: Int32 { 2 }
}

/// How a run went for the scale set's availability, measured from the first upgrade activity
/// to the end of the run.
public struct Availability: Equatable, Sendable {
    /// The fewest instances that were serving (running and committed Healthy).
    public var lowestHealthy: Int
    /// When the fleet first came down to `lowestHealthy`, in milliseconds since the run began.
    public var lowestHealthyAt: Millis
    /// The capacity wanted at `lowestHealthyAt`: what `lowestHealthy.C` requirements measure
    /// the dip against (the capacity at the end may differ after a scale-out or scale-in).
    public var capacityAtLowest: Int
    /// Σ over time of (capacity − serving instances), in instance-seconds.
    public var unavailableInstanceSeconds: Double
    /// From the first upgrade activity to its end, in seconds.
    public var timeToFinishSeconds: Double
}

/// What a finished run leaves behind.
public struct RunSummary: Equatable, Sendable {
    /// When the run ended, in milliseconds.
    public var endTime: Millis
    /// The latest rolling upgrade's status (nil when none ran).
    public var status: RollingUpgradeStatus?
    /// Instances the latest rolling upgrade skipped (`SkipUpgrade`) and protected ones.
    public var skipped: [Int]
    /// Instances with protectFromScaleSetActions, ascending.
    public var protected: [Int]
    /// How available the scale set stayed; nil when no upgrade activity happened.
    public var availability: Availability?
    /// Whether the run stopped at its time limit with work left.
    public var hitTimeLimit: Bool
    /// How many health probes the run made (calls into the health source).
    public var probes: Int
    /// The capacity at the end (scaling changes it).
    public var capacity: Int
    /// Instances whose rollback failed: they stay failed on the new model.
    public var rollbackFailed: [Int] = []
    /// How many instances the latest rolling upgrade rolled back (or restored) successfully.
    public var rolledBack = 0
    /// Instances deferring their OS upgrade until an approval that never came.
    public var awaitingApproval: [Int] = []
    /// Every OS image upgrade of the run, oldest first (`az vmss get-os-upgrade-history`).
    public var osUpgradeHistory: [OSUpgradeRecord] = []
    /// The instances the latest rolling upgrade counted failed, in the order it did.
    public var failed: [Int] = []
    /// When the latest rolling upgrade started and reached its final code (ms); nil when none
    /// ran, or it had not ended.
    public var upgradeStarted: Millis?
    public var upgradeEnded: Millis?
    /// What lifecycle hooks did in the run (SPEC §6b); empty when none was raised.
    public var hooks = HookSummary()

    /// A summary of every field; the lists default to empty.
    public init(endTime: Millis, status: RollingUpgradeStatus?, skipped: [Int], protected: [Int], availability: Availability?,
                hitTimeLimit: Bool, probes: Int, capacity: Int, rollbackFailed: [Int] = [], rolledBack: Int = 0,
                awaitingApproval: [Int] = [], osUpgradeHistory: [OSUpgradeRecord] = [], failed: [Int] = [],
                upgradeStarted: Millis? = nil, upgradeEnded: Millis? = nil, hooks: HookSummary = HookSummary()) {
        self.endTime = endTime
        self.status = status
        self.skipped = skipped
        self.protected = protected
        self.availability = availability
        self.hitTimeLimit = hitTimeLimit
        self.probes = probes
        self.capacity = capacity
        self.rollbackFailed = rollbackFailed
        self.rolledBack = rolledBack
        self.awaitingApproval = awaitingApproval
        self.osUpgradeHistory = osUpgradeHistory
        self.failed = failed
        self.upgradeStarted = upgradeStarted
        self.upgradeEnded = upgradeEnded
        self.hooks = hooks
    }
}

/// Lifecycle hooks in a run: the time each batch of the latest upgrade waited for its event, the
/// instances its events rejected, and how many events and targets got the default action.
public struct HookSummary: Equatable, Sendable {
    /// Events raised in the run.
    public var events = 0
    /// Events in which at least one target got the `defaultAction` at `waitUntil`.
    public var defaultedEvents = 0
    /// Targets that got the `defaultAction`.
    public var defaultedTargets = 0
    /// Per batch event of the latest upgrade, in order, how long it waited (ms).
    public var batchWaits: [Millis] = []
    /// The latest upgrade's instances its batch events rejected, in the order rejected.
    public var rejected: [Int] = []
    /// Scheduling events the scale set's answer (or default) rejected: those upgrades never ran.
    public var rejectedSchedules = 0

    /// Nothing raised.
    public init() {}

    /// The whole wait of the latest upgrade for its batch events (ms).
    public var totalBatchWait: Millis { batchWaits.reduce(0, +) }
}
