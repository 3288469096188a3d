public import Formats

/// The upgrade policy in numbers for one scale set, as `plan` prints it before anything runs:
/// the batch size and both unhealthy budgets in instances after Azure's rounding, the batches
/// per phase and zone, the shortest time the upgrade can take, and each setting that makes it
/// fragile with the field to change.
public struct PolicyArithmetic: Equatable, Sendable {
    /// Instances the percentages are taken of.
    public var capacity: Int
    /// Instances a batch upgrades at most: floor(capacity × maxBatchInstancePercent / 100), at least 1.
    public var batchSize: Int
    /// Unhealthy instances tolerated anywhere before each batch: floor(capacity × maxUnhealthyInstancePercent / 100).
    public var unhealthyBudget: Int
    /// Upgraded instances that may be failed or unhealthy: floor(capacity × maxUnhealthyUpgradedInstancePercent / 100).
    public var upgradedBudget: Int
    /// Batches of the plan, by phase (nil: unphased) and zone (nil: regional or across zones).
    public var batchesByGroup: [Group]
    /// The least time the upgrade takes when every instance comes back Healthy at once, in ms:
    /// each batch's operation and health confirmation, and the pauses between batches. A total
    /// beyond `ISODuration.longest` reads as that bound (batches × durations cannot overflow).
    public var shortestDuration: Millis
    /// Settings that make the upgrade stop on little: each names its field and what to change.
    public var fragilities: [Fragility]

    /// A setting that makes the upgrade stop on little, with the figures that show it.
    public enum Fragility: Equatable, Sendable {
        /// maxUnhealthyInstancePercent tolerates no unhealthy instance; `toTolerateOne` percent would.
        case unhealthyToleratesNone(percent: Int, capacity: Int, toTolerateOne: Int)
        /// maxUnhealthyUpgradedInstancePercent tolerates no failed upgraded instance; `toTolerateOne` percent would.
        case upgradedToleratesNone(percent: Int, capacity: Int, toTolerateOne: Int)
        /// A batch takes down more instances than may be unhealthy (no MaxSurge): batches shrink to the budget.
        case batchExceedsBudget(batch: Int, budget: Int)
        /// The largest zone holds more instances than may be unhealthy: that zone's outage stops the upgrade.
        case zoneExceedsBudget(zone: String, instances: Int, budget: Int)

        /// The policy field to change.
        public var field: String {
            switch self {
            case .unhealthyToleratesNone, .zoneExceedsBudget: "upgradePolicy.rollingUpgradePolicy.maxUnhealthyInstancePercent"
            case .upgradedToleratesNone: "upgradePolicy.rollingUpgradePolicy.maxUnhealthyUpgradedInstancePercent"
            case .batchExceedsBudget: "upgradePolicy.rollingUpgradePolicy.maxBatchInstancePercent"
            }
        }

        /// What `plan` prints of it.
        public var message: String {
            switch self {
            case .unhealthyToleratesNone(let percent, let capacity, let one):
                "\(percent)% of \(capacity) instances tolerates 0: one unhealthy instance (\(AzurePercent.rounded(1, of: capacity))%) stops the upgrade before its first batch; \(one)% or more tolerates one"
            case .upgradedToleratesNone(let percent, let capacity, let one):
                "\(percent)% of \(capacity) instances tolerates 0: the first upgraded instance that fails or is not healthy faults the upgrade; \(one)% or more tolerates one"
            case .batchExceedsBudget(let batch, let budget):
                "a batch of \(batch) takes \(batch) instances down while only \(budget) may be unhealthy: batches shrink to \(budget), fewer if any instance is already unhealthy"
            case .zoneExceedsBudget(let zone, let count, let budget):
                "zone \(zone) holds \(count) of the instances, more than the \(budget) that may be unhealthy: an outage of that zone during the upgrade stops it"
            }
        }
    }

    /// Batches of one phase in one zone.
    public struct Group: Equatable, Sendable {
        public var phase: Int?
        public var zone: String?
        public var batches: Int
    }

    private struct GroupKey: Hashable {
        var phase: Int?
        var zone: String?
    }

    /// The numbers for `definition`'s policy and `plan`; `disruptive`: whether the upgrade
    /// restarts instances (a new image) rather than changing them in place.
    public init(definition: ScaleSetDefinition, plan: UpgradePlan, disruptive: Bool = true) {
        let policy = definition.policy.rolling
        let n = plan.batches.flatMap(\.instances).count + plan.skipped.count + plan.protected.count
        capacity = max(n, 1)
        batchSize = Planner.batchSize(capacity: capacity, percent: policy.maxBatchInstancePercent)
        unhealthyBudget = Planner.unhealthyAllowance(capacity: capacity, percent: policy.maxUnhealthyInstancePercent)
        upgradedBudget = Planner.unhealthyAllowance(capacity: capacity, percent: policy.maxUnhealthyUpgradedInstancePercent)
        // Groups in the order their first batch comes; found by key (10,000 phases are 10,000 groups).
        var groups: [Group] = []
        var index: [GroupKey: Int] = [:]
        for batch in plan.batches {
            let zones = Set(batch.instances.map(\.zone))
            let key = GroupKey(phase: batch.phase, zone: zones.count == 1 ? zones.first! : nil)
            if let i = index[key] { groups[i].batches += 1 } else {
                index[key] = groups.count
                groups.append(Group(phase: key.phase, zone: key.zone, batches: 1))
            }
        }
        batchesByGroup = groups
        let health = definition.healthExtension
        let confirm = (health?.intervalInSeconds ?? 5) * 1000 * max(0, (health?.numberOfProbes ?? 1) - 1)
        let t = definition.timings
        let operation = policy.maxSurge ? t.create + t.delete : (disruptive ? t.disruptiveUpgrade : t.inPlaceUpgrade)
        let batches = plan.batches.count
        let longest = ISODuration.longest
        let working = CheckedNumber.product(batches, CheckedNumber.sum(operation, confirm, atMost: longest), atMost: longest)
        let pausing = CheckedNumber.product(max(0, batches - 1), policy.pauseTimeBetweenBatches, atMost: longest)
        shortestDuration = CheckedNumber.sum(working, pausing, atMost: longest)
        fragilities = Self.fragilities(capacity: capacity, policy: policy, batchSize: batchSize, unhealthyBudget: unhealthyBudget,
                                       upgradedBudget: upgradedBudget, zones: definition.zones, plan: plan, disruptive: disruptive)
    }

    /// The smallest whole percent of `capacity` that tolerates `instances` instances.
    static func percent(toTolerate instances: Int, of capacity: Int) -> Int { (instances * 100 + capacity - 1) / capacity }

    static func fragilities(capacity: Int, policy: RollingUpgradePolicy, batchSize: Int, unhealthyBudget: Int, upgradedBudget: Int,
                            zones: [String], plan: UpgradePlan, disruptive: Bool) -> [Fragility] {
        var found: [Fragility] = []
        let one = percent(toTolerate: 1, of: capacity)
        if unhealthyBudget == 0 {
            found.append(.unhealthyToleratesNone(percent: policy.maxUnhealthyInstancePercent, capacity: capacity, toTolerateOne: one))
        }
        if upgradedBudget == 0 {
            found.append(.upgradedToleratesNone(percent: policy.maxUnhealthyUpgradedInstancePercent, capacity: capacity, toTolerateOne: one))
        }
        if disruptive && !policy.maxSurge && batchSize > unhealthyBudget && unhealthyBudget > 0 {
            found.append(.batchExceedsBudget(batch: batchSize, budget: unhealthyBudget))
        }
        if !zones.isEmpty && !policy.enableCrossZoneUpgrade {
            var perZone: [String: Int] = [:]
            for vm in plan.batches.flatMap(\.instances) { if let zone = vm.zone { perZone[zone, default: 0] += 1 } }
            if let (zone, count) = perZone.max(by: { ($0.value, $1.key) < ($1.value, $0.key) }), count > unhealthyBudget {
                found.append(.zoneExceedsBudget(zone: zone, instances: count, budget: unhealthyBudget))
            }
        }
        return found
    }
}
