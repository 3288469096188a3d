public import Formats

/// An error an action meets (the scenario's action fails; the run goes on unless it says so).
public struct EngineError: Error, Equatable, CustomStringConvertible {
    /// What the action met.
    public var message: String
    /// An error saying `message`.
    public init(_ message: String) { self.message = message }
    public var description: String { message }
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
