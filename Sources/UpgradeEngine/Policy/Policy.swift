public import Formats

/// How model changes reach existing instances (`upgradePolicy.mode`).
public enum UpgradeMode: String, Sendable, CaseIterable {
    case automatic = "Automatic", manual = "Manual", rolling = "Rolling"

    /// Parses a mode case-insensitively.
    public init?(parsing text: String) {
        guard let mode = Self.allCases.first(where: { $0.rawValue.lowercased() == text.lowercased() }) else { return nil }
        self = mode
    }
}

/// `upgradePolicy.rollingUpgradePolicy`: how a rolling upgrade batches and when it stops.
/// Percentages are whole percent of the capacity at the upgrade's start.
public struct RollingUpgradePolicy: Equatable, Sendable {
    /// Share of instances upgraded at once, 5–100 (default 20).
    public var maxBatchInstancePercent = 20
    /// Unhealthy instances tolerated anywhere in the scale set, 5–100 (default 20).
    public var maxUnhealthyInstancePercent = 20
    /// Upgraded instances allowed to be unhealthy or failed, 0–100 (default 20).
    public var maxUnhealthyUpgradedInstancePercent = 20
    /// Wait after each batch but the last, in milliseconds (default 0).
    public var pauseTimeBetweenBatches: Millis = 0
    /// Upgrade unhealthy instances first within each phase.
    public var prioritizeUnhealthyInstances = false { didSet { setBooleans.insert("prioritizeUnhealthyInstances") } }
    /// Ignore zone boundaries in a zonal scale set.
    public var enableCrossZoneUpgrade = false { didSet { setBooleans.insert("enableCrossZoneUpgrade") } }
    /// Create new instances for each batch before deleting the old ones.
    public var maxSurge = false { didSet { setBooleans.insert("maxSurge") } }
    /// Return failed instances to the previous model when the policy is breached.
    public var rollbackFailedInstancesOnPolicyBreach = false { didSet { setBooleans.insert("rollbackFailedInstancesOnPolicyBreach") } }
    /// The booleans given a value (parsed or assigned): the status echoes only these, as Azure
    /// does (seed 001's sample has no `enableCrossZoneUpgrade`).
    public private(set) var setBooleans: Set<String> = []

    /// The defaults: 20/20/20, no pause, no boolean set.
    public init() {}

    /// Range problems of values set from Swift (parsing checks the same ranges).
    public func problems(prefix: String = "upgradePolicy.rollingUpgradePolicy") -> [Problem] {
        var found: [Problem] = []
        func check(_ name: String, _ value: Int, _ range: ClosedRange<Int>) {
            if !range.contains(value) {
                found.append(Problem(field: "\(prefix).\(name)", "\(value) is out of range; allowed \(range.lowerBound)–\(range.upperBound) (percent)"))
            }
        }
        check("maxBatchInstancePercent", maxBatchInstancePercent, 5...100)
        check("maxUnhealthyInstancePercent", maxUnhealthyInstancePercent, 5...100)
        check("maxUnhealthyUpgradedInstancePercent", maxUnhealthyUpgradedInstancePercent, 0...100)
        if pauseTimeBetweenBatches < 0 {
            found.append(Problem(field: "\(prefix).pauseTimeBetweenBatches", "must not be negative"))
        }
        return found
    }
}

/// `upgradePolicy.automaticOSUpgradePolicy` (REST spec): whether a newly released platform image
/// upgrades the scale set by itself, and how (SPEC §6). Every field defaults to false.
public struct AutomaticOSUpgradePolicy: Equatable, Sendable {
    /// A new platform image version starts an OS upgrade in batches.
    public var enableAutomaticOSUpgrade = false
    /// Keep an instance that does not become Healthy on the new image instead of restoring its
    /// previous image.
    public var disableAutomaticRollback = false
    /// Batch with `rollingUpgradePolicy`; otherwise with the default policy (20/20/20, PT0S).
    public var useRollingUpgradePolicy = false
    /// Each instance is told the upgrade is coming and defers it until approved.
    public var osRollingUpgradeDeferral = false

    /// Every field false.
    public init() {}
}

/// `upgradePolicy`: the mode and the rolling policy every mode keeps (OS-image and extension
/// upgrades use it whatever the mode).
public struct UpgradePolicy: Equatable, Sendable {
    /// Automatic, Manual or Rolling.
    public var mode: UpgradeMode
    /// `rollingUpgradePolicy`.
    public var rolling: RollingUpgradePolicy
    /// `automaticOSUpgradePolicy`.
    public var automaticOS: AutomaticOSUpgradePolicy

    /// A policy; the defaults are Azure's (Manual, the default rolling policy, no automatic OS upgrades).
    public init(mode: UpgradeMode = .manual, rolling: RollingUpgradePolicy = RollingUpgradePolicy(),
                automaticOS: AutomaticOSUpgradePolicy = AutomaticOSUpgradePolicy()) {
        self.mode = mode
        self.rolling = rolling
        self.automaticOS = automaticOS
    }
}

extension UpgradePolicy {
    /// The fields whose value differs from `old`, as ARM paths (`mode`,
    /// `rollingUpgradePolicy.maxUnhealthyInstancePercent`, …), in the order ARM lists them.
    public func changedFields(from old: UpgradePolicy) -> [String] {
        var changed: [String] = []
        if mode != old.mode { changed.append("mode") }
        let r = rolling, o = old.rolling
        let rollingFields: [(String, Bool)] = [
            ("maxBatchInstancePercent", r.maxBatchInstancePercent != o.maxBatchInstancePercent),
            ("maxUnhealthyInstancePercent", r.maxUnhealthyInstancePercent != o.maxUnhealthyInstancePercent),
            ("maxUnhealthyUpgradedInstancePercent", r.maxUnhealthyUpgradedInstancePercent != o.maxUnhealthyUpgradedInstancePercent),
            ("pauseTimeBetweenBatches", r.pauseTimeBetweenBatches != o.pauseTimeBetweenBatches),
            ("prioritizeUnhealthyInstances", r.prioritizeUnhealthyInstances != o.prioritizeUnhealthyInstances),
            ("enableCrossZoneUpgrade", r.enableCrossZoneUpgrade != o.enableCrossZoneUpgrade),
            ("maxSurge", r.maxSurge != o.maxSurge),
            ("rollbackFailedInstancesOnPolicyBreach", r.rollbackFailedInstancesOnPolicyBreach != o.rollbackFailedInstancesOnPolicyBreach),
        ]
        changed += rollingFields.filter(\.1).map { "rollingUpgradePolicy.\($0.0)" }
        let a = automaticOS, b = old.automaticOS
        let automaticFields: [(String, Bool)] = [
            ("enableAutomaticOSUpgrade", a.enableAutomaticOSUpgrade != b.enableAutomaticOSUpgrade),
            ("disableAutomaticRollback", a.disableAutomaticRollback != b.disableAutomaticRollback),
            ("useRollingUpgradePolicy", a.useRollingUpgradePolicy != b.useRollingUpgradePolicy),
            ("osRollingUpgradeDeferral", a.osRollingUpgradeDeferral != b.osRollingUpgradeDeferral),
        ]
        changed += automaticFields.filter(\.1).map { "automaticOSUpgradePolicy.\($0.0)" }
        return changed
    }
}
