public import Formats
public import UpgradeEngine

/// What a client of one Compute api-version may be shown, and which api-versions are served:
/// every api-version rule of the wire lives in this one table, each with its source.
public enum APIVersion {
    /// The api-versions of Microsoft.Compute's `virtualMachineScaleSets`, newest first, as ARM lists
    /// them in `InvalidApiVersionParameter`. Source: the version folders of
    /// azure-rest-api-specs `specification/compute/resource-manager/Microsoft.Compute/ComputeRP`
    /// (`stable/2015-06-15` … `stable/2026-09-01`, and the previews 2016-04-30-preview and
    /// 2015-05-01-preview); 2026-03-01, 2026-04-01 and 2026-09-01 per SPEC §6b/§6c. The clients'
    /// own (SPEC §6c, azure-cli 2.91.0 and azure-mgmt-compute 39.0.0): 2023-09-01 (`rolling-upgrade`),
    /// 2024-11-01 (`list-instances`), 2025-11-01 (`lifecycle-hook-event`), 2026-04-01 (`create/
    /// update/show`, the SDK).
    public static let served: [String] = [
        "2026-09-01", "2026-04-01", "2026-03-01", "2025-11-01", "2025-04-01", "2024-11-01", "2024-07-01", "2024-03-01",
        "2023-09-01", "2023-07-01", "2023-03-01", "2022-11-01", "2022-08-01", "2022-03-01", "2021-11-01", "2021-07-01",
        "2021-04-01", "2021-03-01", "2020-12-01", "2020-06-01", "2019-12-01", "2019-07-01", "2019-03-01", "2018-10-01",
        "2018-06-01", "2018-04-01", "2017-12-01", "2017-03-30", "2016-04-30-preview", "2016-03-30", "2015-06-15",
        "2015-05-01-preview",
    ]

    /// The first api-version whose `RollingUpgradeStatusCode` and `UpgradeState` list `RollingBack`
    /// (`modelAsString: false`). Source: stable `2026-04-01` ComputeRP.json (not in 2026-03-01);
    /// azure-mgmt-compute 38.2.0 added `ROLLING_BACK` on api 2026-04-01 (SPEC §6c, correcting §6b).
    /// An older client sees `RollingForward` (our decision, SPEC §6b).
    public static let rollingBackSince = "2026-04-01"

    /// The first api-version whose lifecycle hook event `state` and target `actionState` list
    /// `Abandoned`. Source: stable `2026-09-01`, Azure/azure-rest-api-specs #45614 (SPEC §6c).
    /// An older client sees the event `Completed` and each target as it stood when the platform
    /// superseded the event (Waiting when nobody answered it): values its enum has (our decision).
    public static let abandonedSince = "2026-09-01"

    /// The first api-version whose scale set carries `etag` and whose PUT/PATCH take `If-Match` /
    /// `If-None-Match`. Source: Azure/azure-rest-api-specs #26368 ("Etag support in crp", stable
    /// `2023-09-01`); SDK 38+ passes `etag`/`match_condition` (SPEC §6c). The headers are obeyed
    /// whatever the version (a condition is never dropped); `etag` is shown from this version on.
    public static let etagSince = "2023-09-01"

    /// Whether `apiVersion` (`YYYY-MM-DD`, perhaps with a `-preview` suffix; nil: the newest)
    /// is at least `since`.
    public static func isAtLeast(_ apiVersion: String?, _ since: String) -> Bool {
        guard let apiVersion else { return true }
        return apiVersion.prefix(10) >= since.prefix(10)
    }

    /// Whether ARM serves `apiVersion` for the scale set's routes (case as ARM reads it: any).
    public static func isServed(_ apiVersion: String) -> Bool { served.contains(apiVersion.lowercased()) }

    /// ARM's message for an api-version it does not serve (400 `InvalidApiVersionParameter`):
    /// "The api-version '…' is invalid. The supported versions are '…'." (its shape in ARM's answers).
    public static func invalidMessage(_ apiVersion: String) -> String {
        let shown = String(apiVersion.prefix(64).unicodeScalars.filter { $0.value >= 0x20 && $0.value != 0x7F })
        return "The api-version '\(shown)' is invalid. The supported versions are '\(served.joined(separator: ","))'."
    }
}

extension RunningCode {
    /// The code a client reading `apiVersion` is shown: `RollingBack` only from
    /// `APIVersion.rollingBackSince` on; an older client, whose SDK cannot read it, sees
    /// `RollingForward` (our decision, SPEC §6b).
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
