public import Formats
public import UpgradeEngine

/// What a client of one Compute api-version may be shown (SPEC §6b).
public enum APIVersion {
    /// The first api-version whose `RollingUpgradeStatusCode` has `RollingBack` (2026-09-01).
    public static let rollingBackSince = "2026-09-01"

    /// Whether `apiVersion` (`YYYY-MM-DD`, perhaps with a `-preview` suffix; nil: the newest)
    /// is at least `since`.
    public static func isAtLeast(_ apiVersion: String?, _ since: String) -> Bool {
        guard let apiVersion else { return true }
        return apiVersion.prefix(10) >= since.prefix(10)
    }
}

extension RunningCode {
    /// The code a client reading `apiVersion` is shown: `RollingBack` only from 2026-09-01 on;
    /// an older client, whose SDK cannot read it, sees `RollingForward` (our decision, SPEC §6b).
    public func shown(toAPIVersion apiVersion: String?) -> RunningCode {
        self == .rollingBack && !APIVersion.isAtLeast(apiVersion, APIVersion.rollingBackSince) ? .rollingForward : self
    }
}

extension RollingUpgradeStatus {
    /// The status as a client of `apiVersion` reads it (its running code mapped by `shown`).
    public func shown(toAPIVersion apiVersion: String?) -> RollingUpgradeStatus {
        var status = self
        status.code = code.shown(toAPIVersion: apiVersion)
        return status
    }
}

extension UpgradePolicy {
    /// An `upgradePolicy` of api-versions 2017-03-30 to 2018-06-01 may say `automaticOsUpgrade`
    /// (a boolean), which `automaticOSUpgradePolicy.enableAutomaticOSUpgrade` replaced (SPEC §6b):
    /// the value with it moved to its successor (which wins when both are given), and a warning
    /// at `prefix.automaticOsUpgrade` naming the successor. A value without it comes back as is.
    public static func movingLegacyFields(_ value: JSON, prefix: String = "upgradePolicy") -> (JSON, [Problem]) {
        // Keys in sorted order: the same document gives the same message on every run.
        guard case .object(var members) = value,
              case let spellings = members.keys.filter({ $0.lowercased() == "automaticosupgrade" }).sorted(), let key = spellings.first
        else { return (value, []) }
        guard spellings.count == 1 else {
            // Left in place: the policy's reader refuses them as unknown fields, in sorted order.
            return (value, [Problem(field: "\(prefix).\(key)", "is given \(spellings.count) times, as \(spellings.joined(separator: " and ")) "
                                                   + "(names are read ignoring case); allowed once, or better automaticOSUpgradePolicy.enableAutomaticOSUpgrade alone")])
        }
        let legacy = members.removeValue(forKey: key)!
        let field = "\(prefix).\(key)"
        guard case .bool(let on) = legacy else {
            return (.object(members), [Problem(field: field, "\(legacy.serialized(pretty: false)) is not a boolean; this field of api-versions 2017-03-30 to 2018-06-01 is replaced by automaticOSUpgradePolicy.enableAutomaticOSUpgrade, and is not read")])
        }
        let successorKey = members.keys.sorted().first { $0.lowercased() == "automaticosupgradepolicy" } ?? "automaticOSUpgradePolicy"
        var successor = members[successorKey]?.object ?? [:]
        let given = successor.keys.contains { $0.lowercased() == "enableautomaticosupgrade" }
        if !given { successor["enableAutomaticOSUpgrade"] = .bool(on) }
        members[successorKey] = .object(successor)
        let note = given ? "automaticOSUpgradePolicy.enableAutomaticOSUpgrade is also given and is taken" : "read as automaticOSUpgradePolicy.enableAutomaticOSUpgrade = \(on)"
        return (.object(members), [Problem(field: field, "is the field of api-versions 2017-03-30 to 2018-06-01 that automaticOSUpgradePolicy.enableAutomaticOSUpgrade replaced: \(note)")])
    }
}
