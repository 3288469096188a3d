/// One thing wrong with an input, said so a person can fix it: where (a field path, or
/// `file:line`), what was found, and what is allowed.
public struct Problem: Equatable, Sendable, CustomStringConvertible {
    /// Where: a field path such as `upgradePolicy.rollingUpgradePolicy.maxBatchInstancePercent`.
    public var field: String
    /// What is wrong, including the value found.
    public var message: String
    /// Where, when it is not a field of the input: a script line, an API call, a parameter or
    /// an override (nil: the field path is the place).
    public var place: Location?
    /// The input that resolves the problem, when one does (`--resource NAME` on the command
    /// line); the message ends where the way to give it would begin.
    public var remedy: Remedy?
    /// The bound the input went past, when the problem is one, with its figure.
    public var limit: Limit?
    /// The values allowed here, when the input must be one of a closed set the message lists
    /// (the scale sets to choose from, the parameters a scenario declares), in its order.
    public var allowed: [String]?
    /// The field of the document whose value the problem comes from, when it is not `field`
    /// (the parameter without a value that a name waits on).
    public var source: String?
    /// The references that lead back to the first, in order, when the problem is a cycle
    /// (`parameters('a')`, `parameters('b')`, `parameters('a')`).
    public var cycle: [String]?

    /// A bound on what an input may hold or make, past which reading stops.
    public enum Limit: Equatable, Sendable {
        /// Expressions nested deeper than this many levels.
        case nesting(Int)
        /// More values built in all than this (elements, members, copies, pieces of text).
        case values(Int)
        /// One value larger than this many units.
        case valueSize(Int)
        /// More nested deployments than this.
        case deployments(Int)
        /// More resources in one template, copies included, than this.
        case resourcesPerTemplate(Int)
        /// A chain of more nested references than this.
        case referenceDepth(Int)
    }

    /// A problem at `field`: `message`.
    public init(field: String, _ message: String) {
        self.field = field
        self.message = message
    }

    /// A problem at `place` (a call at a script line, a parameter, an override): `message`;
    /// `allowed`, the closed set of values allowed there, when the message lists one.
    /// `field` holds the place in plain words, with no command-line spelling.
    public init(at place: Location, _ message: String, allowed: [String]? = nil) {
        switch place {
        case .document(_, let field): self.field = field
        case .script(let line): self.field = line.description
        case .call(let name, let line): self.field = "\(name) at \(line)"
        case .setting(.parameter(let name), let value): self.field = name + (value.map { "=\($0)" } ?? "")
        case .setting(.policyOverride(let path), _): self.field = path
        case .setting(.resource, let value?): self.field = "resource = \"\(value)\""
        case .setting(let setting, let value): self.field = "\(setting)" + (value.map { " \($0)" } ?? "")
        case .option(let text), .file(let text), .command(let text): self.field = text
        }
        self.message = message
        self.place = place
        self.allowed = allowed
    }

    /// The same problem at `field` in another document's frame (a document read for a field of
    /// this one): every fact kept but the place, which `field` now says.
    public func at(field: String) -> Problem {
        var moved = self
        moved.field = field
        moved.place = nil
        return moved
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

/// A way out of a problem: give an input, which the command line spells as an option and a
/// script as a field (`--resource NAME`, `resource = "NAME"`).
public struct Remedy: Hashable, Sendable {
    /// The input to give.
    public var setting: Setting
    /// What its value stands for, in capitals (`NAME`, `ADDRESS`).
    public var placeholder: String
    /// How a script gives the same input, when one can (`resource = "NAME"`).
    public var scriptForm: String?

    /// Give `setting`, a `placeholder`, or in a script `scriptForm`.
    public init(_ setting: Setting, placeholder: String, scriptForm: String? = nil) {
        self.setting = setting
        self.placeholder = placeholder
        self.scriptForm = scriptForm
    }
}
