/// A semantic version `MAJOR.MINOR.PATCH` (a pre-release or build suffix is kept as text and
/// sorts a pre-release before its release).
public struct SemVer: Comparable, Sendable, CustomStringConvertible {
    public var major: Int, minor: Int, patch: Int
    public var prerelease: String

    public init(_ major: Int, _ minor: Int, _ patch: Int, prerelease: String = "") {
        self.major = major
        self.minor = minor
        self.patch = patch
        self.prerelease = prerelease
    }

    /// Parses `1.2.3`, `1.2.3-beta.1`, `1.2.3+build`; with `partial`, also `1` and `1.2`.
    public init?(_ text: String, partial: Bool = false) {
        var core = Substring(text)
        if let plus = core.firstIndex(of: "+") { core = core[..<plus] }
        var pre = ""
        if let dash = core.firstIndex(of: "-") {
            pre = String(core[core.index(after: dash)...])
            core = core[..<dash]
            if pre.isEmpty { return nil }
        }
        let parts = core.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3 || (partial && (1...2).contains(parts.count)),
              parts.allSatisfy({ !$0.isEmpty && $0.allSatisfy(\.isASCII) && $0.allSatisfy(\.isNumber) && $0.count < 10 })
        else { return nil }
        let numbers = parts.map { Int($0)! }
        self.init(numbers[0], numbers.count > 1 ? numbers[1] : 0, numbers.count > 2 ? numbers[2] : 0, prerelease: pre)
    }

    public var description: String { "\(major).\(minor).\(patch)" + (prerelease.isEmpty ? "" : "-\(prerelease)") }

    public static func < (a: SemVer, b: SemVer) -> Bool {
        if (a.major, a.minor, a.patch) != (b.major, b.minor, b.patch) { return (a.major, a.minor, a.patch) < (b.major, b.minor, b.patch) }
        if a.prerelease == b.prerelease { return false }
        if a.prerelease.isEmpty { return false }
        if b.prerelease.isEmpty { return true }
        return a.prerelease < b.prerelease
    }
}

/// A version range: space-separated comparators that must all hold (`>=1.0.0 <2.0.0`),
/// `^1.2` (same major), `~1.2` (same minor), or an exact version.
public struct SemVerRange: Sendable, CustomStringConvertible {
    public let text: String
    private let checks: [(String, SemVer)]

    /// Parses a range, or explains what is wrong with it.
    public init(_ text: String) throws(PluginProblem) {
        self.text = text
        var checks: [(String, SemVer)] = []
        let terms = text.split(separator: " ").map(String.init)
        guard !terms.isEmpty else { throw PluginProblem("an empty version range; write e.g. \">=1.0.0 <2.0.0\" or \"^1.0\"") }
        for term in terms {
            let op = ["<=", ">=", "<", ">", "=", "^", "~"].first { term.hasPrefix($0) } ?? ""
            guard let version = SemVer(String(term.dropFirst(op.count)), partial: true) else {
                throw PluginProblem("\"\(term)\" is not a version comparator; allowed >=, >, <=, <, =, ^ or ~ followed by a version such as 1.0.0")
            }
            checks.append((op, version))
        }
        self.checks = checks
    }

    /// Whether `version` satisfies every comparator.
    public func contains(_ version: SemVer) -> Bool {
        checks.allSatisfy { op, bound in
            switch op {
            case ">=": return version >= bound
            case ">": return version > bound
            case "<=": return version <= bound
            case "<": return version < bound
            case "^": return version >= bound && version.major == bound.major && (bound.major > 0 || version.minor == bound.minor)
            case "~": return version >= bound && version.major == bound.major && version.minor == bound.minor
            default: return version == bound
            }
        }
    }

    public var description: String { text }
}
