import Formats
/// One ARM template expression, the text between `[` and `]` of a template string, parsed:
/// string literals in single quotes (`''` is a quote), whole numbers, function calls with
/// arguments (a namespaced `ns.name(…)` is a user-defined function), `.property` and `[index]`
/// access after any of them.
indirect enum ARMExpression: Equatable, Sendable {
    case string(String)
    case number(Int)
    case call(String, [ARMExpression])
    case member(ARMExpression, String)
    case index(ARMExpression, ARMExpression)

    /// The deepest nesting of calls and accesses a parsed expression may have.
    static let maxDepth = 48
    /// The longest expression text read, in bytes.
    static let maxLength = 256 << 10

    /// Parses `text` (without its brackets), or says what is wrong and where.
    static func parse(_ text: String) throws(ARMFailure) -> ARMExpression {
        let bytes = Array(text.utf8)
        guard bytes.count <= maxLength else {
            throw ARMFailure("the expression is \(bytes.count) bytes, more than the \(maxLength) read")
        }
        var parser = Parser(bytes: bytes)
        let expression = try parser.expression(depth: 0)
        parser.skipSpace()
        guard parser.i == bytes.count else { throw parser.unexpected("the end of the expression") }
        return expression
    }

    /// A recursive-descent reader over the UTF-8 bytes; nesting is bounded by `maxDepth`.
    struct Parser {
        let bytes: [UInt8]
        var i = 0

        /// Skips white space as ARM's tokenizer does (.NET's `char.IsWhiteSpace`: the ASCII
        /// spaces and controls 0x09–0x0D, and Unicode's: U+0085, U+00A0, U+1680, U+2000–U+200A,
        /// U+2028, U+2029, U+202F, U+205F, U+3000), here as their UTF-8 bytes.
        mutating func skipSpace() {
            while i < bytes.count {
                let b = bytes[i]
                if b == 0x20 || (0x09...0x0D).contains(b) { i += 1; continue }
                let next = i + 1 < bytes.count ? bytes[i + 1] : 0, third = i + 2 < bytes.count ? bytes[i + 2] : 0
                if b == 0xC2, next == 0x85 || next == 0xA0 { i += 2; continue }
                if b == 0xE1, next == 0x9A, third == 0x80 { i += 3; continue }
                if b == 0xE2, next == 0x80, (0x80...0x8A).contains(third) || third == 0xA8 || third == 0xA9 || third == 0xAF { i += 3; continue }
                if b == 0xE2, next == 0x81, third == 0x9F { i += 3; continue }
                if b == 0xE3, next == 0x80, third == 0x80 { i += 3; continue }
                return
            }
        }

        func unexpected(_ wanted: String) -> ARMFailure {
            let found = i < bytes.count ? "'\(String(decoding: bytes[i..<min(bytes.count, i + 12)], as: UTF8.self))'" : "the end"
            return ARMFailure("the expression is malformed at character \(i + 1): found \(found), expected \(wanted)")
        }

        mutating func expression(depth: Int) throws(ARMFailure) -> ARMExpression {
            guard depth < ARMExpression.maxDepth else {
                throw ARMFailure("the expression nests deeper than \(ARMExpression.maxDepth) levels")
            }
            skipSpace()
            guard i < bytes.count else { throw unexpected("a value") }
            var value: ARMExpression
            switch bytes[i] {
            case UInt8(ascii: "'"): value = .string(try string())
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): value = .number(try number())
            default: value = try call(depth: depth)
            }
            while true {
                skipSpace()
                guard i < bytes.count else { return value }
                if bytes[i] == UInt8(ascii: ".") {
                    i += 1
                    skipSpace()
                    value = .member(value, try identifier())
                } else if bytes[i] == UInt8(ascii: "[") {
                    i += 1
                    let index = try expression(depth: depth + 1)
                    skipSpace()
                    guard i < bytes.count, bytes[i] == UInt8(ascii: "]") else { throw unexpected("']'") }
                    i += 1
                    value = .index(value, index)
                } else {
                    return value
                }
            }
        }

        mutating func call(depth: Int) throws(ARMFailure) -> ARMExpression {
            var name = try identifier()
            skipSpace()
            // A user-defined function: namespace.name(…).
            if i < bytes.count, bytes[i] == UInt8(ascii: ".") {
                let save = i
                i += 1
                if let member = try? identifier() {
                    skipSpace()
                    if i < bytes.count, bytes[i] == UInt8(ascii: "(") { name += "." + member } else { i = save }
                } else {
                    i = save
                }
            }
            skipSpace()
            guard i < bytes.count, bytes[i] == UInt8(ascii: "(") else { throw unexpected("'(' after the function name \(name)") }
            i += 1
            var arguments: [ARMExpression] = []
            skipSpace()
            if i < bytes.count, bytes[i] == UInt8(ascii: ")") {
                i += 1
                return .call(name, arguments)
            }
            while true {
                arguments.append(try expression(depth: depth + 1))
                skipSpace()
                guard i < bytes.count else { throw unexpected("',' or ')'") }
                if bytes[i] == UInt8(ascii: ",") {
                    i += 1
                } else if bytes[i] == UInt8(ascii: ")") {
                    i += 1
                    return .call(name, arguments)
                } else {
                    throw unexpected("',' or ')'")
                }
            }
        }

        mutating func identifier() throws(ARMFailure) -> String {
            let start = i
            while i < bytes.count {
                let b = bytes[i]
                let letter = (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A) || b == UInt8(ascii: "_") || b == UInt8(ascii: "$")
                let digit = b >= 0x30 && b <= 0x39
                guard letter || (digit && i > start) else { break }
                i += 1
            }
            guard i > start else { throw unexpected("a function name or a property") }
            return String(decoding: bytes[start..<i], as: UTF8.self)
        }

        mutating func string() throws(ARMFailure) -> String {
            i += 1
            var out: [UInt8] = []
            while i < bytes.count {
                if bytes[i] == UInt8(ascii: "'") {
                    if i + 1 < bytes.count, bytes[i + 1] == UInt8(ascii: "'") {
                        out.append(UInt8(ascii: "'"))
                        i += 2
                        continue
                    }
                    i += 1
                    return String(decoding: out, as: UTF8.self)
                }
                out.append(bytes[i])
                i += 1
            }
            throw ARMFailure("the expression has a string that is never closed (a quote inside a string is written '')")
        }

        mutating func number() throws(ARMFailure) -> Int {
            let start = i
            if bytes[i] == UInt8(ascii: "-") { i += 1 }
            while i < bytes.count, bytes[i] >= 0x30, bytes[i] <= 0x39 { i += 1 }
            guard let value = Int(String(decoding: bytes[start..<i], as: UTF8.self)) else {
                throw ARMFailure("\(String(decoding: bytes[start..<i], as: UTF8.self)) is not a whole number ARM can hold (64-bit)")
            }
            return value
        }
    }
}

/// Why an expression could not be evaluated: what is wrong and, once known, the path in the
/// document of the value that holds it.
struct ARMFailure: Error, Equatable {
    var message: String
    /// The document path of the value whose evaluation failed (`variables.name`,
    /// `resources[1].sku.capacity`); empty until the evaluator places it.
    var path: String = ""
    /// The input that would have answered, when one would (a parameters file).
    var remedy: Remedy?
    /// The bound the template went past, when that is the failure.
    var limit: Problem.Limit?
    /// The references that lead back to the first, when the failure is a cycle.
    var cycle: [String]?
    /// Already reported where it arose (a parameter given without a value): a field that needs
    /// it is left unread, with no second problem.
    var reported = false

    init(_ message: String, path: String = "", remedy: Remedy? = nil, limit: Problem.Limit? = nil) {
        self.message = message
        self.path = path
        self.remedy = remedy
        self.limit = limit
    }
}
