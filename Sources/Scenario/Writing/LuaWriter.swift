public import Formats

/// Lua source built from values no one trusts (a document's zone names, paths, symbolic names,
/// messages): every value goes in as a literal (`string`, `value`), never as code or inside a
/// comment; comments are only the writer's own text, and even they cannot end early (a line
/// break or control character in one is replaced). A string literal escapes quotes, backslashes,
/// every control character (C0, DEL, C1), line and paragraph separators and the bidirectional
/// controls, so what a literal holds can neither leave it nor change how the script reads on a
/// terminal.
public struct LuaWriter {
    /// The lines so far.
    public private(set) var lines: [String] = []
    /// Spaces before each line written.
    public var indent = 0

    /// An empty script.
    public init() {}

    /// The script: every line, each ending with a line break.
    public var text: String { lines.map { $0 + "\n" }.joined() }

    /// A comment of the writer's own text (`-- text`).
    public mutating func comment(_ text: String) {
        let safe = String(text.unicodeScalars.map { Self.isUnsafe($0) ? " " : Character($0) })
        lines.append(String(repeating: " ", count: indent) + (safe.isEmpty ? "--" : "-- " + safe))
    }

    /// A line of code made by the caller from literals (`LuaWriter.string`, `LuaWriter.value`).
    public mutating func code(_ line: String) { lines.append(line.isEmpty ? "" : String(repeating: " ", count: indent) + line) }

    /// An empty line.
    public mutating func blank() { lines.append("") }

    /// Whether a scalar may not appear raw in a literal or a comment.
    static func isUnsafe(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0..<0x20, 0x7F...0x9F, 0x2028, 0x2029, 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069, 0xFEFF: return true
        default: return false
        }
    }

    /// `text` as a Lua string literal in double quotes.
    public static func string(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x80 && isUnsafe(scalar):
                // Three digits always: a digit after the escape cannot join it.
                let digits = String(scalar.value)
                out += "\\" + String(repeating: "0", count: 3 - digits.count) + digits
            case _ where isUnsafe(scalar): out += "\\u{\(String(scalar.value, radix: 16, uppercase: true))}"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }

    /// A Lua name for a table key when `key` is one (`zones`), else the bracketed literal
    /// (`["a b"]`).
    public static func key(_ key: String) -> String {
        let reserved: Set<String> = ["and", "break", "do", "else", "elseif", "end", "false", "for", "function", "goto", "if", "in",
                                     "local", "nil", "not", "or", "repeat", "return", "then", "true", "until", "while"]
        let bytes = Array(key.utf8)
        let isName = !bytes.isEmpty && !reserved.contains(key) && bytes.enumerated().allSatisfy { i, b in
            (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A) || b == 0x5F || (i > 0 && b >= 0x30 && b <= 0x39)
        }
        return isName ? key : "[\(string(key))]"
    }

    /// A JSON value as a Lua constructor on one line: strings as literals, numbers, booleans,
    /// arrays as sequences, objects with sorted keys; `null` is `nil`.
    public static func value(_ value: JSON) -> String {
        switch value {
        case .null: return "nil"
        case .bool(let b): return b ? "true" : "false"
        case .int(let n): return String(n)
        case .double(let d): return d.isFinite ? String(d) : "nil"
        case .string(let s): return string(s)
        case .array(let items): return items.isEmpty ? "{}" : "{ " + items.map(Self.value).joined(separator: ", ") + " }"
        case .object, .ordered:
            let members = value.object ?? [:]
            return members.isEmpty ? "{}" : "{ " + members.keys.sorted().map { "\(key($0)) = \(Self.value(members[$0]!))" }.joined(separator: ", ") + " }"
        }
    }
}
