public import Formats
public import UpgradeEngine

extension PolicyPatch {
    /// The fields of `value`, an `upgradePolicy` object as `UpgradePolicy.parse` reads it (also
    /// wrapped in `upgradePolicy` or `properties.upgradePolicy`), as a patch: the fields given,
    /// read and checked as `parse` checks them, every problem at once under `prefix`.
    public static func read(_ value: JSON, prefix: String = "upgradePolicy") -> (PolicyPatch, [Problem]) {
        let (read, problems) = UpgradePolicy.merge(value, onto: UpgradePolicy(), prefix: prefix)
        let policy = value.field("properties")?.field("upgradePolicy") ?? value.field("upgradePolicy") ?? value
        var settings: [Setting] = []
        if policy.field("mode") != nil { settings.append(.mode(read.mode)) }
        let rolling = policy.field("rollingUpgradePolicy"), automatic = policy.field("automaticOSUpgradePolicy")
        let r = read.rolling, a = read.automaticOS
        let given: [(JSON?, String, Setting)] = [
            (rolling, "maxBatchInstancePercent", .maxBatchInstancePercent(r.maxBatchInstancePercent)),
            (rolling, "maxUnhealthyInstancePercent", .maxUnhealthyInstancePercent(r.maxUnhealthyInstancePercent)),
            (rolling, "maxUnhealthyUpgradedInstancePercent", .maxUnhealthyUpgradedInstancePercent(r.maxUnhealthyUpgradedInstancePercent)),
            (rolling, "pauseTimeBetweenBatches", .pauseTimeBetweenBatches(r.pauseTimeBetweenBatches)),
            (rolling, "prioritizeUnhealthyInstances", .prioritizeUnhealthyInstances(r.prioritizeUnhealthyInstances)),
            (rolling, "enableCrossZoneUpgrade", .enableCrossZoneUpgrade(r.enableCrossZoneUpgrade)),
            (rolling, "maxSurge", .maxSurge(r.maxSurge)),
            (rolling, "rollbackFailedInstancesOnPolicyBreach", .rollbackFailedInstancesOnPolicyBreach(r.rollbackFailedInstancesOnPolicyBreach)),
            (automatic, "enableAutomaticOSUpgrade", .enableAutomaticOSUpgrade(a.enableAutomaticOSUpgrade)),
            (automatic, "disableAutomaticRollback", .disableAutomaticRollback(a.disableAutomaticRollback)),
            (automatic, "useRollingUpgradePolicy", .useRollingUpgradePolicy(a.useRollingUpgradePolicy)),
            (automatic, "osRollingUpgradeDeferral", .osRollingUpgradeDeferral(a.osRollingUpgradeDeferral)),
        ]
        settings += given.filter { $0.0?.field($0.1) != nil }.map { $0.2 }
        return (PolicyPatch(settings), problems)
    }

    /// The fields given, as ARM writes them (`update_policy`'s table, a PATCH body's `upgradePolicy`).
    public var json: JSON {
        var top: [String: JSON] = [:], rolling: [String: JSON] = [:], automatic: [String: JSON] = [:]
        for setting in settings {
            switch setting {
            case .mode(let v): top["mode"] = .string(v.rawValue)
            case .maxBatchInstancePercent(let v): rolling["maxBatchInstancePercent"] = .int(v)
            case .maxUnhealthyInstancePercent(let v): rolling["maxUnhealthyInstancePercent"] = .int(v)
            case .maxUnhealthyUpgradedInstancePercent(let v): rolling["maxUnhealthyUpgradedInstancePercent"] = .int(v)
            case .pauseTimeBetweenBatches(let v): rolling["pauseTimeBetweenBatches"] = .string(ISODuration.format(v))
            case .prioritizeUnhealthyInstances(let v): rolling["prioritizeUnhealthyInstances"] = .bool(v)
            case .enableCrossZoneUpgrade(let v): rolling["enableCrossZoneUpgrade"] = .bool(v)
            case .maxSurge(let v): rolling["maxSurge"] = .bool(v)
            case .rollbackFailedInstancesOnPolicyBreach(let v): rolling["rollbackFailedInstancesOnPolicyBreach"] = .bool(v)
            case .enableAutomaticOSUpgrade(let v): automatic["enableAutomaticOSUpgrade"] = .bool(v)
            case .disableAutomaticRollback(let v): automatic["disableAutomaticRollback"] = .bool(v)
            case .useRollingUpgradePolicy(let v): automatic["useRollingUpgradePolicy"] = .bool(v)
            case .osRollingUpgradeDeferral(let v): automatic["osRollingUpgradeDeferral"] = .bool(v)
            }
        }
        if !rolling.isEmpty { top["rollingUpgradePolicy"] = .object(rolling) }
        if !automatic.isEmpty { top["automaticOSUpgradePolicy"] = .object(automatic) }
        return .object(top)
    }
}
