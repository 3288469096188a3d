public import Formats

/// Everything besides the seed that changes what a sweep's runs show, written into every part
/// (`sweep`, `compare` and `tune --shard`) and every tune state, and compared when parts are
/// merged or told: two parts whose identities differ are runs of different questions, and putting
/// them together would answer neither. Each entry is a name and its value as text (`param.failureRate`
/// → `0.05`, `timeLimit` → `P7D`, `grid` → the combinations of a comparison); names are unique and
/// kept sorted, so the same inputs give the same bytes.
public struct SweepIdentity: Equatable, Sendable {
    /// The entries, sorted by name, each name once.
    public private(set) var entries: [(name: String, value: String)]

    /// The most entries an identity read back may hold: the run inputs are about a dozen, and a
    /// script declares at most `maxParameters` parameters.
    public static let maxEntries = 64 + maxParameters
    /// The most parameters one identity names (a script with more is not sharded).
    public static let maxParameters = 256
    /// The longest value an identity entry may hold, in UTF-8 bytes (a grid of many combinations).
    public static let maxValueBytes = 1 << 20

    /// An identity of `entries`; a name given twice keeps its last value.
    public init(_ entries: [(String, String)] = []) {
        var byName: [String: String] = [:]
        for (name, value) in entries { byName[name] = value }
        self.entries = byName.sorted { $0.key < $1.key }.map { (name: $0.key, value: $0.value) }
    }

    /// The value of `name`, if the identity holds it.
    public subscript(name: String) -> String? { entries.first { $0.name == name }?.value }

    public static func == (a: SweepIdentity, b: SweepIdentity) -> Bool {
        a.entries.count == b.entries.count && zip(a.entries, b.entries).allSatisfy { $0.name == $1.name && $0.value == $1.value }
    }

    /// The identity without the entry `name` (a tune state compares a part's runs without the
    /// grid it was run in: `sweep` parts of one candidate and `tune --shard` parts tell alike).
    public func removing(_ name: String) -> SweepIdentity {
        var copy = self
        copy.entries.removeAll { $0.name == name }
        return copy
    }

    /// The names whose values differ between `self` and `other` (a name only one of them holds
    /// included), sorted, each with both values (nil where absent), values cut at 80 characters.
    public func differences(from other: SweepIdentity) -> [(name: String, mine: String?, theirs: String?)] {
        let names = Set(entries.map(\.name)).union(other.entries.map(\.name)).sorted()
        return names.compactMap { name in
            let mine = self[name], theirs = other[name]
            return mine == theirs ? nil : (name, mine.map { Self.cut($0) }, theirs.map { Self.cut($0) })
        }
    }

    /// `timeLimit (P7D here, P1D in b.json), param.x (absent here, 2 in b.json)`: the differences
    /// from `other`, named for a message; `here` and `there` name the two sides.
    public func describeDifferences(from other: SweepIdentity, here: String, there: String) -> String {
        differences(from: other).map { d in
            "\(d.name) (\(d.mine ?? "absent") in \(here), \(d.theirs ?? "absent") in \(there))"
        }.joined(separator: ", ")
    }

    /// `text` cut at 80 characters for a message.
    static func cut(_ text: String) -> String { text.count > 80 ? String(text.prefix(80)) + "…" : text }

    /// The identity as a JSON object of strings, in name order.
    public var json: JSON { .ordered(entries.map { JSONField($0.name, .string($0.value)) }) }

    /// Reads an identity `json` wrote; the problem (what is wrong and what is allowed) otherwise.
    public static func read(_ value: JSON?) -> Result<SweepIdentity, SweepPart.Failure> {
        let form = "an object of at most \(maxEntries) names, each with a string of at most \(maxValueBytes) bytes"
        let fields: [(String, JSON)]
        switch value {
        case .object(let members)?: fields = members.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
        case .ordered(let members)?: fields = members.map { ($0.key, $0.value) }
        default: return .failure(SweepPart.Failure(field: "identity", "missing or not an object; expected \(form)"))
        }
        guard fields.count <= maxEntries else { return .failure(SweepPart.Failure(field: "identity", "has \(fields.count) names; expected \(form)")) }
        var entries: [(String, String)] = []
        var seen = Set<String>()
        for (name, item) in fields {
            guard case .string(let text) = item, text.utf8.count <= maxValueBytes else {
                return .failure(SweepPart.Failure(field: "identity.\(cut(name))", "expected a string of at most \(maxValueBytes) bytes"))
            }
            guard seen.insert(name).inserted else { return .failure(SweepPart.Failure(field: "identity.\(cut(name))", "is given twice")) }
            entries.append((name, text))
        }
        return .success(SweepIdentity(entries))
    }
}
