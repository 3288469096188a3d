public import Formats

/// Why a plugin bundle cannot be used, in one sentence.
public struct PluginProblem: Error, Equatable, CustomStringConvertible {
    /// The sentence, naming the bundle or file itself (an input's spelling on the command line
    /// is left to the command line: see `place`).
    public let message: String
    /// The input at fault when it is one the command line gives (a repository, its URL); nil
    /// when the sentence names the bundle or file.
    public var place: Location?
    /// What is wrong with the input at `place`, when there is more to say than `allowed`.
    public var problem: String?
    /// What the input at `place` allows.
    public var allowed: String?
    /// Why no version of a bundle could be chosen, when that is the problem.
    public var resolution: PluginResolution?

    /// A problem saying `message`; `resolution`, why no version could be chosen, when that is it.
    public init(_ message: String, resolution: PluginResolution? = nil) {
        self.message = message
        self.resolution = resolution
    }

    /// A problem of the input at `place`: `problem`, with what is `allowed`.
    public init(at place: Location, problem: String?, allowed: String?) {
        self.place = place
        self.problem = problem
        self.allowed = allowed
        let what = [problem, allowed.map { "allowed \($0)" }].compactMap { $0 }.joined(separator: "; ")
        if case .setting(_, let given?) = place { message = "\(given): \(what)" } else { message = what }
    }

    public var description: String { message }
}

extension PluginProblem: UserFacingError {
    /// Bad input (a bundle, a lock file, a repository that cannot be used): 2.
    public var exitCode: Int32 { 2 }
}

/// The host API version bundles declare a range against.
public let hostAPIVersion = SemVer(1, 2, 0)

/// A plugin bundle's manifest, `rehearse-plugin.json`: data only, read without running any
/// plugin code.
public struct PluginManifest: Sendable, Equatable {
    /// The manifest's file name inside a bundle.
    public static let fileName = "rehearse-plugin.json"
    /// The largest manifest read, in bytes (checked before reading).
    public static let maxBytes = 64 * 1024
    static let fields = ["name", "version", "api", "description", "entry", "dependencies", "exports", "options"]

    /// The bundle's name, which is also its `require` name: lowercase letters, digits, '-'.
    public var name: String
    /// The bundle's version (SemVer 2.0.0).
    public var version: SemVer
    /// The host API versions it works with, e.g. "^1.0".
    public var api: SemVerRange
    public var description: String
    /// The module `require "<name>"` loads, relative to the bundle (default "init").
    public var entry: String
    /// Other bundles it requires, with the versions it accepts, sorted by name.
    public var dependencies: [Dependency]
    /// The names its entry module returns, each with a one-line description.
    public var exports: [String: String]
    /// The options its exported functions read from the table a script passes them, sorted by
    /// name; nil when the manifest declares none (such a bundle's options are not checked).
    public var options: [PluginOption]? = nil

    /// Another bundle this one requires, and the versions it accepts.
    public struct Dependency: Sendable, Equatable {
        /// The bundle required.
        public var name: String
        /// The versions accepted.
        public var range: SemVerRange
    }

    /// `name version`, as messages name a bundle.
    public var label: String { "\(name) \(version)" }

    /// Parses a manifest, reporting every problem at once.
    public static func parse(_ text: String, file: String) throws(PluginProblem) -> PluginManifest {
        let json: JSON
        do {
            json = try JSON.parse(text, maxBytes: maxBytes, maxDepth: 8)
        } catch {
            throw PluginProblem("\(file): the manifest \(error.problem)")
        }
        return try parse(json, file: file)
    }

    /// Reads an already decoded manifest (an index entry carries the same fields).
    static func parse(_ json: JSON, file: String) throws(PluginProblem) -> PluginManifest {
        guard let fields = json.object else { throw PluginProblem("\(file): the manifest is \(json.kindName); expected an object") }
        var problems: [String] = []
        for key in fields.keys.sorted() where !Self.fields.contains(key) {
            problems.append("unknown field \"\(key)\"; allowed \(Self.fields.joined(separator: ", "))")
        }
        func string(_ key: String, required: Bool) -> String? {
            switch fields[key] {
            case .string(let s)?: return s
            case nil, .null?: if required { problems.append("\"\(key)\" is missing") }
            case let other?: problems.append("\"\(key)\" is \(other.kindName); expected a string")
            }
            return nil
        }
        let name = string("name", required: true) ?? ""
        if !name.isEmpty && !isBundleName(name) {
            problems.append("name \"\(name)\" is not allowed; use lowercase letters, digits and '-'")
        }
        let versionText = string("version", required: true)
        let version = versionText.flatMap { SemVer($0) }
        if let versionText, version == nil { problems.append("version \"\(versionText)\" is not SemVer 2.0.0 (MAJOR.MINOR.PATCH, e.g. 1.2.0 or 2.0.0-rc.1)") }
        var api: SemVerRange?
        if let apiText = string("api", required: true) {
            do { api = try SemVerRange(apiText) } catch { problems.append("api: \(error.message)") }
        }
        let entry = string("entry", required: false) ?? "init"
        if entry.contains("..") || entry.hasPrefix("/") || entry.isEmpty {
            problems.append("entry \"\(entry)\" must be a module name inside the bundle")
        }
        var dependencies: [Dependency] = []
        switch fields["dependencies"] {
        case nil, .null?: break
        case .object(let members)?:
            for key in members.keys.sorted() {
                guard isBundleName(key) else { problems.append("dependency \"\(key)\" is not a bundle name"); continue }
                guard case .string(let text) = members[key]! else {
                    problems.append("dependency \"\(key)\" must be a version range such as \"^1.1\""); continue
                }
                do { dependencies.append(Dependency(name: key, range: try SemVerRange(text))) } catch {
                    problems.append("dependency \"\(key)\": \(error.message)")
                }
            }
            if members.keys.contains(name) { problems.append("a bundle cannot depend on itself") }
        case let other?: problems.append("\"dependencies\" is \(other.kindName); expected an object such as {\"slow-boot\": \"^1.1\"}")
        }
        var exports: [String: String] = [:]
        switch fields["exports"] {
        case nil, .null?: problems.append("\"exports\" is missing: the names the entry module returns, each with a one-line description")
        case .object(let members)?:
            for key in members.keys.sorted() {
                guard case .string(let text) = members[key]!, !text.isEmpty, !text.contains("\n") else {
                    problems.append("export \"\(key)\" needs a one-line description"); continue
                }
                guard isLuaName(key) else { problems.append("export \"\(key)\" is not a Lua name"); continue }
                exports[key] = text
            }
        case let other?: problems.append("\"exports\" is \(other.kindName); expected an object of name → description")
        }
        var options: [PluginOption]?
        if let declared = fields["options"], declared != .null {
            options = PluginOption.parse(declared, exports: Set(exports.keys), problems: &problems)
        }
        let description = string("description", required: true) ?? ""
        guard problems.isEmpty, let version, let api else {
            throw PluginProblem("\(file): " + problems.joined(separator: "; "))
        }
        return PluginManifest(name: name, version: version, api: api, description: description, entry: entry,
                              dependencies: dependencies, exports: exports, options: options)
    }

    /// The manifest as JSON (the index repeats it).
    var json: JSON {
        var fields: [String: JSON] = [
            "name": .string(name), "version": .string(version.description), "api": .string(api.text),
            "description": .string(description), "entry": .string(entry),
            "dependencies": .object(Dictionary(uniqueKeysWithValues: dependencies.map { ($0.name, JSON.string($0.range.text)) })),
            "exports": .object(exports.mapValues(JSON.string))]
        if let options { fields["options"] = .object(Dictionary(uniqueKeysWithValues: options.map { ($0.name, $0.json) })) }
        return .object(fields)
    }

    static func isBundleName(_ s: String) -> Bool {
        !s.isEmpty && s.count <= 64 && s.allSatisfy { ($0.isASCII && ($0.isLowercase || $0.isNumber)) || $0 == "-" }
    }

    static func isLuaName(_ s: String) -> Bool {
        guard let first = s.first, first == "_" || (first.isASCII && first.isLetter) else { return false }
        return s.allSatisfy { $0 == "_" || ($0.isASCII && ($0.isLetter || $0.isNumber)) }
    }
}

extension SemVerRange: Equatable {
    public static func == (a: SemVerRange, b: SemVerRange) -> Bool { a.text == b.text }
}
