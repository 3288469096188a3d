public import Formats

/// Reads typed fields out of JSON objects, collecting problems instead of stopping at the first.
public struct FieldReader {
    /// Put before every field path in problems (e.g. `upgradePolicy`); empty at a document's top.
    public let prefix: String
    /// Every problem found so far.
    public var problems: [Problem] = []

    /// A reader whose problems name fields under `prefix`.
    public init(prefix: String) { self.prefix = prefix }

    /// Records a problem with `field` (relative to the prefix).
    public mutating func problem(_ field: String, _ message: String) {
        problems.append(Problem(field: prefix.isEmpty ? field : "\(prefix).\(field)", message))
    }

    /// Records one problem per key of `members` not in `known` (compared case-insensitively),
    /// and one per key that repeats another in another case (`properties` beside `Properties`):
    /// names are read ignoring case, so one of the two would be passed over.
    public mutating func refuseUnknown(_ members: [String: JSON], known: [String], under path: String? = nil) {
        let lowered = Set(known.map { $0.lowercased() })
        var seen: [String: String] = [:]
        for key in members.keys.sorted() {
            let field = path.map { "\($0).\(key)" } ?? key
            if let first = seen[key.lowercased()] {
                problem(field, "repeats \(first) in another case; names are compared ignoring case, so give it once")
            } else if !lowered.contains(key.lowercased()) {
                problem(field, "unknown field; allowed \(known.joined(separator: ", "))")
            }
            seen[key.lowercased()] = seen[key.lowercased()] ?? key
        }
    }

    /// A whole number in `range` (`unit` names what it counts), or nil with a problem; absent is nil without one.
    public mutating func integer(_ object: JSON, _ path: String, _ key: String, _ range: ClosedRange<Int>, unit: String) -> Int? {
        guard let value = object.field(key) else { return nil }
        let field = path.isEmpty ? key : "\(path).\(key)"
        if case .double(let d) = value, d == d.rounded(), abs(d) < 1e15 { return integer(.object([key: .int(Int(d))]), path, key, range, unit: unit) }
        switch value {
        case .int(let i) where range.contains(i): return i
        case .int(let i): problem(field, "\(i) is out of range; allowed \(range.lowerBound)–\(range.upperBound) (\(unit))")
        default: problem(field, "\(value.serialized(pretty: false)) is \(value.kindName); allowed a whole number \(range.lowerBound)–\(range.upperBound) (\(unit))")
        }
        return nil
    }

    /// A boolean (and, with `acceptStrings`, "true"/"false"), or nil with a problem; absent is nil without one.
    public mutating func bool(_ object: JSON, _ path: String, _ key: String, acceptStrings: Bool) -> Bool? {
        guard let value = object.field(key) else { return nil }
        switch value {
        case .bool(let b): return b
        case .string(let s) where acceptStrings && ["true", "false"].contains(s.lowercased()): return s.lowercased() == "true"
        default:
            problem("\(path).\(key)", "\(value.serialized(pretty: false)) is not a boolean; allowed true or false\(acceptStrings ? " (or the strings \"true\", \"false\")" : "")")
            return nil
        }
    }

    /// An ISO 8601 duration in milliseconds, or nil with a problem; absent is nil without one.
    public mutating func duration(_ object: JSON, _ path: String, _ key: String) -> Millis? {
        guard let value = object.field(key) else { return nil }
        guard case .string(let text) = value else {
            problem("\(path).\(key)", "\(value.serialized(pretty: false)) is \(value.kindName); allowed an ISO 8601 duration such as PT2S")
            return nil
        }
        switch ISODuration.parse(text) {
        case .success(let ms): return ms
        case .failure(let error):
            problem("\(path).\(key)", "\(error); allowed PnDTnHnMnS, e.g. PT2S or PT1M30S")
            return nil
        }
    }

    /// Whether `value` at `path` is an object; a problem when not, and one per unknown key.
    public mutating func object(_ value: JSON, _ path: String, known: [String]) -> Bool {
        guard let members = value.object else {
            problem(path, "is \(value.kindName); expected an object")
            return false
        }
        refuseUnknown(members, known: known, under: path)
        return true
    }
}
