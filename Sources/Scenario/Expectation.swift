import LuaHost
import UpgradeEngine

/// `expect { ... }`: what the final status and the run must show. Each key is checked; a run
/// whose expectation fails exits 1 and names each failure.
enum Expectation {
    /// The keys `expect` understands, with what each compares.
    static let keys: [String: String] = [
        "code": "runningStatus.code: RollingForward, Cancelled, Completed or Faulted",
        "errorCode": "error.code, e.g. MaxUnhealthyInstancePercentExceededBeforeRollingUpgrade",
        "successful": "progress.successfulInstanceCount", "failed": "progress.failedInstanceCount",
        "inProgress": "progress.inProgressInstanceCount", "pending": "progress.pendingInstanceCount",
        "skipped": "the list of skipped instance ids", "protected": "the list of protected instance ids",
        "minHealthy": "the fewest serving instances during the upgrades must be at least this",
        "upgrades": "how many rolling upgrades started",
    ]

    /// Problems with an `expect` table itself (unknown keys, wrong types).
    static func validate(_ table: LuaValue) -> [String] {
        guard let fields = table.fields else { return ["expected a table such as { code = \"Completed\" }"] }
        var problems: [String] = []
        for key in fields.keys.sorted() {
            guard keys[key] != nil else {
                problems.append("unknown key \(key); allowed \(keys.keys.sorted().joined(separator: ", "))")
                continue
            }
            let value = fields[key]!
            switch key {
            case "code", "errorCode":
                if value.stringValue == nil { problems.append("\(key) must be a string") }
            case "skipped", "protected":
                if case .array(let items) = value, items.allSatisfy({ $0.intValue != nil }) { break }
                problems.append("\(key) must be a list of instance ids")
            default:
                if value.intValue == nil { problems.append("\(key) must be a whole number") }
            }
        }
        return problems
    }

    /// Every way `summary` differs from `table`, as sentences.
    static func failures(_ table: LuaValue, summary: RunSummary, upgrades: Int) -> [String] {
        guard let fields = table.fields else { return [] }
        let status = summary.status
        var failures: [String] = []
        func check<T: Equatable>(_ key: String, _ actual: T?, _ expected: T?, show: (T?) -> String) {
            if actual != expected { failures.append("\(key) is \(show(actual)), expected \(show(expected))") }
        }
        let text = { (s: String?) in s ?? "none" }
        let number = { (n: Int?) in n.map(String.init) ?? "none" }
        let list = { (l: [Int]?) in l.map { "\($0)" } ?? "none" }
        for key in fields.keys.sorted() {
            let value = fields[key]!
            switch key {
            case "code": check(key, status?.code.rawValue, value.stringValue, show: text)
            case "errorCode": check(key, status?.error?.code, value.stringValue, show: text)
            case "successful": check(key, status?.progress.successfulInstanceCount, value.intValue, show: number)
            case "failed": check(key, status?.progress.failedInstanceCount, value.intValue, show: number)
            case "inProgress": check(key, status?.progress.inProgressInstanceCount, value.intValue, show: number)
            case "pending": check(key, status?.progress.pendingInstanceCount, value.intValue, show: number)
            case "skipped":
                if case .array(let items) = value { check(key, summary.skipped, items.compactMap(\.intValue), show: list) }
            case "protected":
                if case .array(let items) = value { check(key, summary.protected, items.compactMap(\.intValue), show: list) }
            case "minHealthy":
                let lowest = summary.availability?.lowestHealthy
                if let want = value.intValue, (lowest ?? Int.max) < want {
                    failures.append("minHealthy: the fewest serving instances was \(lowest!), expected at least \(want)")
                }
            case "upgrades": check(key, upgrades, value.intValue, show: number)
            default: break
            }
        }
        return failures
    }
}
