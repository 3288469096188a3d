/// One thing wrong with an input, said so a person can fix it: where (a field path, or
/// `file:line`), what was found, and what is allowed.
public struct Problem: Equatable, Sendable, CustomStringConvertible {
    /// Where: a field path such as `upgradePolicy.rollingUpgradePolicy.maxBatchInstancePercent`.
    public var field: String
    /// What is wrong, including the value found.
    public var message: String

    /// A problem at `field`: `message`.
    public init(field: String, _ message: String) {
        self.field = field
        self.message = message
    }

    public var description: String { "\(field): \(message)" }
}

/// Every problem found in one input, reported together.
public struct ValidationFailure: Error, Equatable, CustomStringConvertible {
    /// Every problem, in the order found.
    public var problems: [Problem]

    /// A failure made of `problems`.
    public init(_ problems: [Problem]) { self.problems = problems }

    public var description: String {
        problems.count == 1 ? problems[0].description
            : "\(problems.count) problems:\n" + problems.map { "  - \($0)" }.joined(separator: "\n")
    }
}
