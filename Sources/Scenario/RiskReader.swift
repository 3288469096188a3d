import Formats
import LuaHost
import UpgradeEngine

/// Reads a script's `risk { require = { "Faulted <= 1%", "deadline >= 95%" }, deadline = "PT60M",
/// confidence = 0.95 }`: the requirements `sweep`, `compare`, `test` and `tune` judge the scenario
/// by, every problem at once.
enum RiskReader {
    /// The keys a `risk` table may hold.
    static let keys: Set<String> = ["require", "deadline", "confidence"]

    /// The question the script's risk tables ask, or nil without one, and the problems found.
    static func read(_ tables: [(table: LuaValue, location: String)]) -> (RiskQuestion?, [Problem]) {
        guard let (table, location) = tables.first else { return (nil, []) }
        let field = "risk at \(location)"
        var problems: [Problem] = []
        if tables.count > 1 {
            problems.append(Problem(field: "risk at \(tables[1].location)", "a script has one risk block; the first is at \(location)"))
        }
        guard let fields = table.fields else {
            return (nil, problems + [Problem(field: field, "expected a table such as { require = { \"Faulted <= 1%\" }, deadline = \"PT60M\" }")])
        }
        for key in fields.keys.sorted() where !keys.contains(key) {
            problems.append(Problem(field: "\(field): \(key)", "unknown key; allowed: \(keys.sorted().joined(separator: ", "))"))
        }
        var question = RiskQuestion(requirements: [])
        switch fields["require"] {
        case .array(let items)? where items.count > RiskQuestion.mostRequirements:
            problems.append(Problem(field: "\(field): require", "holds \(items.count) requirements; allowed at most \(RiskQuestion.mostRequirements) (each is judged over every run)"))
        case .array(let items)? where !items.isEmpty:
            for (i, item) in items.enumerated() {
                guard let text = item.stringValue else {
                    problems.append(Problem(field: "\(field): require[\(i + 1)]", "expected a string such as \"Faulted <= 1%\""))
                    continue
                }
                switch Requirement.parse(text) {
                case .success(let requirement): question.requirements.append(requirement)
                case .failure(let error):
                    problems.append(Problem(field: "\(field): require[\(i + 1)]", "\(error.problem); allowed \(Requirement.allowedForm)"))
                }
            }
        default:
            problems.append(Problem(field: "\(field): require", "expected a list of requirements such as { \"Faulted <= 1%\" }"))
        }
        if let deadline = fields["deadline"] {
            if let text = deadline.stringValue, case .success(let ms) = ISODuration.parse(text), ms > 0 {
                question.deadline = ms
            } else {
                problems.append(Problem(field: "\(field): deadline", "expected a positive ISO 8601 duration such as \"PT60M\""))
            }
        }
        if let confidence = fields["confidence"] {
            if let value = confidence.doubleValue, value.isFinite, value > 0.5, value < 1 {
                question.confidence = value
            } else {
                problems.append(Problem(field: "\(field): confidence", "expected a number above 0.5 and below 1, such as 0.95"))
            }
        }
        return (question, problems)
    }
}
