/// A line of a script, as Lua names its chunk (`scripts/rolling.lua`) and a 1-based line.
public struct ScriptLine: Hashable, Sendable, CustomStringConvertible {
    /// The chunk name: the script's path as loaded (Lua may shorten a long one from the left).
    public var file: String
    /// 1-based line.
    public var line: Int

    /// Line `line` (1-based) of `file`.
    public init(file: String, line: Int) {
        self.file = file
        self.line = line
    }

    /// The `chunk:line` Lua writes in its messages (`luaL_where`, runtime errors), read once at
    /// the edge where the text comes from Lua; nil when `text` does not end in `:digits`.
    /// Chunk names may hold `:` themselves, so the last one is the separator.
    public init?(lua text: String) {
        guard let colon = text.lastIndex(of: ":"),
              let line = Int(text[text.index(after: colon)...]), line >= 0 else { return nil }
        self.init(file: String(text[..<colon]), line: line)
    }

    /// `file:line`.
    public var description: String { "\(file):\(line)" }
}

/// An input a person gives a command, named by what it is, not by how the command line spells
/// it: lower modules say which one was wrong and the command line names its option.
public enum Setting: Hashable, Sendable {
    /// A scenario parameter (`param("name", default)` in the script), by name.
    case parameter(String)
    /// A policy override by path (`rollingUpgradePolicy.maxBatchInstancePercent`).
    case policyOverride(String)
    /// Which scale set of a document with several is meant (an ARM name or a Terraform address).
    case resource
    /// The parameters file of an ARM template.
    case templateParameters
    /// How many runs a sweep does at once.
    case jobs
    /// The URL a plugin repository folder is served at.
    case repositoryURL
    /// A plugin repository (an http(s) URL or a folder).
    case repository
    /// The file a served run writes its events to.
    case eventsFile
    /// The file the server writes its certificate authority to.
    case caCertificate
    /// The TCP port the server listens on.
    case port
    /// The file the HTML report is written to.
    case report
    /// One of an ARM template's deployment functions' answers, `NAME=VALUE`.
    case deploymentContext
}

/// Where a problem is, as data: the renderer in the command line turns it into text
/// (`file:line`, a field path, an option), and JUnit reads its file and line, so no location is
/// ever parsed back out of a message.
public enum Location: Hashable, Sendable {
    /// A line of a script.
    case script(ScriptLine)
    /// A call of the scripting API (`expect`, `phase`, `deferral`) written at a line of a script.
    case call(String, at: ScriptLine)
    /// A field of a document or a definition: the file when known, and the field path
    /// (`scaleset.healthExtension.port`, `runs[3].lowestHealthy`).
    case document(path: String?, field: String)
    /// A command-line option as typed (`--max-probes`). Only the command line makes these.
    case option(String)
    /// An input named by what it is (a parameter, an override), with the value given when one was.
    case setting(Setting, value: String?)
    /// A file or folder as a whole.
    case file(String)
    /// A command (`merge`, `plugins show`).
    case command(String)
}

/// Tier one of the errors a person sees: a small typed error that carries what is wrong (its
/// own fields), where (`place`), what is allowed, and the exit status the command ends with.
/// Every public error type conforms; the command line's one renderer turns them into text.
public protocol UserFacingError: Error {
    /// Where the problem is; nil when it has no place (the host could not start a thread).
    var place: Location? { get }
    /// What is allowed instead, when there is a rule; nil when the message says it all.
    var allowed: String? { get }
    /// The exit status: 2 for bad input of any kind (a script, a document, an option, a
    /// limit), 1 for an expectation or requirement that did not hold.
    var exitCode: Int32 { get }
}

extension UserFacingError {
    /// No rule to state beyond the message.
    public var allowed: String? { nil }
}

extension Problem {
    /// Where: the field path as a location in a document (`path` nil: the input as a whole).
    public var location: Location { place ?? .document(path: nil, field: field) }
}

extension ValidationFailure: UserFacingError {
    /// The first problem's place; each problem carries its own.
    public var place: Location? { problems.first?.location }
    /// Bad input: 2.
    public var exitCode: Int32 { 2 }
}

extension NumberOutOfRange: UserFacingError {
    /// The field or option the number was given for.
    public var place: Location? {
        field.hasPrefix("--") ? .option(field) : .document(path: nil, field: field)
    }
    /// Bad input: 2.
    public var exitCode: Int32 { 2 }
}

extension DurationError: UserFacingError {
    /// A duration has no place of its own; whoever reads it names the field.
    public var place: Location? { nil }
    /// An ISO 8601 duration.
    public var allowed: String? { "an ISO 8601 duration such as PT10M" }
    /// Bad input: 2.
    public var exitCode: Int32 { 2 }
}

extension JSONError: UserFacingError {
    /// JSON text has no path of its own; the reader of a file names it.
    public var place: Location? { nil }
    /// Bad input: 2.
    public var exitCode: Int32 { 2 }
}

extension JSONDocument.Refusal: UserFacingError {
    /// The document's file.
    public var place: Location? { .file(path) }
    /// Bad input: 2.
    public var exitCode: Int32 { 2 }
}

extension BoundedFile.Refusal: UserFacingError {
    /// The file refused.
    public var place: Location? { .file(path) }
    /// Bad input: 2.
    public var exitCode: Int32 { 2 }
}

extension OutputFileError: UserFacingError {
    /// The output file.
    public var place: Location? { .file(path) }
    /// What an output path may be.
    public var allowed: String? { Self.allowed }
    /// Bad input (a path that cannot be written): 2.
    public var exitCode: Int32 { 2 }
}

extension Problem {
    /// A problem of a scripting API call (`expect`, `phase`, `deferral`) written at `where`, Lua's
    /// `chunk:line` text: located at that call, or by name and text when Lua gave no line.
    public init(call name: String, at luaWhere: String, _ message: String) {
        if let line = ScriptLine(lua: luaWhere) {
            self.init(at: .call(name, at: line), message)
        } else {
            self.init(field: "\(name) at \(luaWhere)", message)
        }
    }
}
