public import Formats

/// What a sweep found, from the digests of its runs: the share of each final code and error
/// code, of runs in which each expectation held, of runs past a deadline, the distributions of
/// time to finish, lowest healthy and unavailability, and the instances that failed or were left
/// behind most often. The same digests give the same report, byte for byte when rendered.
public struct SweepReport: Equatable, Sendable {
    /// What was swept: the scenario's path, the seeds, the overrides.
    public var scenario: String
    /// The seeds.
    public var seeds: SeedRange
    /// The overrides every run had, as written (`rollingUpgradePolicy.maxBatchInstancePercent=10`).
    public var overrides: [String]
    /// Every run's digest, by seed.
    public var runs: [RunDigest]
    /// The expectations, in the script's order (what each digest's `held` refers to).
    public var expectations: [ExpectationKey]
    /// The deadline asked for, in milliseconds.
    public var deadline: Millis?

    /// One key of one expectation: where, which, what was asked.
    public struct ExpectationKey: Equatable, Sendable {
        /// `file:line`.
        public var location: String
        /// The key, e.g. `code`.
        public var key: Expectation.Key
        /// What was asked, as the status prints it.
        public var expected: String

        /// A key of the expectation at `location`.
        public init(location: String, key: Expectation.Key, expected: String) {
            self.location = location
            self.key = key
            self.expected = expected
        }
    }

    /// The report of `runs` (in seed order).
    public init(scenario: String, seeds: SeedRange, overrides: [String], runs: [RunDigest], expectations: [ExpectationKey],
                deadline: Millis?) {
        self.scenario = scenario
        self.seeds = seeds
        self.overrides = overrides
        self.runs = runs
        self.expectations = expectations
        self.deadline = deadline
    }

    /// The expectation keys of `expectations`, in the order runs check them, each asked value
    /// labelled by `label` (the renderers' text; judging reads only the keys and their order).
    public static func keys(of expectations: [Expectation], label: (ExpectedValue) -> String) -> [ExpectationKey] {
        expectations.flatMap { expectation in
            expectation.expectedValues.map { ExpectationKey(location: expectation.location, key: $0.key, expected: label($0.expected)) }
        }
    }

    /// The codes a run can end with, in the order reports list them; `none`: no upgrade ran.
    public static let codes = ["Completed", "Faulted", "Cancelled", "RollingForward", "RollingBack", "none"]

    /// How many runs.
    public var total: Int { runs.count }

    /// The share of runs per final code, in `codes` order, codes no run showed left out.
    public var outcomes: [(code: String, share: Share)] {
        Self.codes.compactMap { code in
            let n = runs.count { ($0.code?.rawValue ?? "none") == code }
            return n == 0 ? nil : (code, Share(n, of: total))
        }
    }

    /// The share of runs per error code, most frequent first (then by name).
    public var errorCodes: [(code: String, share: Share)] {
        var counts: [String: Int] = [:]
        for run in runs { if let code = run.errorCode?.rawValue { counts[code, default: 0] += 1 } }
        return counts.sorted { ($1.value, $0.key) < ($0.value, $1.key) }.map { ($0.key, Share($0.value, of: total)) }
    }

    /// The share of runs in which each expectation key held.
    public var held: [(key: ExpectationKey, share: Share)] {
        expectations.enumerated().map { i, key in
            (key, Share(runs.count { i < $0.held.count && $0.held[i].key == key.key && $0.held[i].held }, of: total))
        }
    }

    /// The share of runs whose upgrade had not ended by the deadline: it took longer, it was
    /// still going when the run stopped at its time limit, or it never ended (`endedWithin`).
    public var pastDeadline: Share? {
        guard let deadline else { return nil }
        return Share(runs.count { !$0.endedWithin(deadline) }, of: total)
    }

    /// Time to finish, in seconds, over runs with upgrade activity.
    public var timeToFinish: Distribution { runs.timeToFinish }
    /// The fewest serving instances, over runs with upgrade activity.
    public var lowestHealthy: Distribution { runs.lowestHealthy }
    /// Instance-seconds unavailable, over runs with upgrade activity.
    public var unavailable: Distribution { runs.unavailable }

    /// Lifecycle hooks: the share of runs in which a `defaultAction` fired, over every run; nil
    /// when no run raised an event.
    public var defaultActionFired: Share? {
        guard runs.contains(where: \.hooksRaised) else { return nil }
        return Share(runs.count(where: \.defaultActionFired), of: total)
    }
    /// How long each run's latest upgrade waited for its batch events in all, in seconds, over
    /// the runs with batch events.
    public var hookWait: Distribution { Distribution(runs.compactMap(\.hookWait)) }
    /// The instances lifecycle hook events rejected in the most runs, at most `limit`.
    public func hookRejectedMostOften(limit: Int = 10) -> [(id: Int, share: Share)] { mostOften(\.hookRejected, limit: limit) }

    /// The instances counted failed in the most runs, most first (then by id), at most `limit`.
    public func failedMostOften(limit: Int = 10) -> [(id: Int, share: Share)] { mostOften(\.failed, limit: limit) }
    /// The instances left on an older model in the most runs, at most `limit`.
    public func leftBehindMostOften(limit: Int = 10) -> [(id: Int, share: Share)] { mostOften(\.leftBehind, limit: limit) }

    private func mostOften(_ ids: KeyPath<RunDigest, [Int]>, limit: Int) -> [(id: Int, share: Share)] {
        var counts: [Int: Int] = [:]
        for run in runs { for id in run[keyPath: ids] { counts[id, default: 0] += 1 } }
        return counts.sorted { ($1.value, $0.key) < ($0.value, $1.key) }.prefix(limit).map { ($0.key, Share($0.value, of: total)) }
    }
}

extension [RunDigest] {
    /// Time to finish, in seconds, over the runs with upgrade activity.
    public var timeToFinish: Distribution { Distribution(compactMap(\.timeToFinish)) }
    /// The fewest serving instances, over the runs with upgrade activity.
    public var lowestHealthy: Distribution { Distribution(compactMap { $0.lowestHealthy.map(Double.init) }) }
    /// Instance-seconds unavailable, over the runs with upgrade activity.
    public var unavailable: Distribution { Distribution(compactMap(\.unavailable)) }
    /// The share of the runs whose latest upgrade faulted.
    public var faulted: Share { Share(count { $0.code == .faulted }, of: count) }
}
