import LuaHost
import UpgradeEngine

/// `expect { ... }`, read once when the script is loaded: what the final status and the run must
/// show. A run whose expectation fails exits 1 and names each failure.
public struct Expectation: Equatable, Sendable {
    /// The keys `expect` understands, with what each compares.
    static let keys: [String: String] = [
        "code": "runningStatus.code: RollingForward, Cancelled, Completed or Faulted",
        "errorCode": "error.code, e.g. MaxUnhealthyInstancePercentExceededBeforeRollingUpgrade",
        "successful": "progress.successfulInstanceCount", "failed": "progress.failedInstanceCount",
        "inProgress": "progress.inProgressInstanceCount", "pending": "progress.pendingInstanceCount",
        "skipped": "the list of skipped instance ids", "protected": "the list of protected instance ids",
        "minHealthy": "the fewest serving instances during the upgrades must be at least this",
        "upgrades": "how many rolling upgrades started",
        "rolledBack": "instances the latest rolling upgrade returned to their previous model or image successfully",
    ]

    /// Where the script called `expect` (`file:line`).
    public var location: String
    /// `runningStatus.code` expected (RollingForward, RollingBack, Cancelled, Completed, Faulted).
    public var code: String?
    /// `error.code` expected.
    public var errorCode: String?
    /// `progress.successfulInstanceCount` expected, in instances.
    public var successful: Int?
    /// `progress.failedInstanceCount` expected, in instances.
    public var failed: Int?
    /// `progress.inProgressInstanceCount` expected, in instances.
    public var inProgress: Int?
    /// `progress.pendingInstanceCount` expected, in instances.
    public var pending: Int?
    /// The skipped instance ids expected, ascending.
    public var skipped: [Int]?
    /// The protected instance ids expected, ascending.
    public var protected: [Int]?
    /// The fewest serving instances must be at least this many.
    public var minHealthy: Int?
    /// How many rolling upgrades started.
    public var upgrades: Int?
    /// Instances the latest upgrade rolled back (or restored) successfully.
    public var rolledBack: Int?

    /// Reads an `expect` table; the problems name each bad key and what is allowed.
    static func parse(_ table: LuaValue, location: String) -> (Expectation, [String]) {
        var expectation = Expectation(location: location)
        guard let fields = table.fields else { return (expectation, ["expected a table such as { code = \"Completed\" }"]) }
        var problems: [String] = []
        for key in fields.keys.sorted() {
            let value = fields[key]!
            func number() -> Int? {
                if value.intValue == nil { problems.append("\(key) must be a whole number") }
                return value.intValue
            }
            func list() -> [Int]? {
                if case .array(let items) = value, items.allSatisfy({ $0.intValue != nil }) { return items.compactMap(\.intValue) }
                problems.append("\(key) must be a list of instance ids")
                return nil
            }
            func text() -> String? {
                if value.stringValue == nil { problems.append("\(key) must be a string") }
                return value.stringValue
            }
            switch key {
            case "code": expectation.code = text()
            case "errorCode": expectation.errorCode = text()
            case "successful": expectation.successful = number()
            case "failed": expectation.failed = number()
            case "inProgress": expectation.inProgress = number()
            case "pending": expectation.pending = number()
            case "skipped": expectation.skipped = list()
            case "protected": expectation.protected = list()
            case "minHealthy": expectation.minHealthy = number()
            case "upgrades": expectation.upgrades = number()
            case "rolledBack": expectation.rolledBack = number()
            default: problems.append("unknown key \(key); allowed \(keys.keys.sorted().joined(separator: ", "))")
            }
        }
        return (expectation, problems)
    }

    /// Every way the run differs from this expectation, in key order.
    func failures(summary: RunSummary, upgrades actualUpgrades: Int) -> [ExpectationFailure] {
        let status = summary.status
        var failures: [ExpectationFailure] = []
        func check<T: Equatable>(_ key: String, _ actual: T?, _ expected: T?, _ show: (T?) -> String) {
            guard let expected, actual != expected else { return }
            failures.append(ExpectationFailure(location: location, key: key, actual: show(actual), expected: show(expected)))
        }
        let text = { (s: String?) in s ?? "none" }
        let number = { (n: Int?) in n.map(String.init) ?? "none" }
        let list = { (l: [Int]?) in l.map { "\($0)" } ?? "none" }
        check("code", status?.code.rawValue, code, text)
        check("errorCode", status?.error?.code, errorCode, text)
        check("failed", status?.progress.failedInstanceCount, failed, number)
        check("inProgress", status?.progress.inProgressInstanceCount, inProgress, number)
        if let minHealthy, let lowest = summary.availability?.lowestHealthy, lowest < minHealthy {
            failures.append(ExpectationFailure(location: location, key: "minHealthy", actual: String(lowest), expected: "at least \(minHealthy)"))
        }
        check("pending", status?.progress.pendingInstanceCount, pending, number)
        check("protected", summary.protected, protected, list)
        check("rolledBack", status == nil ? nil : summary.rolledBack, rolledBack, number)
        check("skipped", summary.skipped, skipped, list)
        check("successful", status?.progress.successfulInstanceCount, successful, number)
        check("upgrades", actualUpgrades, upgrades, number)
        return failures
    }
}

/// One way a run differed from an `expect`.
public struct ExpectationFailure: Error, Equatable, Sendable, CustomStringConvertible {
    /// Where the `expect` is (`file:line`).
    public var location: String
    /// The key that failed, e.g. `code`.
    public var key: String
    /// What the run showed, and what was expected, as the status prints them.
    public var actual: String
    /// What the `expect` asked for.
    public var expected: String

    /// A failure of `key` at `location`: `actual` where `expected` was asked.
    public init(location: String, key: String, actual: String, expected: String) {
        self.location = location
        self.key = key
        self.actual = actual
        self.expected = expected
    }

    public var description: String { "expect at \(location): \(key) is \(actual), expected \(expected)" }
}
