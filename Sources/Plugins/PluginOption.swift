public import Formats

/// One option a bundle's exported functions read from the table a script passes them
/// (`sb.fault { duration = "PT4M" }`): declared in the manifest's `options`, so that a script
/// passing a name the bundle does not read is refused instead of silently ignored.
public struct PluginOption: Sendable, Equatable {
    /// The kinds of value an option takes.
    public enum Kind: String, Sendable, CaseIterable {
        case string, number, integer, boolean
        /// An ISO 8601 duration ("PT4M") or a number of seconds.
        case duration
        case table
        case function
    }

    /// The key in the table a script passes: a Lua name.
    public var name: String
    /// The kind of value it takes.
    public var kind: Kind
    /// The value the bundle uses when the script passes none (nil: no default, or a required one).
    public var defaultValue: JSON?
    /// One line saying what it does.
    public var doc: String
    /// The exports that read it; nil for every exported function.
    public var exports: [String]?

    static let fields = ["type", "default", "doc", "exports"]

    /// `name (kind, default X)`, as messages list the options.
    public var summary: String {
        "\(name) (\(kind.rawValue)\(defaultValue.map { ", default \($0.serialized())" } ?? ""))"
    }

    /// Whether `export` reads this option.
    public func applies(to export: String) -> Bool { exports?.contains(export) ?? true }

    /// Whether `value` (a manifest's JSON default) is of this kind.
    func accepts(_ value: JSON) -> Bool {
        switch (kind, value) {
        case (.string, .string), (.boolean, .bool), (.integer, .int), (.number, .int), (.number, .double),
             (.duration, .string), (.duration, .int), (.duration, .double), (.table, .array), (.table, .object): return true
        default: return false
        }
    }

    /// Reads the manifest's `options` object (name → {type, default, doc, exports}); every
    /// problem is appended to `problems`. `exports` are the manifest's export names.
    static func parse(_ json: JSON, exports: Set<String>, problems: inout [String]) -> [PluginOption] {
        guard let members = json.object else {
            problems.append("\"options\" is \(json.kindName); expected an object of name → {\"type\", \"default\", \"doc\"}")
            return []
        }
        var options: [PluginOption] = []
        for name in members.keys.sorted() {
            let at = "options.\(name)"
            guard PluginManifest.isLuaName(name) else { problems.append("\(at): \"\(name)\" is not a Lua name"); continue }
            guard let fields = members[name]!.object else { problems.append("\(at) is \(members[name]!.kindName); expected an object"); continue }
            for key in fields.keys.sorted() where !Self.fields.contains(key) {
                problems.append("\(at): unknown field \"\(key)\"; allowed \(Self.fields.joined(separator: ", "))")
            }
            let kinds = Kind.allCases.map(\.rawValue).joined(separator: ", ")
            guard case .string(let kindText)? = fields["type"], let kind = Kind(rawValue: kindText) else {
                problems.append("\(at).type is missing or not one of \(kinds)"); continue
            }
            guard case .string(let doc)? = fields["doc"], !doc.isEmpty, !doc.contains("\n") else {
                problems.append("\(at).doc needs a one-line description"); continue
            }
            var option = PluginOption(name: name, kind: kind, defaultValue: nil, doc: doc, exports: nil)
            switch fields["default"] {
            case nil, .null?: break
            case let value?:
                if option.accepts(value) { option.defaultValue = value } else {
                    problems.append("\(at).default is \(value.kindName); expected a \(kind.rawValue)")
                }
            }
            switch fields["exports"] {
            case nil, .null?: break
            case .array(let items)?:
                let names = items.compactMap { item -> String? in if case .string(let s) = item { return s } else { return nil } }
                if names.count != items.count || names.isEmpty { problems.append("\(at).exports must be a non-empty list of export names") }
                for unknown in names where !exports.contains(unknown) {
                    problems.append("\(at).exports names \"\(unknown)\", which the manifest does not export")
                }
                option.exports = names.sorted()
            case let other?: problems.append("\(at).exports is \(other.kindName); expected a list of export names")
            }
            options.append(option)
        }
        return options
    }

    /// The option as the manifest (and the index) writes it.
    var json: JSON {
        var fields: [String: JSON] = ["type": .string(kind.rawValue), "doc": .string(doc)]
        if let defaultValue { fields["default"] = defaultValue }
        if let exports { fields["exports"] = .array(exports.map(JSON.string)) }
        return .object(fields)
    }
}

extension PluginManifest {
    /// The options export `export` reads, by name (nil when the manifest declares no options).
    public func options(of export: String) -> [PluginOption]? {
        options.map { all in all.filter { $0.applies(to: export) } }
    }
}
