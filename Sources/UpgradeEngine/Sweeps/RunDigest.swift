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
    /// Whether each expectation key held, in the definition's order, each named by its key.
    public var held: [HeldKey]
    /// Instances the latest upgrade counted failed, ascending.
    public var failed: [Int]
    /// Instances that exist at the end on an older model, ascending.
    public var leftBehind: [Int]
    /// The capacity wanted when the run came down to its lowest healthy (what `lowestHealthy.C`
    /// requirements measure against: a scale after the dip does not change it); the capacity
    /// the run ended with when there was no upgrade activity; nil when not known.
    public var capacity: Int?
    /// Lifecycle hooks (SPEC §6b): whether any event was raised, whether a `defaultAction`
    /// fired in one, how long the latest upgrade's batches waited in all (seconds), and the
    /// instances its events rejected. Not carried by sweep parts (`--shard`).
    public var hooksRaised = false
    public var defaultActionFired = false
    public var hookWait: Double?
    public var hookRejected: [Int] = []
    /// How the scenario's gate did on this seed, when the sweep scored it (`--shadow-gate`).
    public var shadow: ShadowOutcome?
    /// The seconds the gate added to the time to finish (with it minus without), when scored.
    public var shadowTimeAdded: Double?
    /// How many rolling upgrades the run started (a gate that rolls back starts one more).
    public var upgrades = 0

    /// A digest of every field.
    public init(seed: UInt64, code: RunningCode?, errorCode: UpgradeErrorCode?, timeToFinish: Double?, lowestHealthy: Int?, unavailable: Double?,
                hitTimeLimit: Bool, held: [HeldKey], failed: [Int], leftBehind: [Int], capacity: Int? = nil) {
        self.capacity = capacity
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
                  held: record.expectations.map { HeldKey($0.key, $0.held) }, failed: summary.failed.sorted(),
                  leftBehind: record.instances.filter { $0.leftBehind != nil }.map(\.id),
                  capacity: summary.availability?.capacityAtLowest ?? summary.capacity)
        let hooks = summary.hooks
        hooksRaised = hooks.events > 0
        defaultActionFired = hooks.defaultedEvents > 0
        hookWait = hooks.batchWaits.isEmpty ? nil : Double(hooks.totalBatchWait) / 1000
        hookRejected = hooks.rejected.sorted()
        upgrades = record.upgrades
    }

    /// Whether the run kept at least `share` (0...1) of its capacity serving throughout its
    /// upgrade activity: its lowest healthy is at least `share` × capacity. A run without upgrade
    /// activity took nothing down; one whose capacity is not known is not counted as keeping it.
    public func keptServing(_ share: Double) -> Bool {
        guard let lowestHealthy else { return true }
        guard let capacity else { return false }
        // Whole instances against a share: 80% of 5 asks for 4; 1e-9 absorbs the share's rounding.
        return Double(lowestHealthy) >= share * Double(capacity) - 1e-9
    }
}

/// One key of one expectation in a run: which key, and whether it held.
public struct HeldKey: Equatable, Sendable {
    /// The key, e.g. `minHealthy`.
    public var key: Expectation.Key
    /// Whether the run showed what it asked.
    public var held: Bool

    /// `key`, held or not.
    public init(_ key: Expectation.Key, _ held: Bool) {
        self.key = key
        self.held = held
    }
}

/// A gate scored on one seed against the same seed without it (`sweep --shadow-gate`): whether it
/// stopped the rollout (rejected an instance) and whether the rollout was bad (faulted, reached
/// its time limit, or an expectation failed: without the gate when it stopped, with it otherwise).
public enum ShadowOutcome: String, Equatable, Sendable, CaseIterable {
    /// Stopped a rollout that was bad without the gate.
    case trueStop
    /// Stopped a rollout that went well without the gate.
    case falseStop
    /// Let through a rollout that went well.
    case truePass
    /// Let through a rollout that was bad.
    case falsePass

    /// The outcome of a gate that `stopped` (or not), the rollout being `bad`.
    public init(stopped: Bool, bad: Bool) {
        self = stopped ? (bad ? .trueStop : .falseStop) : (bad ? .falsePass : .truePass)
    }
}
