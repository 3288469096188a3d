/// A semantic version as SemVer 2.0.0 defines it: `MAJOR.MINOR.PATCH`, an optional pre-release
/// (`-alpha.1`) and optional build metadata (`+sha.5114f85`, kept but ignored for precedence).
public struct SemVer: Comparable, Hashable, Sendable, CustomStringConvertible {
    /// The three numbers.
    public var major: Int, minor: Int, patch: Int
    /// Pre-release identifiers (`["alpha", "1"]`); empty for a release.
    public var prerelease: [String]
    /// Build metadata identifiers; never compared.
    public var build: [String]

    /// A version from its parts.
    public init(_ major: Int, _ minor: Int, _ patch: Int, prerelease: [String] = [], build: [String] = []) {
        self.major = major
        self.minor = minor
        self.patch = patch
        self.prerelease = prerelease
        self.build = build
    }

    /// Parses a full version (`1.2.3`, `1.0.0-rc.1+build.7`), nil when it is not SemVer 2.0.0:
    /// numbers without leading zeros, identifiers of `[0-9A-Za-z-]`, none empty, numeric
    /// pre-release identifiers without leading zeros.
    public init?(_ text: String) {
        guard let parsed = Self.parse(text, partial: false), let version = parsed.version else { return nil }
        self = version
    }

    /// A version as a range writes it: `1`, `1.2`, `1.2.x`, `*` leave parts open (nil).
    struct Partial {
        var major: Int?, minor: Int?, patch: Int?
        var prerelease: [String] = []
        var build: [String] = []
        /// The full version, when every part is given.
        var version: SemVer? {
            guard let major, let minor, let patch else { return nil }
            return SemVer(major, minor, patch, prerelease: prerelease, build: build)
        }
    }

    static func parse(_ text: String, partial: Bool) -> Partial? {
        var rest = Substring(text)
        var build: [String] = []
        if let plus = rest.firstIndex(of: "+") {
            build = rest[rest.index(after: plus)...].split(separator: ".", omittingEmptySubsequences: false).map(String.init)
            guard build.allSatisfy(isIdentifier) else { return nil }
            rest = rest[..<plus]
        }
        var prerelease: [String] = []
        if let dash = rest.firstIndex(of: "-") {
            prerelease = rest[rest.index(after: dash)...].split(separator: ".", omittingEmptySubsequences: false).map(String.init)
            guard prerelease.allSatisfy({ isIdentifier($0) && !(isNumeric($0) && $0.count > 1 && $0.hasPrefix("0")) }) else { return nil }
            rest = rest[..<dash]
        }
        let parts = rest.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        guard (partial ? 1...3 : 3...3).contains(parts.count) else { return nil }
        var numbers: [Int?] = []
        var open = false
        for part in parts {
            if partial && ["x", "X", "*"].contains(part) {
                open = true
                numbers.append(nil)
                continue
            }
            // A number after a wildcard (`1.x.3`) or with a leading zero is not a version.
            guard !open, isNumeric(part), part.count < 10, !(part.count > 1 && part.hasPrefix("0")) else { return nil }
            numbers.append(Int(part)!)
        }
        while numbers.count < 3 { numbers.append(nil) }
        // A pre-release belongs to a full version only.
        if !prerelease.isEmpty && numbers.contains(where: { $0 == nil }) { return nil }
        return Partial(major: numbers[0], minor: numbers[1], patch: numbers[2], prerelease: prerelease, build: build)
    }

    private static func isIdentifier(_ s: String) -> Bool {
        !s.isEmpty && s.utf8.allSatisfy { ($0 >= 48 && $0 <= 57) || ($0 >= 65 && $0 <= 90) || ($0 >= 97 && $0 <= 122) || $0 == 45 }
    }

    private static func isNumeric(_ s: String) -> Bool { !s.isEmpty && s.utf8.allSatisfy { $0 >= 48 && $0 <= 57 } }

    public var description: String {
        "\(major).\(minor).\(patch)" + (prerelease.isEmpty ? "" : "-" + prerelease.joined(separator: "."))
            + (build.isEmpty ? "" : "+" + build.joined(separator: "."))
    }

    /// The same version without build metadata: what precedence and equality look at.
    var core: (Int, Int, Int) { (major, minor, patch) }

    public static func == (a: SemVer, b: SemVer) -> Bool { a.core == b.core && a.prerelease == b.prerelease }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(major)
        hasher.combine(minor)
        hasher.combine(patch)
        hasher.combine(prerelease)
    }

    /// SemVer 2.0.0 §11: numbers numerically; a pre-release before its release; identifiers one
    /// by one, numeric ones numerically and before alphanumeric ones, alphanumeric ones in ASCII
    /// order; a longer list of identifiers after a shorter one it starts with.
    public static func < (a: SemVer, b: SemVer) -> Bool {
        if a.core != b.core { return a.core < b.core }
        switch (a.prerelease.isEmpty, b.prerelease.isEmpty) {
        case (true, _): return false
        case (false, true): return true
        default: break
        }
        for (x, y) in zip(a.prerelease, b.prerelease) where x != y {
            switch (isNumeric(x), isNumeric(y)) {
            case (true, true): return x.count != y.count ? x.count < y.count : x < y
            case (true, false): return true
            case (false, true): return false
            case (false, false): return Array(x.utf8).lexicographicallyPrecedes(Array(y.utf8))
            }
        }
        return a.prerelease.count < b.prerelease.count
    }
}

/// A version range as npm and Helm write them: comparator sets joined by `||`, each set a
/// space-separated list of comparators that must all hold. Comparators: `=`, `<`, `<=`, `>`,
/// `>=` followed by a version; `^1.2.3` (no change to the left-most non-zero part), `~1.2.3`
/// (patch changes only; `~1` minor changes too); `1.2.x`, `1.x`, `*` (any in the open part);
/// `1.2.3 - 2.3.4` (inclusive; a partial upper bound covers what it leaves open). A version with
/// a pre-release satisfies a set only when a comparator of that set names a pre-release of the
/// same `MAJOR.MINOR.PATCH`: `^1.2.3-beta.2` takes `1.2.3-beta.3`, never `1.2.4-alpha`.
public struct SemVerRange: Sendable, CustomStringConvertible {
    /// The range as written.
    public let text: String
    /// Sets of (operator, bound); a version matches when it satisfies every comparator of a set.
    let sets: [[Comparator]]

    struct Comparator: Sendable {
        enum Op: String, Sendable { case lt = "<", le = "<=", gt = ">", ge = ">=", eq = "=" }
        var op: Op
        var version: SemVer

        func holds(_ v: SemVer) -> Bool {
            switch op {
            case .lt: return v < version
            case .le: return v <= version
            case .gt: return v > version
            case .ge: return v >= version
            case .eq: return v == version
            }
        }
    }

    /// Parses a range, or explains what is wrong with it.
    public init(_ text: String) throws(PluginProblem) {
        self.text = text
        var sets: [[Comparator]] = []
        for alternative in Self.alternatives(text) {
            var terms = alternative.split(separator: " ").map(String.init)
            // Allow "> = 1.0" style spacing after an operator: ">= 1.0.0".
            var joined: [String] = []
            var i = 0
            while i < terms.count {
                if ["<", "<=", ">", ">=", "=", "^", "~"].contains(terms[i]), i + 1 < terms.count, terms[i + 1] != "-" {
                    joined.append(terms[i] + terms[i + 1])
                    i += 2
                } else {
                    joined.append(terms[i])
                    i += 1
                }
            }
            terms = joined
            var set: [Comparator] = []
            if terms.isEmpty {
                // An empty alternative is `*` (npm); a wholly empty range is refused below.
                set = []
            } else if terms.count == 3 && terms[1] == "-" {
                set = try Self.hyphen(terms[0], terms[2], in: text)
            } else {
                for term in terms { set += try Self.comparators(term, in: text) }
            }
            sets.append(set)
        }
        guard text.contains(where: { $0 != " " }) else {
            throw PluginProblem("an empty version range; write e.g. \"^1.2\", \">=1.0.0 <2.0.0\" or \"1.x || 2.x\"")
        }
        self.sets = sets
    }

    /// The parts between `||`s.
    private static func alternatives(_ text: String) -> [Substring] {
        var parts: [Substring] = []
        var rest = Substring(text)
        while let bar = rest.firstRange(of: "||") {
            parts.append(rest[..<bar.lowerBound])
            rest = rest[bar.upperBound...]
        }
        parts.append(rest)
        return parts
    }

    private static func partial(_ text: String, term: String, in range: String) throws(PluginProblem) -> SemVer.Partial {
        guard let p = SemVer.parse(text, partial: true) else {
            throw PluginProblem("\"\(term)\" in \"\(range)\" is not a version comparator; allowed =, <, <=, >, >=, ^ or ~ before a version such as 1.2.3, x-ranges such as 1.x or *, and A - B")
        }
        return p
    }

    /// The lowest version a partial names (`1.2` → 1.2.0) and the first one past it (`1.2` → 1.3.0-0).
    private static func bounds(_ p: SemVer.Partial) -> (low: SemVer, high: SemVer?) {
        let low = SemVer(p.major ?? 0, p.minor ?? 0, p.patch ?? 0, prerelease: p.prerelease)
        switch (p.major, p.minor, p.patch) {
        case (nil, _, _): return (low, nil)
        case (let m?, nil, _): return (low, SemVer(m + 1, 0, 0, prerelease: ["0"]))
        case (let m?, let n?, nil): return (low, SemVer(m, n + 1, 0, prerelease: ["0"]))
        default: return (low, nil)
        }
    }

    private static func comparators(_ term: String, in range: String) throws(PluginProblem) -> [Comparator] {
        let ops = ["<=", ">=", "<", ">", "=", "^", "~"]
        let op = ops.first { term.hasPrefix($0) } ?? ""
        var body = String(term.dropFirst(op.count))
        if body.hasPrefix("v") { body.removeFirst() }
        let p = try partial(body, term: term, in: range)
        let (low, high) = bounds(p)
        let exact = p.version != nil
        switch op {
        case "^":
            guard let major = p.major else { return [] }
            let upper: SemVer
            if major > 0 || p.minor == nil { upper = SemVer(major + 1, 0, 0, prerelease: ["0"]) }
            else if p.minor! > 0 || p.patch == nil { upper = SemVer(0, p.minor! + 1, 0, prerelease: ["0"]) }
            else { upper = SemVer(0, 0, p.patch! + 1, prerelease: ["0"]) }
            return [Comparator(op: .ge, version: low), Comparator(op: .lt, version: upper)]
        case "~":
            guard let major = p.major else { return [] }
            let upper = p.minor == nil ? SemVer(major + 1, 0, 0, prerelease: ["0"]) : SemVer(major, p.minor! + 1, 0, prerelease: ["0"])
            return [Comparator(op: .ge, version: low), Comparator(op: .lt, version: upper)]
        case ">=": return p.major == nil ? [] : [Comparator(op: .ge, version: low)]
        case "<": return p.major == nil ? [Comparator(op: .lt, version: SemVer(0, 0, 0, prerelease: ["0"]))] : [Comparator(op: .lt, version: low)]
        case ">":
            if p.major == nil { return [Comparator(op: .lt, version: SemVer(0, 0, 0, prerelease: ["0"]))] }
            return exact ? [Comparator(op: .gt, version: low)] : [Comparator(op: .ge, version: high!)]
        case "<=":
            if p.major == nil { return [] }
            return exact ? [Comparator(op: .le, version: low)] : [Comparator(op: .lt, version: high!)]
        default:
            if p.major == nil { return [] }
            return exact ? [Comparator(op: .eq, version: low)] : [Comparator(op: .ge, version: low), Comparator(op: .lt, version: high!)]
        }
    }

    private static func hyphen(_ from: String, _ to: String, in range: String) throws(PluginProblem) -> [Comparator] {
        let a = try partial(from, term: from, in: range), b = try partial(to, term: to, in: range)
        var set: [Comparator] = []
        if a.major != nil { set.append(Comparator(op: .ge, version: bounds(a).low)) }
        if b.major != nil {
            set.append(b.version != nil ? Comparator(op: .le, version: b.version!) : Comparator(op: .lt, version: bounds(b).high!))
        }
        return set
    }

    /// Whether `version` satisfies the range (build metadata ignored).
    public func contains(_ version: SemVer) -> Bool {
        sets.contains { set in
            guard set.allSatisfy({ $0.holds(version) }) else { return false }
            guard !version.prerelease.isEmpty else { return true }
            return set.contains { !$0.version.prerelease.isEmpty && $0.version.core == version.core && $0.version.prerelease != ["0"] }
        }
    }

    public var description: String { text }
}
