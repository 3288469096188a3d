/// What a sweep keeps of one run: its outcome and figures, not its events. A sweep of 10,000
/// seeds holds 10,000 of these.
public struct RunDigest: Equatable, Sendable {
    /// The run's seed.
    public var seed: UInt64
    /// The latest rolling upgrade's final code (`Completed`, `Faulted`, …); nil when none ran.
    public var code: RunningCode?
    /// Its `error.code`, when it faulted.
    public var errorCode: UpgradeErrorCode?
    /// From the first upgrade activity to its end, in seconds; nil when there was none.
    public var timeToFinish: Double?
    /// The fewest serving instances; nil when there was no upgrade activity.
    public var lowestHealthy: Int?
    /// Σ over time of (capacity − serving), in instance-seconds; nil when there was no activity.
    public var unavailable: Double?
    /// The run stopped at its time limit with work left.
    public var hitTimeLimit: Bool
    /// Whether each expectation key held, in the definition's order.
    public var held: [Bool]
    /// Instances the latest upgrade counted failed, ascending.
    public var failed: [Int]
    /// Instances that exist at the end on an older model, ascending.
    public var leftBehind: [Int]
    /// Lifecycle hooks (SPEC §6b): whether any event was raised, whether a `defaultAction`
    /// fired in one, how long the latest upgrade's batches waited in all (seconds), and the
    /// instances its events rejected. Not carried by sweep parts (`--shard`).
    public var hooksRaised = false
    public var defaultActionFired = false
    public var hookWait: Double?
    public var hookRejected: [Int] = []

    /// A digest of every field.
    public init(seed: UInt64, code: RunningCode?, errorCode: UpgradeErrorCode?, timeToFinish: Double?, lowestHealthy: Int?, unavailable: Double?,
                hitTimeLimit: Bool, held: [Bool], failed: [Int], leftBehind: [Int]) {
        self.seed = seed
        self.code = code
        self.errorCode = errorCode
        self.timeToFinish = timeToFinish
        self.lowestHealthy = lowestHealthy
        self.unavailable = unavailable
        self.hitTimeLimit = hitTimeLimit
        self.held = held
        self.failed = failed
        self.leftBehind = leftBehind
    }

    /// The digest of `record`.
    public init(_ record: RunRecord) {
        let summary = record.summary
        self.init(seed: record.seed, code: summary.status?.code, errorCode: summary.status?.error?.code,
                  timeToFinish: summary.availability?.timeToFinishSeconds, lowestHealthy: summary.availability?.lowestHealthy,
                  unavailable: summary.availability?.unavailableInstanceSeconds, hitTimeLimit: summary.hitTimeLimit,
                  held: record.expectations.map(\.held), failed: summary.failed.sorted(),
                  leftBehind: record.instances.filter { $0.leftBehind != nil }.map(\.id))
        let hooks = summary.hooks
        hooksRaised = hooks.events > 0
        defaultActionFired = hooks.defaultedEvents > 0
        hookWait = hooks.batchWaits.isEmpty ? nil : Double(hooks.totalBatchWait) / 1000
        hookRejected = hooks.rejected.sorted()
    }
}
