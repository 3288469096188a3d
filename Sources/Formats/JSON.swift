import Foundation

/// A JSON value. Objects keep no key order: serialization sorts keys, so output is
/// reproducible byte for byte.
public enum JSON: Equatable, Sendable {
    case null
    case bool(Bool)
    case int(Int)
    case double(Double)
    case string(String)
    case array([JSON])
    case object([String: JSON])
    /// An object whose keys print in the given order (for outputs with a documented order).
    case ordered([JSONField])

    /// The members of an object.
    public var object: [String: JSON]? {
        switch self {
        case .object(let o): return o
        case .ordered(let fields): return Dictionary(fields.map { ($0.key, $0.value) }, uniquingKeysWith: { a, _ in a })
        default: return nil
        }
    }

    /// The member whose key equals `key` ignoring case (ARM and the health extension match keys
    /// that way); the exact spelling wins when several match.
    /// A member of an ARM document (policy, extension settings): as `member`, but JSON `null`
    /// means the field is absent, as real `az vmss show` output and ARM templates use it.
    public func field(_ key: String) -> JSON? {
        guard let value = member(key), value != .null else { return nil }
        return value
    }

    /// The value as compact JSON text for a message that echoes it: cut after `limit` characters
    /// with `…`, so a huge value sent back does not make a huge answer.
    public func brief(_ limit: Int = 200) -> String {
        let text = serialized(pretty: false)
        return text.count > limit ? String(text.prefix(limit)) + "…" : text
    }

    /// The member named `key` of an object: the exact key, else the first in sorted order that matches ignoring ASCII case (nil for other values).
    public func member(_ key: String) -> JSON? {
        guard let o = object else { return nil }
        if let exact = o[key] { return exact }
        var match: String?
        for candidate in o.keys where JSON.equalIgnoringASCIICase(candidate, key) {
            if match == nil || candidate < match! { match = candidate }
        }
        return match.flatMap { o[$0] }
    }

    /// Compares two keys ignoring ASCII case, without building lowercased copies.
    static func equalIgnoringASCIICase(_ a: String, _ b: String) -> Bool {
        var x = a.utf8.makeIterator(), y = b.utf8.makeIterator()
        while true {
            switch (x.next(), y.next()) {
            case (nil, nil): return true
            case let (p?, q?):
                let lp = (65...90).contains(p) ? p + 32 : p, lq = (65...90).contains(q) ? q + 32 : q
                if lp != lq { return false }
            default: return false
            }
        }
    }

    /// A short name of the value's type for messages ("a string", "an object", …).
    public var kindName: String {
        switch self {
        case .null: return "null"
        case .bool: return "a boolean"
        case .int, .double: return "a number"
        case .string: return "a string"
        case .array: return "an array"
        case .object, .ordered: return "an object"
        }
    }
}

/// One member of an ordered JSON object.
public struct JSONField: Equatable, Sendable {
    /// The member's name.
    public var key: String
    /// The member's value.
    public var value: JSON
    /// A member `key`: `value`.
    public init(_ key: String, _ value: JSON) {
        self.key = key
        self.value = value
    }
}

/// Why a text is not acceptable JSON, and where when the text is malformed.
public struct JSONError: Error, Equatable, CustomStringConvertible {
    /// What is wrong, ready to follow a subject ("the manifest is not valid JSON …").
    public let problem: String
    /// 1-based line and column of the first byte the parser could not accept (nil for size and
    /// depth refusals).
    public var line: Int?
    /// 1-based column, in characters.
    public var column: Int?
    /// The number, when the text is JSON but holds a number past what a double holds (`1e400`).
    public var outOfRange: String?

    /// An error saying `problem`, at `line` and `column` when known.
    public init(problem: String, line: Int? = nil, column: Int? = nil) {
        self.problem = problem
        self.line = line
        self.column = column
    }

    public var description: String { problem }
}

extension JSON {
    /// Parses untrusted text: at most `maxBytes` bytes and `maxDepth` levels of nesting, in one
    /// pass whose cost follows the text's length (`JSONParser`). A leading UTF-8 byte-order mark
    /// is skipped; with `comments`, `//` and `/* */` comments are whitespace, a trailing comma
    /// before `}` or `]` and raw line breaks and tabs in strings are accepted (as ARM reads
    /// templates and parameter files).
    public static func parse(_ text: String, maxBytes: Int = 1 << 20, maxDepth: Int = 64, comments: Bool = false) throws(JSONError) -> JSON {
        let count = text.utf8.count
        guard count <= maxBytes else {
            throw JSONError(problem: "is \(count) bytes, more than the \(maxBytes) allowed")
        }
        var parser = JSONParser(Array(text.utf8), maxDepth: maxDepth, comments: comments)
        return try parser.document()
    }
}

extension JSON {
    /// Serializes with sorted keys: indented by two spaces per level when `pretty` (the layout
    /// `az` prints), otherwise on one line with no spaces.
    public func serialized(pretty: Bool = true) -> String {
        var out = ""
        write(into: &out, pretty: pretty, indent: 0)
        return out
    }

    private func write(into out: inout String, pretty: Bool, indent: Int) {
        switch self {
        case .null: out += "null"
        case .bool(let b): out += b ? "true" : "false"
        case .int(let i): out += String(i)
        case .double(let d):
            if d.isFinite, d == d.rounded(), abs(d) < 1e15 { out += String(Int(d)) } else if d.isFinite { out += String(d) } else { out += "null" }
        case .string(let s): JSON.writeString(s, into: &out)
        case .array(let items):
            if items.isEmpty { out += "[]"; return }
            out += "["
            for (i, item) in items.enumerated() {
                if i > 0 { out += "," }
                if pretty { out += "\n" + String(repeating: " ", count: indent + 2) }
                item.write(into: &out, pretty: pretty, indent: indent + 2)
            }
            if pretty { out += "\n" + String(repeating: " ", count: indent) }
            out += "]"
        case .object(let members):
            JSON.writeFields(members.keys.sorted().map { JSONField($0, members[$0]!) }, into: &out, pretty: pretty, indent: indent)
        case .ordered(let fields):
            JSON.writeFields(fields, into: &out, pretty: pretty, indent: indent)
        }
    }

    private static func writeFields(_ fields: [JSONField], into out: inout String, pretty: Bool, indent: Int) {
        if fields.isEmpty { out += "{}"; return }
        out += "{"
        for (i, field) in fields.enumerated() {
            if i > 0 { out += "," }
            if pretty { out += "\n" + String(repeating: " ", count: indent + 2) }
            JSON.writeString(field.key, into: &out)
            out += pretty ? ": " : ":"
            field.value.write(into: &out, pretty: pretty, indent: indent + 2)
        }
        if pretty { out += "\n" + String(repeating: " ", count: indent) }
        out += "}"
    }

    static func writeString(_ s: String, into out: inout String) {
        out += "\""
        // Most strings (names, codes, times) need no escape: appended whole, not scalar by scalar.
        if !s.utf8.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) {
            out += s
            out += "\""
            return
        }
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(scalar)
            }
        }
        out += "\""
    }
}
