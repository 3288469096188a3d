public import Formats
public import UpgradeEngine

/// One change to a definition's upgrade policy, by field path, as `--set` and sweeps give it:
/// `rollingUpgradePolicy.maxBatchInstancePercent=10`. The value is written as on the command
/// line: a whole number, `true`/`false`, or text (an ISO 8601 duration, a mode).
public struct PolicyOverride: Equatable, Sendable, CustomStringConvertible {
    /// The field path below `upgradePolicy` (a leading `upgradePolicy.` is also accepted).
    public var path: String
    /// The value as written.
    public var value: String

    /// An override of `path` with `value`.
    public init(path: String, value: String) {
        self.path = path
        self.value = value
    }

    /// Reads `PATH=VALUE`; nil when there is no `=` or no path.
    public init?(parsing text: String) {
        guard let equals = text.firstIndex(of: "="), equals != text.startIndex else { return nil }
        self.init(path: String(text[..<equals]), value: String(text[text.index(after: equals)...]))
    }

    public var description: String { "\(path)=\(value)" }

    /// The value as JSON: a whole number, a boolean, else a string.
    var json: JSON {
        if let n = Int(value) { return .int(n) }
        if value == "true" { return .bool(true) }
        if value == "false" { return .bool(false) }
        return .string(value)
    }

    /// The path's parts below `upgradePolicy`.
    var parts: [String] {
        var parts = path.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        if parts.count > 1, parts[0] == "upgradePolicy" { parts.removeFirst() }
        return parts
    }
}

extension UpgradePolicy {
    /// The whole policy as ARM writes it: the mode, the rolling policy as `get-latest` echoes it,
    /// and the automatic OS upgrade policy. Parsing this gives the same policy back.
    public var json: JSON {
        .object([
            "mode": .string(mode.rawValue),
            "rollingUpgradePolicy": rolling.json,
            "automaticOSUpgradePolicy": .object([
                "enableAutomaticOSUpgrade": .bool(automaticOS.enableAutomaticOSUpgrade),
                "disableAutomaticRollback": .bool(automaticOS.disableAutomaticRollback),
                "useRollingUpgradePolicy": .bool(automaticOS.useRollingUpgradePolicy),
                "osRollingUpgradeDeferral": .bool(automaticOS.osRollingUpgradeDeferral),
            ]),
        ])
    }

    /// The fields an override may name, by path below `upgradePolicy`.
    public static let overridablePaths: [String] = ["mode"]
        + ["maxBatchInstancePercent", "maxUnhealthyInstancePercent", "maxUnhealthyUpgradedInstancePercent", "pauseTimeBetweenBatches",
           "prioritizeUnhealthyInstances", "enableCrossZoneUpgrade", "maxSurge", "rollbackFailedInstancesOnPolicyBreach"]
            .map { "rollingUpgradePolicy.\($0)" }
        + ["enableAutomaticOSUpgrade", "disableAutomaticRollback", "useRollingUpgradePolicy", "osRollingUpgradeDeferral"]
            .map { "automaticOSUpgradePolicy.\($0)" }

    /// This policy with `overrides` applied in order, checked as the definition's own policy is
    /// (ranges, types, known fields): every problem at once, each naming the override's path.
    public func applying(_ overrides: [PolicyOverride]) throws(ValidationFailure) -> UpgradePolicy {
        guard !overrides.isEmpty else { return self }
        let allowed = Self.overridablePaths
        var document = json.object!
        var problems: [Problem] = []
        for change in overrides {
            let parts = change.parts
            let path = parts.joined(separator: ".")
            guard allowed.contains(path) else {
                problems.append(Problem(field: "upgradePolicy.\(path)", "is not a policy field an override can set; allowed \(allowed.joined(separator: ", "))"))
                continue
            }
            if parts.count == 1 {
                document[parts[0]] = change.json
            } else {
                var group = document[parts[0]]?.object ?? [:]
                group[parts[1]] = change.json
                document[parts[0]] = .object(group)
            }
        }
        // The overrides with known paths are checked too: every problem at once.
        switch Result(catching: { () throws(ValidationFailure) in try UpgradePolicy.parse(.object(document)) }) {
        case .success(let policy) where problems.isEmpty: return policy
        case .success: throw ValidationFailure(problems)
        case .failure(let failure): throw ValidationFailure(problems + failure.problems)
        }
    }
}
