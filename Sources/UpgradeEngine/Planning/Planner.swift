import Formats

/// What the planner knows of one instance when a rolling upgrade starts.
public struct PlanInput: Equatable, Sendable {
    /// The instance id.
    public var id: Int
    /// Its zone; nil in a regional scale set.
    public var zone: String?
    /// Its fault domain (0-based).
    public var faultDomain: Int
    /// Its update domain (0-based).
    public var updateDomain: Int
    /// Unhealthy or Unknown when the upgrade starts.
    public var unhealthy: Bool
    /// Runs the newest model already.
    public var upToDate: Bool
    /// Has `protectFromScaleSetActions`.
    public var protected: Bool
    /// `PhaseOrderingNumber` (nil: last phase).
    public var phase: Int?
    /// `SkipUpgrade`.
    public var skip: Bool
    /// A candidate whose latest answer was not Healthy: its metrics (phase, skip) do not count.
    public var withoutMetrics = false
    /// Its latest upgrade or rollback failed: prioritizeUnhealthyInstances takes it first, with
    /// the unhealthy ones.
    public var failed = false

    /// An instance to plan.
    public init(id: Int, zone: String? = nil, faultDomain: Int = 0, updateDomain: Int = 0, unhealthy: Bool = false,
                upToDate: Bool = false, protected: Bool = false, phase: Int? = nil, skip: Bool = false) {
        self.id = id
        self.zone = zone
        self.faultDomain = faultDomain
        self.updateDomain = updateDomain
        self.unhealthy = unhealthy
        self.upToDate = upToDate
        self.protected = protected
        self.phase = phase
        self.skip = skip
    }
}

/// An instance in a plan, with where it lives.
public struct PlannedInstance: Equatable, Sendable {
    /// The instance id.
    public var id: Int
    /// Its zone; nil in a regional scale set.
    public var zone: String?
    /// Its fault domain (0-based).
    public var faultDomain: Int
    /// Its update domain (0-based).
    public var updateDomain: Int
    /// Whether it counted as unhealthy when planned.
    public var unhealthy: Bool

}

/// One batch: instances upgraded together, all in one phase.
public struct PlannedBatch: Equatable, Sendable {
    /// The phase (nil: the last phase of instances without a number).
    public var phase: Int?
    /// Its instances, in upgrade order.
    public var instances: [PlannedInstance]
    /// Why it holds these instances (filled by `Planner.plan`; empty in a running upgrade's batches).
    public var why: [BatchRule] = []
}

/// A rule that put a batch where it is and made it the size it is (SPEC §4).
public enum BatchRule: Equatable, Sendable {
    /// A batch never crosses a phase: this one is of phase N (nil: the instances without a
    /// number, after every numbered phase).
    case phase(Int?)
    /// Zones go one at a time (zonal, enableCrossZoneUpgrade off): this batch is of one zone.
    case zone(String)
    /// A batch never crosses an update domain (regional or cross-zone Uniform).
    case updateDomain(Int)
    /// A batch never crosses a fault domain (Flexible with more than one).
    case faultDomain(Int)
    /// prioritizeUnhealthyInstances: unhealthy instances go first within their phase.
    case unhealthyFirst
    /// The full batch size: floor(capacity × maxBatchInstancePercent / 100), at least 1.
    case batchSize(size: Int, percent: Int, capacity: Int)
    /// The unhealthy budget cut the batch short: `size` wanted, `budget` instances may be
    /// unhealthy and `unhealthyNow` already are, so `room` healthy ones may go down.
    case shrunkByBudget(size: Int, budget: Int, unhealthyNow: Int)
    /// The last of its group (phase and boundary): fewer left than the batch size.
    case restOfGroup(left: Int, size: Int)
    /// The upgrade takes no instance down (MaxSurge creates new instances first, or an in-place
    /// change): batches never shrink.
    case takesNoneDown
}

/// The ordered batches of a rolling upgrade and the instances it leaves out.
public struct UpgradePlan: Equatable, Sendable {
    /// The batches, in the order they run.
    public var batches: [PlannedBatch]
    /// Candidates by model that `SkipUpgrade` leaves out.
    public var skipped: [Int]
    /// Instances with `protectFromScaleSetActions`.
    public var protected: [Int]
    /// Candidates whose latest answer was not Healthy (or who had not answered) when planned:
    /// no phase and no skip, whatever their metrics say.
    public var withoutMetrics: [Int] = []
    /// The run started no rolling upgrade: the plan is what one would do had the model changed.
    public var assumed = false
    /// The rolling policy the upgrade used (an automatic OS upgrade without
    /// `useRollingUpgradePolicy` uses the default one, not the scale set's); nil when not known.
    public var policy: RollingUpgradePolicy?

}

/// The instances of a rolling upgrade grouped so that no batch crosses a phase or a boundary
/// (zone, update domain or fault domain), in upgrade order; batches are cut from the front.
struct BatchQueue: Sendable {
    struct Group: Sendable {
        var phase: Int?
        var members: [PlannedInstance]
    }

    var groups: [Group]
    var group = 0
    var offset = 0

    /// Instances not yet taken.
    var pending: Int {
        guard group < groups.count else { return 0 }
        return groups[group...].reduce(0) { $0 + $1.members.count } - offset
    }

    var isEmpty: Bool { group >= groups.count }

    /// The next instance `next` would take.
    var peek: PlannedInstance? { group < groups.count ? groups[group].members[offset] : nil }

    /// Cuts the next batch: at most `size` instances of the current group, and no more healthy
    /// ones than `room` (the unhealthy budget left), but never fewer than one instance.
    /// `shrunk` tells whether the unhealthy budget cut the batch short.
    mutating func next(size: Int, room: Int, isUnhealthy: (PlannedInstance) -> Bool) -> (batch: PlannedBatch, shrunk: Bool)? {
        guard group < groups.count else { return nil }
        let members = groups[group].members
        var taken: [PlannedInstance] = []
        var healthyTaken = 0
        var shrunk = false
        while offset < members.count, taken.count < size {
            let candidate = members[offset]
            let addsDown = isUnhealthy(candidate) ? 0 : 1
            if !taken.isEmpty && healthyTaken + addsDown > room {
                shrunk = true
                break
            }
            taken.append(candidate)
            healthyTaken += addsDown
            offset += 1
        }
        let batch = PlannedBatch(phase: groups[group].phase, instances: taken)
        if offset >= members.count {
            group += 1
            offset = 0
        }
        return (batch, shrunk)
    }
}

/// Orders and batches a rolling upgrade (SPEC §4 steps 1–4).
public enum Planner {
    /// Instances a batch may hold: max(1, floor(capacity × percent / 100)).
    public static func batchSize(capacity: Int, percent: Int) -> Int { max(1, capacity * percent / 100) }

    /// Unhealthy instances the policy tolerates: floor(capacity × percent / 100).
    public static func unhealthyAllowance(capacity: Int, percent: Int) -> Int { capacity * percent / 100 }

    /// Compares zone names numerically when both are numbers ("2" before "10").
    static func zoneOrder(_ a: String?, _ b: String?) -> Bool {
        switch (a, b) {
        case (nil, nil): return false
        case (nil, _): return true
        case (_, nil): return false
        case let (x?, y?):
            if let i = Int(x), let j = Int(y) { return i < j }
            return x < y
        }
    }

    /// Splits inputs into the queue of groups plus the skipped and protected ids.
    static func queue(_ inputs: [PlanInput], zonal: Bool, orchestration: Orchestration, faultDomains: Int,
                      policy: RollingUpgradePolicy) -> (queue: BatchQueue, skipped: [Int], protected: [Int]) {
        let protected = inputs.filter(\.protected).map(\.id).sorted()
        let outdated = inputs.filter { !$0.upToDate && !$0.protected }
        let skipped = outdated.filter(\.skip).map(\.id).sorted()
        let candidates = outdated.filter { !$0.skip }

        enum Boundary { case zone, updateDomain, faultDomain, none }
        let boundary: Boundary
        if zonal && !policy.enableCrossZoneUpgrade {
            boundary = .zone
        } else if orchestration == .uniform {
            boundary = .updateDomain
        } else {
            boundary = faultDomains > 1 ? .faultDomain : .none
        }
        let prioritize = policy.prioritizeUnhealthyInstances

        // Integer sort keys computed once: phase (unphased last), unhealthy first when asked,
        // then the boundary's order. Equal group keys share a group; batches never cross one.
        let zoneNames = Set(candidates.compactMap(\.zone)).sorted(by: zoneOrder)
        // A scale set has a handful of zones: finding one by comparing names beats hashing it.
        func zoneRank(_ zone: String) -> Int? { zoneNames.firstIndex(of: zone).map { $0 + 1 } }
        // Plain integers only, so sorting moves no reference-counted value; `index` finds the input.
        struct Key: Comparable {
            var phase: Int, urgent: Int, boundary: Int, zone: Int, order: Int, id: Int, index: Int
            static func < (a: Key, b: Key) -> Bool {
                (a.phase, a.urgent, a.boundary, a.zone, a.order, a.id) < (b.phase, b.urgent, b.boundary, b.zone, b.order, b.id)
            }
            func sameGroup(_ o: Key) -> Bool { phase == o.phase && urgent == o.urgent && boundary == o.boundary }
        }
        func key(_ p: PlanInput, _ index: Int) -> Key {
            let zone = p.zone.flatMap(zoneRank) ?? 0
            var k = Key(phase: p.phase ?? Int.max, urgent: prioritize && (p.unhealthy || p.failed) ? 0 : 1, boundary: 0, zone: 0, order: 0, id: p.id, index: index)
            switch boundary {
            case .zone:
                k.boundary = zone
                k.order = p.faultDomain
            case .updateDomain:
                k.boundary = p.updateDomain
                k.zone = zone
            case .faultDomain:
                k.boundary = p.faultDomain
                k.zone = zone
            case .none:
                k.zone = zone
            }
            return k
        }
        let keys = candidates.indices.map { key(candidates[$0], $0) }.sorted()
        var groups: [BatchQueue.Group] = []
        var lastKey: Key?
        for k in keys {
            let input = candidates[k.index]
            let planned = PlannedInstance(id: input.id, zone: input.zone, faultDomain: input.faultDomain,
                                          updateDomain: input.updateDomain, unhealthy: input.unhealthy)
            if let lastKey, lastKey.sameGroup(k) {
                groups[groups.count - 1].members.append(planned)
            } else {
                groups.append(BatchQueue.Group(phase: input.phase, members: [planned]))
            }
            lastKey = k
        }
        return (BatchQueue(groups: groups), skipped, protected)
    }

    /// The whole plan without running time: batches are cut with the health each instance has
    /// at the start (the unhealthy budget is assumed to stay as it is then).
    public static func plan(_ inputs: [PlanInput], capacity: Int, zonal: Bool, orchestration: Orchestration,
                            faultDomains: Int, policy: RollingUpgradePolicy, takesDown: Bool = true) -> UpgradePlan {
        var (queue, skipped, protected) = self.queue(inputs, zonal: zonal, orchestration: orchestration,
                                                      faultDomains: faultDomains, policy: policy)
        let size = batchSize(capacity: capacity, percent: policy.maxBatchInstancePercent)
        let unhealthyNow = inputs.count(where: \.unhealthy)
        let room = takesDown ? unhealthyAllowance(capacity: capacity, percent: policy.maxUnhealthyInstancePercent) - unhealthyNow : Int.max
        let budget = unhealthyAllowance(capacity: capacity, percent: policy.maxUnhealthyInstancePercent)
        let zonal = zonal && !policy.enableCrossZoneUpgrade
        var batches: [PlannedBatch] = []
        // The health each instance has at the start, which the plan assumes stays as it is.
        while let first = queue.peek, let next = queue.next(size: size, room: room, isUnhealthy: \.unhealthy) {
            var batch = next.batch
            batch.why.append(.phase(batch.phase))
            if zonal, let zone = first.zone {
                batch.why.append(.zone(zone))
            } else if orchestration == .uniform {
                batch.why.append(.updateDomain(first.updateDomain))
            } else if faultDomains > 1 {
                batch.why.append(.faultDomain(first.faultDomain))
            }
            if policy.prioritizeUnhealthyInstances && batch.instances.contains(where: \.unhealthy) { batch.why.append(.unhealthyFirst) }
            if next.shrunk {
                batch.why.append(.shrunkByBudget(size: size, budget: budget, unhealthyNow: unhealthyNow))
            } else if batch.instances.count < size {
                batch.why.append(.restOfGroup(left: batch.instances.count, size: size))
            } else {
                batch.why.append(.batchSize(size: size, percent: policy.maxBatchInstancePercent, capacity: capacity))
            }
            if !takesDown { batch.why.append(.takesNoneDown) }
            batches.append(batch)
        }
        return UpgradePlan(batches: batches, skipped: skipped, protected: protected,
                           withoutMetrics: inputs.filter(\.withoutMetrics).map(\.id).sorted())
    }
}
