import LuaHost
import UpgradeEngine

/// Reads `expect { ... }` tables, once, when a script is loaded.
enum ExpectationReader {
    /// Reads an `expect` table; the problems name each bad key and what is allowed.
    static func read(_ table: LuaValue, location: String) -> (Expectation, [String]) {
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
            func closed<T: RawRepresentable & CaseIterable>(_ type: T.Type, _ what: String) -> T? where T.RawValue == String {
                guard let text = text() else { return nil }
                if let known = T(rawValue: text) { return known }
                problems.append("\(key) \"\(text)\" is not \(what); allowed \(T.allCases.map(\.rawValue).joined(separator: ", "))")
                return nil
            }
            guard let known = Expectation.Key(rawValue: key) else {
                problems.append("unknown key \(key); allowed \(Expectation.Key.allCases.map(\.rawValue).sorted().joined(separator: ", "))")
                continue
            }
            switch known {
            case .code: expectation.code = closed(RunningCode.self, "a final code")
            case .errorCode: expectation.errorCode = closed(UpgradeErrorCode.self, "an error code a rolling upgrade ends with")
            case .successful: expectation.successful = number()
            case .failed: expectation.failed = number()
            case .inProgress: expectation.inProgress = number()
            case .pending: expectation.pending = number()
            case .skipped: expectation.skipped = list()
            case .protected: expectation.protected = list()
            case .minHealthy: expectation.minHealthy = number()
            case .maxUnavailable: expectation.maxUnavailable = number()
            case .finishedWithin:
                switch DefinitionReader.duration(value) {
                case .success(let ms): expectation.finishedWithin = ms
                case .failure(let message): problems.append("finishedWithin: \(message.text)")
                }
            case .upgrades: expectation.upgrades = number()
            case .rolledBack: expectation.rolledBack = number()
            case .leftBehind: expectation.leftBehind = number()
            }
        }
        return (expectation, problems)
    }
}
