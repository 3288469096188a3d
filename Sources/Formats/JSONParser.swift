/// A JSON reader for untrusted text, linear in its length: one pass over the UTF-8 bytes, one
/// value built per value read, no work per nesting level. Foundation's decoder, driven through
/// `Decodable`, tries every type in turn and builds a coding path on each failed try, so its
/// cost grows with values × depth (1 MiB of empty arrays 63 deep took 37 s); this one reads the
/// same megabyte in milliseconds and says where malformed text goes wrong, by line and column.
struct JSONParser {
    private let bytes: [UInt8]
    private var i = 0
    private let maxDepth: Int
    /// Whether `//` and `/* */` comments count as whitespace, a comma may come before a closing
    /// bracket and a string may hold a raw line break or tab (ARM reads templates and parameter
    /// files so).
    private let comments: Bool

    init(_ bytes: [UInt8], maxDepth: Int, comments: Bool = false) {
        self.bytes = bytes
        self.maxDepth = maxDepth
        self.comments = comments
    }

    /// The one value the text holds (whitespace around it allowed, nothing else). A UTF-8
    /// byte-order mark before it is skipped, as Azure and most editors accept one.
    mutating func document() throws(JSONError) -> JSON {
        if bytes.count >= 3, bytes[0] == 0xEF, bytes[1] == 0xBB, bytes[2] == 0xBF { i = 3 }
        skipSpace()
        let value = try self.value(depth: 0)
        skipSpace()
        guard i == bytes.count else { throw malformed() }
        return value
    }

    private mutating func value(depth: Int) throws(JSONError) -> JSON {
        guard i < bytes.count else { throw malformed() }
        switch bytes[i] {
        case UInt8(ascii: "{"):
            guard depth < maxDepth else { throw JSONError(problem: "nests deeper than \(maxDepth) levels") }
            return try object(depth: depth + 1)
        case UInt8(ascii: "["):
            guard depth < maxDepth else { throw JSONError(problem: "nests deeper than \(maxDepth) levels") }
            return try array(depth: depth + 1)
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "t"): return try literal("true", .bool(true))
        case UInt8(ascii: "f"): return try literal("false", .bool(false))
        case UInt8(ascii: "n"): return try literal("null", .null)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try number()
        default: throw malformed()
        }
    }

    private mutating func object(depth: Int) throws(JSONError) -> JSON {
        i += 1
        var members: [String: JSON] = [:]
        skipSpace()
        if i < bytes.count && bytes[i] == UInt8(ascii: "}") {
            i += 1
            return .object(members)
        }
        while true {
            skipSpace()
            guard i < bytes.count, bytes[i] == UInt8(ascii: "\"") else { throw malformed() }
            let key = try string()
            skipSpace()
            guard i < bytes.count, bytes[i] == UInt8(ascii: ":") else { throw malformed() }
            i += 1
            skipSpace()
            members[key] = try value(depth: depth)
            skipSpace()
            guard i < bytes.count else { throw malformed() }
            if bytes[i] == UInt8(ascii: ",") {
                i += 1
                // ARM's reader, as JSON.NET, accepts a comma before the closing brace.
                skipSpace()
                if comments, i < bytes.count, bytes[i] == UInt8(ascii: "}") {
                    i += 1
                    return .object(members)
                }
                continue
            }
            guard bytes[i] == UInt8(ascii: "}") else { throw malformed() }
            i += 1
            return .object(members)
        }
    }

    private mutating func array(depth: Int) throws(JSONError) -> JSON {
        i += 1
        var items: [JSON] = []
        skipSpace()
        if i < bytes.count && bytes[i] == UInt8(ascii: "]") {
            i += 1
            return .array(items)
        }
        while true {
            skipSpace()
            items.append(try value(depth: depth))
            skipSpace()
            guard i < bytes.count else { throw malformed() }
            if bytes[i] == UInt8(ascii: ",") {
                i += 1
                skipSpace()
                if comments, i < bytes.count, bytes[i] == UInt8(ascii: "]") {
                    i += 1
                    return .array(items)
                }
                continue
            }
            guard bytes[i] == UInt8(ascii: "]") else { throw malformed() }
            i += 1
            return .array(items)
        }
    }

    private mutating func literal(_ word: StaticString, _ value: JSON) throws(JSONError) -> JSON {
        let count = word.utf8CodeUnitCount
        guard i + count <= bytes.count else { throw malformed() }
        for k in 0..<count where bytes[i + k] != word.utf8Start[k] {
            i += k
            throw malformed()
        }
        i += count
        return value
    }

    /// A number: an `int` when it has no fraction or exponent and fits, else a `double`.
    private mutating func number() throws(JSONError) -> JSON {
        let start = i
        if bytes[i] == UInt8(ascii: "-") { i += 1 }
        guard i < bytes.count, isDigit(bytes[i]) else { throw malformed() }
        if bytes[i] == UInt8(ascii: "0") {
            i += 1
        } else {
            while i < bytes.count && isDigit(bytes[i]) { i += 1 }
        }
        var integral = true
        if i < bytes.count && bytes[i] == UInt8(ascii: ".") {
            integral = false
            i += 1
            guard i < bytes.count, isDigit(bytes[i]) else { throw malformed() }
            while i < bytes.count && isDigit(bytes[i]) { i += 1 }
        }
        if i < bytes.count && (bytes[i] == UInt8(ascii: "e") || bytes[i] == UInt8(ascii: "E")) {
            integral = false
            i += 1
            if i < bytes.count && (bytes[i] == UInt8(ascii: "+") || bytes[i] == UInt8(ascii: "-")) { i += 1 }
            guard i < bytes.count, isDigit(bytes[i]) else { throw malformed() }
            while i < bytes.count && isDigit(bytes[i]) { i += 1 }
        }
        let text = String(decoding: bytes[start..<i], as: UTF8.self)
        if integral, let n = Int(text) { return .int(n) }
        // A number too small for a double reads as 0: out of range too, rather than a silent 0.
        let mantissa = text.prefix { $0 != "e" && $0 != "E" }
        guard let d = Double(text), d.isFinite, d != 0 || !mantissa.contains(where: { ("1"..."9").contains($0) }) else {
            i = start
            // Valid JSON syntax, but past what a number here can hold: said so, not "not valid JSON".
            let shown = text.count > 40 ? String(text.prefix(40)) + "…" : text
            throw malformed(number: shown)
        }
        return .double(d)
    }

    /// A string (the opening quote at `i`): escapes decoded, control characters refused.
    private mutating func string() throws(JSONError) -> String {
        i += 1
        let start = i
        // The common case: no escape, copied in one piece.
        while i < bytes.count && bytes[i] != UInt8(ascii: "\"") && bytes[i] != UInt8(ascii: "\\") && bytes[i] >= 0x20 { i += 1 }
        guard i < bytes.count else { throw malformed() }
        if bytes[i] == UInt8(ascii: "\"") {
            i += 1
            return String(decoding: bytes[start..<(i - 1)], as: UTF8.self)
        }
        var out = Array(bytes[start..<i])
        while true {
            guard i < bytes.count else { throw malformed() }
            let b = bytes[i]
            if b == UInt8(ascii: "\"") {
                i += 1
                return String(decoding: out, as: UTF8.self)
            }
            // ARM's reader takes a line break or tab written raw inside a string.
            guard b >= 0x20 || (comments && (b == 0x0A || b == 0x0D || b == 0x09)) else { throw malformed() }
            guard b == UInt8(ascii: "\\") else {
                out.append(b)
                i += 1
                continue
            }
            i += 1
            guard i < bytes.count else { throw malformed() }
            switch bytes[i] {
            case UInt8(ascii: "\""): out.append(UInt8(ascii: "\""))
            case UInt8(ascii: "\\"): out.append(UInt8(ascii: "\\"))
            case UInt8(ascii: "/"): out.append(UInt8(ascii: "/"))
            case UInt8(ascii: "b"): out.append(0x08)
            case UInt8(ascii: "f"): out.append(0x0C)
            case UInt8(ascii: "n"): out.append(0x0A)
            case UInt8(ascii: "r"): out.append(0x0D)
            case UInt8(ascii: "t"): out.append(0x09)
            case UInt8(ascii: "u"):
                var scalar = try hex4()
                if (0xD800...0xDBFF).contains(scalar) {
                    // A high surrogate must be followed by an escaped low one.
                    guard i + 2 < bytes.count, bytes[i + 1] == UInt8(ascii: "\\"), bytes[i + 2] == UInt8(ascii: "u") else { throw malformed() }
                    i += 2
                    let low = try hex4()
                    guard (0xDC00...0xDFFF).contains(low) else { throw malformed() }
                    scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                }
                guard let unicode = Unicode.Scalar(scalar) else { throw malformed() }
                out.append(contentsOf: Array(String(Character(unicode)).utf8))
            default: throw malformed()
            }
            i += 1
        }
    }

    /// The four hex digits after `\u` (with `i` on the `u`); leaves `i` on the last digit.
    private mutating func hex4() throws(JSONError) -> UInt32 {
        guard i + 4 < bytes.count else { throw malformed() }
        var value: UInt32 = 0
        for _ in 0..<4 {
            i += 1
            let b = bytes[i]
            let digit: UInt8
            switch b {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = b - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = b - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = b - UInt8(ascii: "A") + 10
            default: throw malformed()
            }
            value = value << 4 | UInt32(digit)
        }
        return value
    }

    private func isDigit(_ b: UInt8) -> Bool { b >= UInt8(ascii: "0") && b <= UInt8(ascii: "9") }

    private mutating func skipSpace() {
        while i < bytes.count {
            switch bytes[i] {
            case 0x20, 0x09, 0x0A, 0x0D: i += 1
            case UInt8(ascii: "/") where comments && i + 1 < bytes.count && bytes[i + 1] == UInt8(ascii: "/"):
                while i < bytes.count, bytes[i] != 0x0A { i += 1 }
            case UInt8(ascii: "/") where comments && i + 1 < bytes.count && bytes[i + 1] == UInt8(ascii: "*"):
                let start = i
                i += 2
                while i + 1 < bytes.count, !(bytes[i] == UInt8(ascii: "*") && bytes[i + 1] == UInt8(ascii: "/")) { i += 1 }
                // An unclosed comment is malformed where it starts.
                guard i + 1 < bytes.count else { i = start; return }
                i += 2
            default: return
            }
        }
    }

    /// The text is malformed at `i`: its line and column (columns count characters); with
    /// `number`, the text is JSON but the number there is out of range.
    private func malformed(number: String? = nil) -> JSONError {
        let offset = min(i, bytes.count)
        var line = 1, column = 1
        for byte in bytes[..<offset] {
            if byte == UInt8(ascii: "\n") {
                line += 1
                column = 1
            } else if byte & 0xC0 != 0x80 {
                column += 1
            }
        }
        let at = offset >= bytes.count ? "the text ends at line \(line), column \(column) before the value is complete" : "around line \(line), column \(column)"
        if let number {
            var error = JSONError(problem: "holds the number \(number) (around line \(line), column \(column)), out of range: a number must be finite, within about ±1.8e308, and 0 or at least about 4.9e-324 in size",
                                  line: line, column: column)
            error.outOfRange = number
            return error
        }
        return JSONError(problem: "is not valid JSON (\(at))", line: line, column: column)
    }
}
