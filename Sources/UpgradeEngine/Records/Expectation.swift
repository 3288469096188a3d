public import Formats

/// What a run must show at its end (a scenario's `expect { ... }`): every field is optional and
/// only the fields given are checked. Counts are in instances.
public struct Expectation: Equatable, Sendable {
    /// A key an `expect` table can hold, as scripts write it (the closed set, checked when a
    /// scenario loads).
    public enum Key: String, CaseIterable, Comparable, Sendable {
        case code, errorCode, failed, finishedWithin, inProgress, leftBehind, maxUnavailable, minHealthy, pending, protected, rolledBack
        case skipped, successful, upgrades

        /// What the key compares.
        public var meaning: String {
            switch self {
            case .code: "runningStatus.code: \(RunningCode.allCases.map(\.rawValue).joined(separator: ", "))"
            case .errorCode: "error.code, e.g. MaxUnhealthyInstancePercentExceededBeforeRollingUpgrade"
            case .successful: "progress.successfulInstanceCount"
            case .failed: "progress.failedInstanceCount"
            case .inProgress: "progress.inProgressInstanceCount"
            case .pending: "progress.pendingInstanceCount"
            case .skipped: "the list of skipped instance ids"
            case .protected: "the list of protected instance ids"
            case .minHealthy: "the fewest serving instances during the upgrades must be at least this"
            case .finishedWithin: "the upgrades ended within this long after they began (ISO 8601, e.g. \"PT60M\", or seconds)"
            case .maxUnavailable: "instance-seconds of lost capacity must be at most this"
            case .upgrades: "how many rolling upgrades started"
            case .leftBehind: "how many instances end the run on an older model than the newest (protected, skipped, failed, not reached, not upgraded)"
            case .rolledBack: "instances the latest rolling upgrade returned to their previous model or image successfully"
            }
        }

        public static func < (a: Key, b: Key) -> Bool { a.rawValue < b.rawValue }
    }

    /// The keys an expectation understands, with what each compares.
    public static var keys: [String: String] { Dictionary(uniqueKeysWithValues: Key.allCases.map { ($0.rawValue, $0.meaning) }) }

    /// Where it was written (`file:line`).
    public var location: String
    /// `runningStatus.code` expected (RollingForward, RollingBack, Cancelled, Completed, Faulted).
    public var code: RunningCode?
    /// `error.code` expected.
    public var errorCode: UpgradeErrorCode?
    /// `progress.successfulInstanceCount` expected.
    public var successful: Int?
    /// `progress.failedInstanceCount` expected.
    public var failed: Int?
    /// `progress.inProgressInstanceCount` expected.
    public var inProgress: Int?
    /// `progress.pendingInstanceCount` expected.
    public var pending: Int?
    /// The skipped instance ids expected, ascending.
    public var skipped: [Int]?
    /// The protected instance ids expected, ascending.
    public var protected: [Int]?
    /// The fewest serving instances must be at least this many.
    public var minHealthy: Int?
    /// The upgrade activity must have ended within this long after it began, in milliseconds
    /// (a pipeline's timeout: Terraform gives an update 60 minutes).
    public var finishedWithin: Millis?
    /// Instance-seconds of lost capacity must be at most this.
    public var maxUnavailable: Int?
    /// How many rolling upgrades started.
    public var upgrades: Int?
    /// How many instances (of those that exist at the end) are not on the newest model.
    public var leftBehind: Int?
    /// Instances the latest upgrade rolled back (or restored) successfully.
    public var rolledBack: Int?

    /// An expectation written at `location` that checks nothing yet.
    public init(location: String) {
        self.location = location
    }

    /// Every key this expectation sets, in key order, with what it asks for: the keys a report
    /// of its runs lists, known when the scenario loads, before any run.
    public var expectedValues: [(key: Key, expected: ExpectedValue)] {
        let text = ObservedValue.text, number = ObservedValue.count, list = ObservedValue.ids
        let asked: [(Key, ExpectedValue?)] = [
            (.code, code.map { .equal(text($0.rawValue)) }),
            (.errorCode, errorCode.map { .equal(text($0.rawValue)) }),
            (.failed, failed.map { .equal(number($0)) }),
            (.finishedWithin, finishedWithin.map(ExpectedValue.within)),
            (.inProgress, inProgress.map { .equal(number($0)) }),
            (.leftBehind, leftBehind.map { .equal(number($0)) }),
            (.maxUnavailable, maxUnavailable.map(ExpectedValue.atMost)),
            (.minHealthy, minHealthy.map(ExpectedValue.atLeast)),
            (.pending, pending.map { .equal(number($0)) }),
            (.protected, protected.map { .equal(list($0)) }),
            (.rolledBack, rolledBack.map { .equal(number($0)) }),
            (.skipped, skipped.map { .equal(list($0)) }),
            (.successful, successful.map { .equal(number($0)) }),
            (.upgrades, upgrades.map { .equal(number($0)) }),
        ]
        return asked.compactMap { key, expected in expected.map { (key, $0) } }
    }

    /// The result of every key this expectation sets, in key order, held or not; `instances`,
    /// where each instance ended.
    public func results(summary: RunSummary, upgrades actualUpgrades: Int, instances: [InstanceOutcome]) -> [ExpectationResult] {
        let behind = instances.count { $0.exists && $0.leftBehind != nil }
        return expectedValues.map { key, expected in
            let actual = Self.observed(key, summary: summary, upgrades: actualUpgrades, leftBehind: behind)
            return ExpectationResult(location: location, key: key, expected: expected, actual: actual, held: expected.isMet(by: actual))
        }
    }

    /// What a run showed for `key`; `leftBehind`, how many instances end it behind the newest model.
    static func observed(_ key: Key, summary: RunSummary, upgrades: Int, leftBehind: Int) -> ObservedValue {
        let status = summary.status
        let actual: ObservedValue? = switch key {
        case .code: status.map { .text($0.code.rawValue) }
        case .errorCode: status?.error.map { .text($0.code.rawValue) }
        case .failed: status.map { .count($0.progress.failedInstanceCount) }
        case .inProgress: status.map { .count($0.progress.inProgressInstanceCount) }
        case .pending: status.map { .count($0.progress.pendingInstanceCount) }
        case .protected: .ids(summary.protected)
        case .rolledBack: status == nil ? nil : .count(summary.rolledBack)
        case .skipped: .ids(summary.skipped)
        case .successful: status.map { .count($0.progress.successfulInstanceCount) }
        case .upgrades: .count(upgrades)
        case .leftBehind: .count(leftBehind)
        case .finishedWithin:
            summary.hitTimeLimit ? .notFinished
                : summary.availability.map { .duration(CheckedNumber.clampedWhole($0.timeToFinishSeconds * 1000)) } ?? .noUpgradeActivity
        case .maxUnavailable: summary.availability.map { .count(CheckedNumber.clampedWhole($0.unavailableInstanceSeconds)) }
        case .minHealthy: summary.availability.map { .count($0.lowestHealthy) }
        }
        return actual ?? .none
    }
}

/// What a run showed for one expectation key, as data (the text is made by the renderers).
public enum ObservedValue: Equatable, Sendable {
    /// The run has no such value (no upgrade ran, no availability measured).
    case none
    /// A code as Azure writes it (`Completed`, `MaxUnhealthy…`).
    case text(String)
    /// A count: instances, upgrades, or instance-seconds.
    case count(Int)
    /// Instance ids, ascending.
    case ids([Int])
    /// A duration in milliseconds.
    case duration(Millis)
    /// The run stopped at its time limit before the upgrades ended.
    case notFinished
    /// No upgrade activity happened, so there is nothing to time.
    case noUpgradeActivity
}

/// What an expectation key asked for, as data.
public enum ExpectedValue: Equatable, Sendable {
    /// Exactly this value.
    case equal(ObservedValue)
    /// At least this many (`minHealthy`).
    case atLeast(Int)
    /// At most this many (`maxUnavailable`, instance-seconds).
    case atMost(Int)
    /// Within this many milliseconds (`finishedWithin`).
    case within(Millis)

    /// Whether a run that showed `actual` meets this. A run without upgrade activity (nothing
    /// timed, no capacity lost or counted) meets a bound: it finished at once and lost nothing.
    public func isMet(by actual: ObservedValue) -> Bool {
        switch (self, actual) {
        case (.equal(let value), _): actual == value
        case (.within(let limit), .duration(let took)): took <= limit
        case (.within, .notFinished): false
        case (.within(let limit), _): 0 <= limit
        case (.atMost(let most), .count(let count)): count <= most
        case (.atMost(let most), _): 0 <= most
        case (.atLeast(let least), .count(let count)): count >= least
        case (.atLeast, _): true
        }
    }
}

/// One key of one expectation, checked against a run: what was asked, what the run showed (both
/// typed), and whether it held.
public struct ExpectationResult: Error, Equatable, Sendable {
    /// Where the expectation is (`file:line`, as Lua wrote it).
    public var location: String
    /// The key, e.g. `code`.
    public var key: Expectation.Key
    /// What the expectation asked for (`Faulted`, at least 8).
    public var expected: ExpectedValue
    /// What the run showed (`Completed`, `.none` when the run has no such value).
    public var actual: ObservedValue
    /// Whether the run showed what was asked.
    public var held: Bool

    /// A result of `key` at `location`.
    public init(location: String, key: Expectation.Key, expected: ExpectedValue, actual: ObservedValue, held: Bool) {
        self.location = location
        self.key = key
        self.expected = expected
        self.actual = actual
        self.held = held
    }
}

extension ExpectationResult: UserFacingError {
    /// The `expect` call, at the line Lua named (`location` is Lua's `chunk:line`, read once
    /// here; nil when the script gave no line).
    public var place: Location? { ScriptLine(lua: location).map { .call("expect", at: $0) } }
    /// An expectation that did not hold: 1.
    public var exitCode: Int32 { 1 }
}
