public import Formats

/// A change to the upgrade policy in effect, as Azure's PATCH of a scale set makes it: each field
/// given replaces the one in effect, every field left out keeps its value. `update_policy`,
/// a typed timeline's `.updatePolicy` and `rehearse serve`'s PATCH all change the policy this way.
public struct PolicyPatch: Equatable, Sendable {
    /// One field of `upgradePolicy` and its new value.
    public enum Setting: Equatable, Sendable {
        case mode(UpgradeMode)
        case maxBatchInstancePercent(Int)
        case maxUnhealthyInstancePercent(Int)
        case maxUnhealthyUpgradedInstancePercent(Int)
        case pauseTimeBetweenBatches(Millis)
        case prioritizeUnhealthyInstances(Bool)
        case enableCrossZoneUpgrade(Bool)
        case maxSurge(Bool)
        case rollbackFailedInstancesOnPolicyBreach(Bool)
        case enableAutomaticOSUpgrade(Bool)
        case disableAutomaticRollback(Bool)
        case useRollingUpgradePolicy(Bool)
        case osRollingUpgradeDeferral(Bool)
    }

    /// The fields given, in the order they are applied.
    public var settings: [Setting]

    /// A patch of `settings`.
    public init(_ settings: [Setting]) {
        self.settings = settings
    }

    /// `base` with every setting applied in order.
    public func applied(to base: UpgradePolicy) -> UpgradePolicy {
        var policy = base
        for setting in settings {
            switch setting {
            case .mode(let v): policy.mode = v
            case .maxBatchInstancePercent(let v): policy.rolling.maxBatchInstancePercent = v
            case .maxUnhealthyInstancePercent(let v): policy.rolling.maxUnhealthyInstancePercent = v
            case .maxUnhealthyUpgradedInstancePercent(let v): policy.rolling.maxUnhealthyUpgradedInstancePercent = v
            case .pauseTimeBetweenBatches(let v): policy.rolling.pauseTimeBetweenBatches = v
            case .prioritizeUnhealthyInstances(let v): policy.rolling.prioritizeUnhealthyInstances = v
            case .enableCrossZoneUpgrade(let v): policy.rolling.enableCrossZoneUpgrade = v
            case .maxSurge(let v): policy.rolling.maxSurge = v
            case .rollbackFailedInstancesOnPolicyBreach(let v): policy.rolling.rollbackFailedInstancesOnPolicyBreach = v
            case .enableAutomaticOSUpgrade(let v): policy.automaticOS.enableAutomaticOSUpgrade = v
            case .disableAutomaticRollback(let v): policy.automaticOS.disableAutomaticRollback = v
            case .useRollingUpgradePolicy(let v): policy.automaticOS.useRollingUpgradePolicy = v
            case .osRollingUpgradeDeferral(let v): policy.automaticOS.osRollingUpgradeDeferral = v
            }
        }
        return policy
    }
}

extension PolicyPatch {
    /// The patch that makes any policy `policy`: every field, the rolling booleans only where
    /// `policy` set them (so the status's `policy` leaves out the same ones). `rehearse diff`
    /// rehearses a document's whole new policy this way.
    public init(whole policy: UpgradePolicy) {
        let rolling = policy.rolling, os = policy.automaticOS
        var settings: [Setting] = [
            .mode(policy.mode), .maxBatchInstancePercent(rolling.maxBatchInstancePercent),
            .maxUnhealthyInstancePercent(rolling.maxUnhealthyInstancePercent),
            .maxUnhealthyUpgradedInstancePercent(rolling.maxUnhealthyUpgradedInstancePercent),
            .pauseTimeBetweenBatches(rolling.pauseTimeBetweenBatches),
        ]
        let booleans: [(String, Setting)] = [
            ("prioritizeUnhealthyInstances", .prioritizeUnhealthyInstances(rolling.prioritizeUnhealthyInstances)),
            ("enableCrossZoneUpgrade", .enableCrossZoneUpgrade(rolling.enableCrossZoneUpgrade)),
            ("maxSurge", .maxSurge(rolling.maxSurge)),
            ("rollbackFailedInstancesOnPolicyBreach", .rollbackFailedInstancesOnPolicyBreach(rolling.rollbackFailedInstancesOnPolicyBreach)),
        ]
        settings += booleans.filter { rolling.setBooleans.contains($0.0) }.map(\.1)
        settings += [.enableAutomaticOSUpgrade(os.enableAutomaticOSUpgrade), .disableAutomaticRollback(os.disableAutomaticRollback),
                     .useRollingUpgradePolicy(os.useRollingUpgradePolicy), .osRollingUpgradeDeferral(os.osRollingUpgradeDeferral)]
        self.init(settings)
    }
}
