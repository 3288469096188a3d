public import AzureWire
public import Formats
public import UpgradeEngine

/// Why one run of a scenario failed and the smallest change of its policy that makes the same
/// seed pass (`rehearse explain`): the run's causal chain read from its events, then policy
/// fields changed one at a time, closest value first, then in pairs, each candidate run with
/// the same seed (the script's random stream starts from the same seed: the same boots and
/// faults wherever the script draws them the same way).
public struct Explanation: Sendable {
    /// The seed explained.
    public var seed: UInt64
    /// Whether the run as given passed (no fault, every expectation held).
    public var passed: Bool
    /// The run as given, as its outcome.
    public var outcome: CandidateOutcome
    /// The budgets the policy gives the upgrade, and what used them, batch by batch.
    public var chain: [ChainStep]
    /// Every candidate tried, in the order tried.
    public var candidates: [CandidateOutcome]
    /// The smallest single changes that pass (one per policy field, the closest value), or else
    /// the passing pairs; empty when nothing tried passes.
    public var passing: [[PolicyOverride]]
    /// Whether pairs were searched (no single change passed).
    public var searchedPairs: Bool
    /// Whether the search stopped at its bound of runs with candidates left.
    public var exhausted: Bool
}

/// One step of a run's causal chain: at `time`, in `batch`, what happened and why.
public struct ChainStep: Equatable, Sendable {
    /// What kind of step.
    public enum Kind: String, Sendable {
        /// The upgrade started: its batch size and budgets.
        case started
        /// A batch started with these instances.
        case batch
        /// An instance of the upgrade failed its operation or became unhealthy.
        case instanceFailed
        /// A threshold check before or after a batch failed.
        case checkFailed
        /// The upgrade faulted.
        case faulted
        /// The upgrade completed.
        case completed
        /// An expectation of the script did not hold.
        case expectationFailed
    }

    /// What kind of step.
    public var kind: Kind
    /// When, in milliseconds.
    public var time: Millis
    /// The batch (1-based), when the step belongs to one.
    public var batch: Int?
    /// The instances it concerns.
    public var instances: [Int]
    /// The step's figures: a budget, a count, a threshold, a code (names fixed by kind).
    public var figures: [String: String]
}

/// One run of the explained seed with one change of policy.
public struct CandidateOutcome: Equatable, Sendable {
    /// The change (empty: the run as given).
    public var change: [PolicyOverride]
    /// Whether the run passed (no fault, every expectation held).
    public var passed: Bool
    /// Its digest: final code, error code, lowest healthy, time to finish.
    public var digest: RunDigest
    /// Expectations that did not hold, by key.
    public var failedKeys: [String]

    public static func == (a: CandidateOutcome, b: CandidateOutcome) -> Bool {
        a.change.map(\.description) == b.change.map(\.description) && a.passed == b.passed && a.digest == b.digest && a.failedKeys == b.failedKeys
    }
}

/// How `explain` searches.
public struct ExplainBounds: Sendable {
    /// The most candidate runs (singles and pairs together).
    public var runs: Int
    /// Values of each field tried in pairs (the closest ones).
    public var valuesInPairs: Int

    /// 300 runs, the 3 closest values of each field in pairs.
    public init(runs: Int = 300, valuesInPairs: Int = 3) {
        self.runs = runs
        self.valuesInPairs = valuesInPairs
    }
}

extension Rehearsal {
    /// Whether `record` passed: its latest upgrade did not fault, it did not stop at its time
    /// limit with work left, and every expectation held.
    public static func passed(_ record: RunRecord) -> Bool {
        record.failedExpectations.isEmpty && record.summary.status?.code != .faulted && !record.summary.hitTimeLimit
    }

    /// Explains `inputs.seed`'s run of `definition` (see `Explanation`). `fields` are the policy
    /// changes to try per field, each list closest value first (`ExplainCandidates.fields`).
    /// A run that already passes is explained without a search.
    public static func explain(_ definition: ScenarioDefinition, _ inputs: RunInputs, fields: [[PolicyOverride]],
                               bounds: ExplainBounds = ExplainBounds()) throws(RunFailure) -> Explanation {
        var recorded = inputs
        recorded.recordEvents = true
        let base = try run(definition, recorded)
        let outcome = Self.outcome(base, change: [])
        var explanation = Explanation(seed: inputs.seed, passed: outcome.passed, outcome: outcome, chain: ExplainChain.steps(base),
                                      candidates: [], passing: [], searchedPairs: false, exhausted: false)
        guard !outcome.passed else { return explanation }
        var budget = bounds.runs
        func attempt(_ change: [PolicyOverride]) throws(RunFailure) -> Bool? {
            guard budget > 0 else {
                explanation.exhausted = true
                return nil
            }
            budget -= 1
            var candidate = inputs
            candidate.recordEvents = false
            candidate.overrides = inputs.overrides + change
            let tried = Self.outcome(try run(definition, candidate), change: change)
            explanation.candidates.append(tried)
            return tried.passed
        }
        // One field at a time: the closest value that passes is that field's smallest change.
        for values in fields {
            for value in values {
                guard let passed = try attempt([value]) else { return explanation }
                if passed {
                    explanation.passing.append([value])
                    break
                }
            }
        }
        guard explanation.passing.isEmpty else { return explanation }
        // Pairs of fields, each among its closest values, closest pairs first.
        explanation.searchedPairs = true
        let near = fields.map { Array($0.prefix(bounds.valuesInPairs)) }
        for a in near.indices {
            for b in near.indices where b > a {
                pairs: for x in near[a] {
                    for y in near[b] {
                        guard let passed = try attempt([x, y]) else { return explanation }
                        if passed {
                            explanation.passing.append([x, y])
                            break pairs
                        }
                    }
                }
            }
        }
        return explanation
    }

    static func outcome(_ record: RunRecord, change: [PolicyOverride]) -> CandidateOutcome {
        CandidateOutcome(change: change, passed: passed(record), digest: RunDigest(record),
                         failedKeys: record.failedExpectations.map(\.key.rawValue))
    }
}

/// The policy changes `explain` tries, per field, closest value first: more room for unhealthy
/// instances (upgraded and in all), smaller batches, a longer pause, the unhealthy first, MaxSurge.
public enum ExplainCandidates {
    /// The changes of `policy`'s rolling fields, one list per field, each closest value first;
    /// a field at its limit has none.
    public static func fields(_ policy: RollingUpgradePolicy) -> [[PolicyOverride]] {
        func path(_ name: String) -> String { "rollingUpgradePolicy.\(name)" }
        func raise(_ current: Int) -> [Int] { unique([5, 10, 15, 20, 30, 50].map { min(100, current + $0) }.filter { $0 > current }) }
        let batch = policy.maxBatchInstancePercent
        let smaller = unique([batch - 5, batch - 10, batch / 2, 10, 5].filter { $0 >= 5 && $0 < batch }.sorted(by: >))
        let pause = policy.pauseTimeBetweenBatches
        let longer = [60_000, 120_000, 300_000, 600_000, 1_800_000].filter { $0 > pause }
        var fields: [[PolicyOverride]] = [
            raise(policy.maxUnhealthyUpgradedInstancePercent).map { PolicyOverride(path: path("maxUnhealthyUpgradedInstancePercent"), value: String($0)) },
            raise(policy.maxUnhealthyInstancePercent).map { PolicyOverride(path: path("maxUnhealthyInstancePercent"), value: String($0)) },
            smaller.map { PolicyOverride(path: path("maxBatchInstancePercent"), value: String($0)) },
            longer.map { PolicyOverride(path: path("pauseTimeBetweenBatches"), value: ISODuration.format(Millis($0))) },
        ]
        if !policy.prioritizeUnhealthyInstances { fields.append([PolicyOverride(path: path("prioritizeUnhealthyInstances"), value: "true")]) }
        if !policy.maxSurge { fields.append([PolicyOverride(path: path("maxSurge"), value: "true")]) }
        return fields.filter { !$0.isEmpty }
    }

    static func unique(_ values: [Int]) -> [Int] {
        var seen = Set<Int>()
        return values.filter { seen.insert($0).inserted }
    }
}

/// What `sweep --explain` finds over a sweep's failing seeds: every single change tried on each
/// of them (no early stop, so each change's count is exact), and the seeds each one passes.
public struct ChangeScore: Equatable, Sendable {
    /// The change.
    public var change: PolicyOverride
    /// The failing seeds it makes pass, ascending.
    public var passes: [UInt64]
}

extension Rehearsal {
    /// Whether a run that `digest` summarises passed: no fault, not stopped at its time limit,
    /// every expectation held (as `passed(_:)` says of a record).
    public static func passed(_ digest: RunDigest) -> Bool {
        digest.code != .faulted && !digest.hitTimeLimit && digest.held.allSatisfy(\.held)
    }

    /// Every change of `fields` run on each of `seeds` (failing seeds of a sweep), with the seeds
    /// it passes, in the order of `fields`.
    public static func scores(_ definition: ScenarioDefinition, _ inputs: RunInputs, seeds: [UInt64],
                              fields: [[PolicyOverride]]) throws(RunFailure) -> [ChangeScore] {
        var scores: [ChangeScore] = []
        for change in fields.flatMap({ $0 }) {
            var score = ChangeScore(change: change, passes: [])
            for seed in seeds {
                var candidate = inputs.with(seed: seed)
                candidate.recordEvents = false
                candidate.overrides = inputs.overrides + [change]
                if passed(try run(definition, candidate)) { score.passes.append(seed) }
            }
            scores.append(score)
        }
        return scores
    }
}
