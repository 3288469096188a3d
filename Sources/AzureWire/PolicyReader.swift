public import Formats
public import UpgradeEngine

extension RollingUpgradePolicy {
    /// The policy as `get-latest` prints it: the four numeric and duration fields always (with
    /// their defaults), durations in ISO 8601, and the booleans that were set.
    public var json: JSON {
        var fields: [String: JSON] = [
            "maxBatchInstancePercent": .int(maxBatchInstancePercent),
            "maxUnhealthyInstancePercent": .int(maxUnhealthyInstancePercent),
            "maxUnhealthyUpgradedInstancePercent": .int(maxUnhealthyUpgradedInstancePercent),
            "pauseTimeBetweenBatches": .string(ISODuration.format(pauseTimeBetweenBatches)),
        ]
        let booleans = [("prioritizeUnhealthyInstances", prioritizeUnhealthyInstances), ("enableCrossZoneUpgrade", enableCrossZoneUpgrade),
                        ("maxSurge", maxSurge), ("rollbackFailedInstancesOnPolicyBreach", rollbackFailedInstancesOnPolicyBreach)]
        for (name, value) in booleans where setBooleans.contains(name) { fields[name] = .bool(value) }
        return .object(fields)
    }
}

extension UpgradePolicy {
    /// Parses ARM's `upgradePolicy` object (also accepted wrapped in `{"upgradePolicy": …}` or
    /// `{"properties": {"upgradePolicy": …}}`). Keys match case-insensitively; every problem is
    /// reported at once.
    public static func parse(json text: String) throws(ValidationFailure) -> UpgradePolicy {
        let value: JSON
        do {
            value = try JSON.parse(text)
        } catch {
            throw ValidationFailure([Problem(field: "upgradePolicy", "the text \(error.problem)")])
        }
        return try parse(value)
    }

    /// Parses an already decoded `upgradePolicy` value; problems name fields under `prefix`.
    public static func parse(_ value: JSON, prefix: String = "upgradePolicy") throws(ValidationFailure) -> UpgradePolicy {
        let (policy, problems) = merge(value, onto: UpgradePolicy(), prefix: prefix)
        guard problems.isEmpty else { throw ValidationFailure(problems) }
        return policy
    }

    /// The fields of `value` (an `upgradePolicy` object, as `parse` reads it) merged into
    /// `base`: a field given replaces the base's, one left out keeps it. A field that cannot be
    /// read keeps the base's value and is among the problems, every one at once.
    public static func merge(_ value: JSON, onto base: UpgradePolicy, prefix: String = "upgradePolicy") -> (UpgradePolicy, [Problem]) {
        var policyValue = value
        if let inner = value.field("properties")?.field("upgradePolicy") ?? value.field("upgradePolicy") {
            policyValue = inner
        }
        var reader = FieldReader(prefix: prefix)
        var policy = base
        guard let members = policyValue.object else {
            return (base, [Problem(field: prefix, "is \(policyValue.kindName); expected an object with mode and rollingUpgradePolicy")])
        }
        reader.refuseUnknown(members, known: ["mode", "rollingUpgradePolicy", "automaticOSUpgradePolicy"])
        if let mode = policyValue.field("mode") {
            if case .string(let text) = mode, let parsed = UpgradeMode(parsing: text) {
                policy.mode = parsed
            } else {
                reader.problem("mode", "\(mode.serialized(pretty: false)) is not a mode; allowed Automatic, Manual, Rolling")
            }
        }
        if let rolling = policyValue.field("rollingUpgradePolicy") {
            policy.rolling = reader.rollingPolicy(rolling, onto: base.rolling)
        }
        if let automatic = policyValue.field("automaticOSUpgradePolicy") {
            policy.automaticOS = reader.automaticOSPolicy(automatic, onto: base.automaticOS)
        }
        return (policy, reader.problems)
    }
}

extension FieldReader {
    mutating func automaticOSPolicy(_ value: JSON, onto base: AutomaticOSUpgradePolicy = AutomaticOSUpgradePolicy()) -> AutomaticOSUpgradePolicy {
        var p = base
        let path = "automaticOSUpgradePolicy"
        guard object(value, path, known: ["enableAutomaticOSUpgrade", "disableAutomaticRollback", "useRollingUpgradePolicy",
                                          "osRollingUpgradeDeferral"]) else { return p }
        if let v = bool(value, path, "enableAutomaticOSUpgrade", acceptStrings: false) { p.enableAutomaticOSUpgrade = v }
        if let v = bool(value, path, "disableAutomaticRollback", acceptStrings: false) { p.disableAutomaticRollback = v }
        if let v = bool(value, path, "useRollingUpgradePolicy", acceptStrings: false) { p.useRollingUpgradePolicy = v }
        if let v = bool(value, path, "osRollingUpgradeDeferral", acceptStrings: false) { p.osRollingUpgradeDeferral = v }
        return p
    }

    mutating func rollingPolicy(_ value: JSON, onto base: RollingUpgradePolicy = RollingUpgradePolicy()) -> RollingUpgradePolicy {
        var p = base
        let path = "rollingUpgradePolicy"
        guard object(value, path, known: ["maxBatchInstancePercent", "maxUnhealthyInstancePercent",
                                          "maxUnhealthyUpgradedInstancePercent", "pauseTimeBetweenBatches",
                                          "prioritizeUnhealthyInstances", "enableCrossZoneUpgrade", "maxSurge",
                                          "rollbackFailedInstancesOnPolicyBreach"]) else { return p }
        if let v = integer(value, path, "maxBatchInstancePercent", 5...100, unit: "percent") { p.maxBatchInstancePercent = v }
        if let v = integer(value, path, "maxUnhealthyInstancePercent", 5...100, unit: "percent") { p.maxUnhealthyInstancePercent = v }
        if let v = integer(value, path, "maxUnhealthyUpgradedInstancePercent", 0...100, unit: "percent") { p.maxUnhealthyUpgradedInstancePercent = v }
        if let v = duration(value, path, "pauseTimeBetweenBatches") { p.pauseTimeBetweenBatches = v }
        if let v = bool(value, path, "prioritizeUnhealthyInstances", acceptStrings: false) { p.prioritizeUnhealthyInstances = v }
        if let v = bool(value, path, "enableCrossZoneUpgrade", acceptStrings: false) { p.enableCrossZoneUpgrade = v }
        if let v = bool(value, path, "maxSurge", acceptStrings: true) { p.maxSurge = v }
        if let v = bool(value, path, "rollbackFailedInstancesOnPolicyBreach", acceptStrings: false) { p.rollbackFailedInstancesOnPolicyBreach = v }
        return p
    }
}
