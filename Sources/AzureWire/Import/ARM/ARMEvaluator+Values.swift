import Formats

/// Strings and collections (comparisons and arithmetic are in ARMEvaluator+Logic.swift). Strings index by UTF-16 code unit, as
/// .NET (and so ARM) does; every string produced is at most `maxStringBytes`.
extension ARMEvaluator {
    func checked(_ s: String) throws(ARMFailure) -> JSON {
        guard s.utf8.count <= Self.maxStringBytes else {
            throw ARMFailure("the expression produces a string of \(s.utf8.count) bytes, more than the \(Self.maxStringBytes) allowed")
        }
        return .string(s)
    }

    /// The text `string(…)` and `concat`/`format` give a value: strings as they are, numbers in
    /// decimal, booleans as .NET writes them (`True`), arrays and objects as compact JSON.
    static func text(_ value: JSON) -> String {
        switch value {
        case .string(let s): return s
        case .bool(let b): return b ? "True" : "False"
        case .null: return ""
        default: return value.serialized(pretty: false)
        }
    }

    static func utf16Slice(_ s: String, _ start: Int, _ count: Int) -> String {
        let units = Array(s.utf16)
        let from = max(0, min(start, units.count)), to = max(from, min(units.count, from + max(0, count)))
        return String(decoding: units[from..<to], as: UTF16.self)
    }

    func stringCall(_ lowered: String, _ a: Arguments) throws(ARMFailure) -> JSON? {
        switch lowered {
        case "tolower": try a.expect(1...1); return .string(try a.string(0).lowercased())
        case "toupper": try a.expect(1...1); return .string(try a.string(0).uppercased())
        case "trim": try a.expect(1...1); return .string(try a.string(0).trimmingWhitespace)
        case "string": try a.expect(1...1); return try checked(Self.text(a.values[0]))
        case "substring":
            try a.expect(1...3)
            let s = try a.string(0)
            let length = s.utf16.count
            let start = a.count > 1 ? try a.int(1) : 0
            let count = a.count > 2 ? try a.int(2) : length - start
            guard start >= 0, count >= 0, start <= length, count <= length - start else {
                throw ARMFailure("substring(…) of a string of \(length) character(s) from \(start) for \(count) is outside it")
            }
            return .string(Self.utf16Slice(s, start, count))
        case "replace":
            try a.expect(3...3)
            let (s, old, new) = (try a.string(0), try a.string(1), try a.string(2))
            guard !old.isEmpty else { throw ARMFailure("replace(…) cannot replace an empty string") }
            try chargeSearch(s)
            let pieces = s.pieces(separatedBy: old)
            let growth = (pieces.count - 1).multipliedReportingOverflow(by: new.utf8.count)
            guard !growth.overflow, growth.partialValue <= Self.maxStringBytes else {
                throw ARMFailure("replace(…) would produce a string larger than \(Self.maxStringBytes) bytes")
            }
            return try checked(pieces.joined(separator: new))
        case "split":
            try a.expect(2...2)
            let s = try a.string(0)
            var separators: [String] = []
            if case .array(let items) = a.values[1] {
                for item in items { if case .string(let d) = item { separators.append(d) } }
            } else {
                separators = [try a.string(1)]
            }
            var parts = [s]
            // Each separator is one pass over the text, charged to the budget as text read.
            for separator in separators where !separator.isEmpty {
                try chargeSearch(s)
                parts = parts.flatMap { $0.pieces(separatedBy: separator) }
            }
            try charge(parts.count)
            return .array(parts.map(JSON.string))
        case "startswith", "endswith":
            try a.expect(2...2)
            let (s, affix) = (try a.string(0).lowercased(), try a.string(1).lowercased())
            return .bool(lowered == "startswith" ? s.hasPrefix(affix) : s.hasSuffix(affix))
        case "lastindexof" where a.count == 2 && a.values[0].isString, "indexof" where a.count == 2 && a.values[0].isString:
            let (s, t) = (Array(try a.string(0).lowercased().utf16), Array(try a.string(1).lowercased().utf16))
            try chargeSearch(try a.string(0))
            return .int(Self.find(t, in: s, last: lowered == "lastindexof"))
        case "padleft":
            try a.expect(2...3)
            let s = Self.text(a.values[0])
            let width = try a.int(1)
            let pad = a.count == 3 ? try a.string(2) : " "
            guard width <= 16_000, pad.utf16.count == 1 else { throw ARMFailure("padLeft(…) pads with one character to at most 16,000") }
            return .string(String(repeating: pad, count: max(0, width - s.utf16.count)) + s)
        case "format":
            try a.expect(1...Int.max)
            return try checked(try Self.format(try a.string(0), Array(a.values.dropFirst())))
        case "uri":
            try a.expect(2...2)
            let (base, relative) = (try a.string(0), try a.string(1))
            if relative.contains("://") { return .string(relative) }
            guard let slash = base.lastIndex(of: "/") else { return .string(relative) }
            return try checked(String(base[...slash]) + (relative.hasPrefix("/") ? String(relative.dropFirst()) : relative))
        case "uricomponent":
            try a.expect(1...1)
            var out = ""
            for byte in try a.string(0).utf8 {
                let c = Character(Unicode.Scalar(byte))
                if c.isASCII && (c.isLetter || c.isNumber || "-_.~".contains(c)) { out.append(c) } else { out += "%" + String(byte, radix: 16, uppercase: true).leftPadded(2) }
            }
            return try checked(out)
        case "join":
            try a.expect(2...2)
            let items = try a.array(0)
            var parts: [String] = []
            for (i, item) in items.enumerated() {
                guard case .string(let s) = item else { throw ARMFailure("join(…) expects strings; element \(i) is \(item.kindName)") }
                parts.append(s)
            }
            return try checked(parts.joined(separator: try a.string(1)))
        default:
            return nil
        }
    }

    /// Charges a search through `text` to the budget as the text it reads, a unit per 64 bytes:
    /// a template that searches a long generated string again and again runs out of budget
    /// (256 MiB read in all at most), not of time.
    func chargeSearch(_ text: String) throws(ARMFailure) {
        try charge(text.utf8.count >> 6)
    }

    /// Where `needle` first (or last) occurs in `haystack`, or -1: in time linear in both
    /// (Knuth–Morris–Pratt), whatever they hold.
    static func find(_ needle: [UInt16], in haystack: [UInt16], last: Bool) -> Int {
        guard needle.count <= haystack.count else { return -1 }
        if needle.isEmpty { return last ? haystack.count - 1 : 0 }
        guard last else { return TextSearch.first(needle, in: haystack[...]) ?? -1 }
        // The last occurrence is the first one in both reversed.
        let found = TextSearch.first(Array(needle.reversed()), in: Array(haystack.reversed())[...])
        return found.map { haystack.count - $0 - needle.count } ?? -1
    }

    /// .NET composite formatting as `format` does it: `{0}`, `{1:D3}` (zero-padded), `{0:N0}`
    /// (thousands), `{0:x}`/`{0:X}` (hexadecimal), `{{` and `}}` for braces.
    static func format(_ pattern: String, _ values: [JSON]) throws(ARMFailure) -> String {
        var out = ""
        var chars = Array(pattern)[...]
        while let c = chars.popFirst() {
            if c == "{", chars.first == "{" { chars.removeFirst(); out.append("{"); continue }
            if c == "}", chars.first == "}" { chars.removeFirst(); out.append("}"); continue }
            guard c == "{" else { out.append(c); continue }
            guard let close = chars.firstIndex(of: "}") else { throw ARMFailure("format(…)'s pattern has a { that is never closed") }
            let spec = String(chars[chars.startIndex..<close])
            chars = chars[(close + 1)...]
            let parts = spec.split(separator: ":", maxSplits: 1).map(String.init)
            guard let indexText = parts.first?.split(separator: ",").first, let index = Int(indexText.trimmingWhitespace), values.indices.contains(index) else {
                throw ARMFailure("format(…)'s pattern names {\(spec)}, but \(values.count) value(s) follow it")
            }
            let value = values[index]
            guard parts.count == 2 else { out += text(value); continue }
            let specifier = parts[1]
            guard case .int(let n) = value, let kind = specifier.first else { out += text(value); continue }
            let digits = Int(specifier.dropFirst()) ?? 0
            switch kind {
            case "D", "d": out += (n < 0 ? "-" : "") + String(n.magnitude).leftPadded(min(digits, 64))
            case "x", "X": out += String(n, radix: 16, uppercase: kind == "X").leftPadded(min(digits, 64))
            case "N", "n":
                var grouped = "", s = Array(String(n.magnitude))
                while s.count > 3 { grouped = "," + String(s.suffix(3)) + grouped; s.removeLast(3) }
                out += (n < 0 ? "-" : "") + String(s) + grouped
            default: throw ARMFailure("format(…) does not know the number format \(specifier); allowed D, N, X")
            }
        }
        return out
    }

    func collectionCall(_ lowered: String, _ a: Arguments) throws(ARMFailure) -> JSON? {
        switch lowered {
        case "concat":
            if a.values.first.map({ if case .array = $0 { return true } else { return false } }) ?? false {
                var out: [JSON] = []
                for i in 0..<a.count {
                    out += try a.array(i)
                    guard out.count <= Self.maxValueUnits else { throw ARMFailure("concat(…) would produce more than \(Self.maxValueUnits) elements") }
                }
                return .array(out)
            }
            var out = ""
            for value in a.values {
                out += Self.text(value)
                guard out.utf8.count <= Self.maxStringBytes else { throw ARMFailure("concat(…) would produce a string larger than \(Self.maxStringBytes) bytes") }
            }
            return .string(out)
        case "length", "empty":
            try a.expect(1...1)
            let count: Int
            switch a.values[0] {
            case .null where lowered == "empty": count = 0
            case .string(let s): count = s.utf16.count
            case .array(let items): count = items.count
            case let v where v.object != nil: count = v.object!.count
            default: throw a.wrong(0, "a string, an array or an object")
            }
            return lowered == "length" ? .int(count) : .bool(count == 0)
        case "contains":
            try a.expect(2...2)
            switch a.values[0] {
            case .string(let s):
                try chargeSearch(s)
                let needle = Array(Self.text(a.values[1]).utf8)
                return .bool(needle.isEmpty || TextSearch.first(needle, in: Array(s.utf8)[...]) != nil)
            case .array(let items): return .bool(items.contains(a.values[1]))
            case let v where v.object != nil: return .bool(v.member(try a.string(1)) != nil)
            default: throw a.wrong(0, "a string, an array or an object")
            }
        case "first", "last":
            try a.expect(1...1)
            switch a.values[0] {
            case .string(let s): return .string(s.isEmpty ? "" : String(lowered == "first" ? s.first! : s.last!))
            case .array(let items): return (lowered == "first" ? items.first : items.last) ?? .null
            default: throw a.wrong(0, "a string or an array")
            }
        case "indexof", "lastindexof":
            try a.expect(2...2)
            let items = try a.array(0)
            let found = lowered == "indexof" ? items.firstIndex(of: a.values[1]) : items.lastIndex(of: a.values[1])
            return .int(found ?? -1)
        case "take", "skip":
            try a.expect(2...2)
            let n = max(0, try a.int(1))
            switch a.values[0] {
            case .string(let s):
                let count = s.utf16.count
                return .string(lowered == "take" ? Self.utf16Slice(s, 0, n) : Self.utf16Slice(s, min(n, count), count))
            case .array(let items): return .array(Array(lowered == "take" ? items.prefix(n) : items.dropFirst(min(n, items.count))))
            default: throw a.wrong(0, "a string or an array")
            }
        case "range":
            try a.expect(2...2)
            let (start, count) = (try a.int(0), try a.int(1))
            guard (0...10_000).contains(count), start.addingReportingOverflow(count).overflow == false else {
                throw ARMFailure("range(\(start), \(count)) is out of bounds; allowed a count from 0 to 10,000")
            }
            try charge(count)
            return .array((start..<(start + count)).map(JSON.int))
        case "createarray":
            return .array(a.values)
        case "createobject":
            guard a.count % 2 == 0 else { throw ARMFailure("createObject(…) takes names and values in pairs, not \(a.count) argument(s)") }
            var out: [String: JSON] = [:]
            for i in stride(from: 0, to: a.count, by: 2) { out[try a.string(i)] = a.values[i + 1] }
            return .object(out)
        case "union":
            try a.expect(1...Int.max)
            if case .array = a.values[0] {
                var out: [JSON] = []
                for i in 0..<a.count {
                    for item in try a.array(i) where !out.contains(item) {
                        try charge(out.count)
                        out.append(item)
                    }
                }
                return .array(out)
            }
            var out: [String: JSON] = [:]
            for i in 0..<a.count where a.values[i] != .null { Self.merge(&out, try a.object(i)) }
            return .object(out)
        case "intersection":
            try a.expect(1...Int.max)
            if case .array(let first) = a.values[0] {
                var out = first
                for i in 1..<a.count {
                    let other = try a.array(i)
                    try charge(out.count * max(1, other.count))
                    out = out.filter(other.contains)
                }
                return .array(out)
            }
            var out = try a.object(0)
            for i in 1..<a.count {
                let other = try a.object(i)
                out = out.filter { other[$0.key] == $0.value }
            }
            return .object(out)
        case "flatten":
            try a.expect(1...1)
            var out: [JSON] = []
            for item in try a.array(0) { if case .array(let inner) = item { out += inner } else { throw ARMFailure("flatten(…) expects an array of arrays") } }
            return .array(out)
        case "items":
            try a.expect(1...1)
            let members = try a.object(0)
            return .array(members.keys.sorted().map { JSON.object(["key": .string($0), "value": members[$0]!]) })
        case "objectkeys":
            try a.expect(1...1)
            return .array(try a.object(0).keys.sorted().map(JSON.string))
        case "shallowmerge":
            try a.expect(1...1)
            var out: [String: JSON] = [:]
            for item in try a.array(0) { for (k, v) in item.object ?? [:] { out[k] = v } }
            return .object(out)
        case "tryget":
            try a.expect(2...Int.max)
            var value = a.values[0]
            for key in a.values.dropFirst() {
                switch (value, key) {
                case (.array(let items), .int(let i)): value = items.indices.contains(i) ? items[i] : .null
                case (_, .string(let k)) where value.object != nil: value = value.member(k) ?? .null
                default: return .null
                }
            }
            return value
        case "json":
            try a.expect(1...1)
            let text = try a.string(0)
            do { return try JSON.parse(text, maxBytes: Self.maxStringBytes) } catch { throw ARMFailure("json(…) of text that is not JSON: \(error.problem)") }
        case "array":
            try a.expect(1...1)
            if case .array = a.values[0] { return a.values[0] }
            return .array([a.values[0]])
        default:
            return nil
        }
    }

    /// Members of `other` into `out`; objects under the same name merge member by member.
    static func merge(_ out: inout [String: JSON], _ other: [String: JSON]) {
        for (key, value) in other {
            if let old = out[key]?.object, let new = value.object {
                var inner = old
                merge(&inner, new)
                out[key] = .object(inner)
            } else {
                out[key] = value
            }
        }
    }
}

extension JSON {
    var isString: Bool { if case .string = self { return true } else { return false } }
}

extension StringProtocol {
    /// Without leading and trailing whitespace and line breaks.
    var trimmingWhitespace: String {
        var s = Substring(self)
        while s.first?.isWhitespace == true { s.removeFirst() }
        while s.last?.isWhitespace == true { s.removeLast() }
        return String(s)
    }

    func leftPadded(_ width: Int) -> String { String(repeating: "0", count: Swift.max(0, width - count)) + self }

    /// The text between occurrences of `separator` (not empty), compared byte for byte, found in
    /// time linear in the text and the separator.
    func pieces(separatedBy separator: String) -> [String] {
        let bytes = Array(utf8), sep = Array(separator.utf8)
        var out: [String] = [], start = 0
        while let found = TextSearch.first(sep, in: bytes[start...]) {
            out.append(String(decoding: bytes[start..<found], as: UTF8.self))
            start = found + sep.count
        }
        out.append(String(decoding: bytes[start...], as: UTF8.self))
        return out
    }
}

/// Substring search in linear time (Knuth–Morris–Pratt): the template functions that search
/// text (`indexOf`, `lastIndexOf`, `replace`, `split`, `contains`) take time proportional to
/// the text and the pattern, never to their product.
enum TextSearch {
    /// The index in `haystack` (its own indices) where `needle` (not empty) first occurs, or nil.
    static func first<T: Equatable>(_ needle: [T], in haystack: ArraySlice<T>) -> Int? {
        guard !needle.isEmpty, needle.count <= haystack.count else { return nil }
        // failure[i]: the length of the longest proper prefix of needle[0...i] that is also its suffix.
        var failure = [Int](repeating: 0, count: needle.count)
        var k = 0
        for i in 1..<needle.count {
            while k > 0 && needle[i] != needle[k] { k = failure[k - 1] }
            if needle[i] == needle[k] { k += 1 }
            failure[i] = k
        }
        var matched = 0
        for i in haystack.indices {
            while matched > 0 && haystack[i] != needle[matched] { matched = failure[matched - 1] }
            if haystack[i] == needle[matched] { matched += 1 }
            if matched == needle.count { return i - needle.count + 1 }
        }
        return nil
    }
}
