public import Formats

/// Uniform or Flexible orchestration (SPEC §1).
public enum Orchestration: String, Sendable, ParsesCaseInsensitively {
    case uniform = "Uniform", flexible = "Flexible"
}

/// How long operations take on the virtual clock, in milliseconds. A fault script may set one
/// operation's duration instead.
public struct Timings: Equatable, Sendable {
    /// An upgrade that restarts, reimages or redeploys the instance.
    public var disruptiveUpgrade: Millis = 120_000
    /// An upgrade applied in place (extensions, data disks).
    public var inPlaceUpgrade: Millis = 30_000
    /// Creating an instance (MaxSurge, scale out).
    public var create: Millis = 150_000
    /// Deleting an instance.
    public var delete: Millis = 30_000
    /// Returning an instance to its previous model after a policy breach.
    public var rollback: Millis = 120_000

    /// Azure's defaults as rehearse takes them (see docs/behaviour.md).
    public init() {}
}

/// Which model attributes change in place; every other attribute (image, sku, customData,
/// password, sshKeys, zones, faultDomain, proximityPlacementGroup, and anything unknown) needs
/// a restart, reimage or redeploy (seed 003), so unknown attributes are treated as disruptive.
public enum ChangeRules {
    /// Attribute names, lowercased, that apply without taking the instance down.
    public static let inPlace: Set<String> = ["extensions", "extension", "datadisks", "datadisk", "tags"]

    /// Whether moving between two attribute sets takes the instance down.
    public static func isDisruptive(from old: [String: String], to new: [String: String]) -> Bool {
        let changed = Set(old.keys).union(new.keys).filter { old[$0] != new[$0] }
        return changed.contains { !inPlace.contains($0.lowercased()) }
    }
}

/// Everything that describes a scale set before anything runs.
public struct ScaleSetDefinition: Equatable, Sendable {
    /// The scale set's name (1–64 letters, digits, '-', '_').
    public var name: String
    /// Instances at the start.
    public var capacity: Int
    /// Availability zones; empty for a regional scale set.
    public var zones: [String] = []
    /// Uniform or Flexible.
    public var orchestration: Orchestration = .uniform
    /// Attributes of the starting model (version 1).
    public var model: [String: String] = [:]
    /// `upgradePolicy`.
    public var policy = UpgradePolicy()
    /// The Application Health extension, when installed.
    public var healthExtension: HealthExtensionSettings?
    /// A load-balancer health probe (Uniform only needs one of the two for Rolling mode).
    public var loadBalancerProbe = false
    /// The `durabilityLevel` of the model's Service Fabric node extension (`Bronze`, `Silver`,
    /// `Gold`), when it runs one: Silver and Gold clusters may turn on automatic OS image
    /// upgrades without a health probe or extension (Microsoft Learn, "Automatic OS image upgrades
    /// for Azure Virtual Machine Scale Sets", Service Fabric requirements; azurerm #11723).
    public var serviceFabricDurability: String?

    /// Whether the Service Fabric exemption from the automatic OS upgrade's health source applies.
    public var serviceFabricExempt: Bool { ["silver", "gold"].contains(serviceFabricDurability?.lowercased() ?? "") }
    /// Ids with `protectFromScaleSetActions`.
    public var protected: Set<Int> = []
    /// Ids with `protectFromScaleIn` only (does not block upgrades).
    public var protectedFromScaleIn: Set<Int> = []
    /// Most instances that may exist at once (MaxSurge falls back in place above it).
    public var quota: Int?
    /// Fault domains per zone (or region), `platformFaultDomainCount`; nil takes Azure's default
    /// for the layout (`effectiveFaultDomains`).
    public var faultDomainCount: Int?
    /// Update domains: Uniform defaults to 5; Flexible has none.
    public var updateDomainCount = 5
    /// How long operations take.
    public var timings = Timings()
    /// Shown as `location` in the status.
    public var location = "eastus"
    /// The instances as they are now, when a document listed them; nil: `capacity` new
    /// instances, ids 0… on the latest model.
    public var fleet: [ExistingInstance]?
    /// `lifecycleHooksProfile.lifecycleHooks` (SPEC §6b): at most one hook of each type.
    public var lifecycleHooks: [LifecycleHook] = []
    /// `automaticRepairsPolicy` (SPEC §6b); nil: repairs off.
    public var automaticRepairs: AutomaticRepairsPolicy?

    /// A scale set of `capacity` instances with every other field at its default.
    public init(name: String, capacity: Int) {
        self.name = name
        self.capacity = capacity
    }

    /// Fault domains in effect: the explicit count, else Azure's default for the layout
    /// (Uniform regional 5; Uniform zonal 1 per zone; Flexible 1, "max spreading").
    public var effectiveFaultDomains: Int { faultDomainCount ?? Self.defaultFaultDomains(orchestration, zonal: !zones.isEmpty) }

    /// Azure's default `platformFaultDomainCount` for a layout (its fault-domain article).
    public static func defaultFaultDomains(_ orchestration: Orchestration, zonal: Bool) -> Int {
        orchestration == .uniform && !zonal ? 5 : 1
    }

    /// The `platformFaultDomainCount` values Azure accepts for a layout: Uniform zonal 1 or 5,
    /// Uniform regional 1–5, Flexible zonal 1, Flexible regional 1–3.
    public static func allowedFaultDomains(_ orchestration: Orchestration, zonal: Bool) -> [Int] {
        switch (orchestration, zonal) {
        case (.uniform, true): return [1, 5]
        case (.uniform, false): return [1, 2, 3, 4, 5]
        case (.flexible, true): return [1]
        case (.flexible, false): return [1, 2, 3]
        }
    }
    /// Update domains in effect (1 for Flexible).
    public var effectiveUpdateDomains: Int { orchestration == .uniform ? updateDomainCount : 1 }

    /// The message Azure gives for Rolling mode without a health source.
    public static let noHealthSourceMessage = "Rolling Upgrade mode is not supported for this Virtual Machine Scale Set because a health probe or health extension was not provided."

    /// Whether instances report health at all.
    public var hasHealthSource: Bool { healthExtension != nil || (orchestration == .uniform && loadBalancerProbe) }

    /// Whether instances running a model with `extension` (nil: none) report health at all.
    public func hasHealthSource(extension: HealthExtensionSettings?) -> Bool {
        `extension` != nil || (orchestration == .uniform && loadBalancerProbe)
    }

    /// What Azure refuses about `policy` on this scale set, every problem at once: a rollback
    /// on Flexible orchestration, Rolling mode or automatic OS image upgrades without a health
    /// source (`healthSource`: the model has one, or a health source was declared but its
    /// settings were refused and are reported on their own: one problem never causes another),
    /// MaxSurge with automatic OS upgrades on Flexible. The definition's policy and every
    /// `update_policy` are checked with it.
    public func policyProblems(_ policy: UpgradePolicy, healthSource: Bool) -> [Problem] {
        var problems: [Problem] = []
        if policy.rolling.rollbackFailedInstancesOnPolicyBreach && orchestration == .flexible {
            problems.append(Problem(field: "upgradePolicy.rollingUpgradePolicy.rollbackFailedInstancesOnPolicyBreach",
                                    "true is for Uniform orchestration only (Azure's rolling upgrade documentation); this scale set is Flexible"))
        }
        if policy.mode == .rolling && !healthSource {
            problems.append(Problem(field: "upgradePolicy.mode", Self.noHealthSourceMessage + (orchestration == .flexible && loadBalancerProbe ? " (Flexible orchestration needs the health extension; a load-balancer probe is not enough)" : "")))
        }
        let automatic = policy.automaticOS
        guard automatic.enableAutomaticOSUpgrade else { return problems }
        let field = "upgradePolicy.automaticOSUpgradePolicy.enableAutomaticOSUpgrade"
        if !healthSource && !serviceFabricExempt {
            problems.append(Problem(field: field, "automatic OS image upgrades need a health source: add healthExtension" + (orchestration == .uniform ? " or loadBalancerProbe" : " (Flexible orchestration: a load-balancer probe is not enough)")))
        }
        if policy.rolling.maxSurge && orchestration == .flexible {
            problems.append(Problem(field: field, "automatic OS image upgrades with MaxSurge are not yet supported for Flexible orchestration; turn off rollingUpgradePolicy.maxSurge or automatic OS upgrades"))
        }
        if automatic.osRollingUpgradeDeferral && automatic.useRollingUpgradePolicy && policy.rolling.maxSurge {
            problems.append(Problem(field: "upgradePolicy.automaticOSUpgradePolicy.osRollingUpgradeDeferral", "deferral with a MaxSurge batch (instances replaced, not upgraded) is not something rehearse models; turn off one of them"))
        }
        return problems
    }

    /// Every problem of the definition at once; `healthSourceDeclared`: a script answers health.
    public func validate(healthSourceDeclared: Bool = false) -> [Problem] {
        var problems: [Problem] = []
        if name.isEmpty || name.count > 64 || !name.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" }) {
            problems.append(Problem(field: "name", "\"\(name)\" is not a scale set name; allowed 1–64 letters, digits, '-' and '_'"))
        }
        if !(0...100_000).contains(capacity) { problems.append(Problem(field: "capacity", "\(capacity) is out of range; allowed 0–100000")) }
        if Set(zones).count != zones.count { problems.append(Problem(field: "zones", "lists a zone twice: \(zones)")) }
        if let problem = ModelLimits.problem(model) { problems.append(Problem(field: "model", problem)) }
        problems += policy.rolling.problems()
        if let healthExtension { problems += healthExtension.validate().problems }
        if (healthExtension != nil || healthSourceDeclared) && loadBalancerProbe {
            problems.append(Problem(field: "loadBalancerProbe", "Only one source of health monitoring can be used: this scale set has the Application Health extension and a load-balancer probe; keep one"))
        }
        problems += policyProblems(policy, healthSource: hasHealthSource || healthSourceDeclared)
        if let fleet {
            problems += fleetProblems()
            let ids = Set(fleet.map(\.id))
            for id in protected.union(protectedFromScaleIn).sorted() where !ids.contains(id) {
                problems.append(Problem(field: "protected", "instance \(id) is not in the instance list"))
            }
        } else {
            for id in protected.union(protectedFromScaleIn).sorted() where !(0..<capacity).contains(id) {
                problems.append(Problem(field: "protected", "instance \(id) does not exist; ids run 0–\(capacity - 1)"))
            }
        }
        problems += Self.hookProblems(lifecycleHooks)
        problems += repairProblems
        if let quota, quota < capacity { problems.append(Problem(field: "quota", "\(quota) is below the capacity \(capacity)")) }
        let allowedFDs = Self.allowedFaultDomains(orchestration, zonal: !zones.isEmpty)
        if let faultDomainCount, !allowedFDs.contains(faultDomainCount) {
            let layout = "\(orchestration.rawValue) \(zones.isEmpty ? "regional" : "zonal")"
            problems.append(Problem(field: "faultDomains", "\(faultDomainCount) is not a fault domain count Azure accepts for a \(layout) scale set; allowed \(allowedFDs.map(String.init).joined(separator: ", "))"))
        }
        if !(1...20).contains(updateDomainCount) { problems.append(Problem(field: "updateDomains", "\(updateDomainCount) is out of range; allowed 1–20")) }
        let t = timings
        for (field, value) in [("disruptiveUpgrade", t.disruptiveUpgrade), ("inPlaceUpgrade", t.inPlaceUpgrade), ("create", t.create), ("delete", t.delete), ("rollback", t.rollback)] where value < 0 {
            problems.append(Problem(field: "timings.\(field)", "must not be negative"))
        }
        return problems
    }
}

/// Where an instance is in its life. `stopped` (powered off, still allocated) and
/// `deallocated` instances exist but serve nothing and report no health until a start.
public enum Lifecycle: String, Sendable {
    case creating, running, upgrading, rollingBack, deleting, deleted, stopped, deallocated
}

/// One instance of the scale set.
///
/// The fields every probe reads come first and fit 64 bytes (id, model version, health, last
/// operation, lifecycle): at 100,000 instances the fleet is far larger than the caches, and every
/// probe fetches its instance from memory.
public struct Instance: Sendable {
    /// The instance id (0, 1, 2, … never reused).
    public let id: Int
    /// The model version this instance runs.
    public internal(set) var modelVersion: Int
    /// Its health state machine.
    public internal(set) var health: HealthTracker
    /// The last operation that ended on it (nil before any).
    public internal(set) var lastOperation: OperationRecord?
    /// Creating, running, upgrading, rolling back, deleting or deleted.
    public internal(set) var lifecycle: Lifecycle
    /// `<scaleSetName>_<id>`, as Uniform names instances.
    public let name: String
    /// Its zone; nil in a regional scale set.
    public let zone: String?
    /// Its fault domain (0-based).
    public let faultDomain: Int
    /// Its update domain (0-based).
    public let updateDomain: Int
    /// No upgrade or scale-in touches it.
    public internal(set) var protectFromScaleSetActions: Bool
    /// Scale-in spares it; upgrades do not.
    public internal(set) var protectFromScaleIn: Bool
    /// For an instance MaxSurge created, the id of the instance it replaces.
    public internal(set) var replaces: Int?

    init(id: Int, name: String, zone: String?, faultDomain: Int, updateDomain: Int, modelVersion: Int, protectFromScaleSetActions: Bool,
         protectFromScaleIn: Bool, lifecycle: Lifecycle, health: HealthTracker, lastOperation: OperationRecord? = nil, replaces: Int? = nil) {
        self.id = id
        self.lifecycle = lifecycle
        self.modelVersion = modelVersion
        self.health = health
        self.lastOperation = lastOperation
        self.name = name
        self.zone = zone
        self.faultDomain = faultDomain
        self.updateDomain = updateDomain
        self.protectFromScaleSetActions = protectFromScaleSetActions
        self.protectFromScaleIn = protectFromScaleIn
        self.replaces = replaces
    }

    /// Exists and can serve or be upgraded (not being created or deleted).
    public var isPresent: Bool { lifecycle != .deleted && lifecycle != .creating && lifecycle != .deleting }

    /// Stopped or deallocated: it exists, but no upgrade, reimage or restart reaches it until a start.
    public var isPoweredOff: Bool { lifecycle == .stopped || lifecycle == .deallocated }

    /// Still down from an upgrade, a rollback or a reimage that restarted it: its health started
    /// again when that operation ended and has not left Initializing. Such an instance counts as
    /// unhealthy at every pre-batch check (SPEC §4.5), whoever started the operation.
    public var isBootingAfterUpgrade: Bool {
        guard health.state == .initializing, let op = lastOperation, op.restarted else { return false }
        return (op.kind == .upgrade || op.kind == .rollback || op.kind == .reimage) && op.endedAt == health.startedAt
    }

    /// Its latest upgrade or rollback failed (and no other operation ended on it since):
    /// prioritizeUnhealthyInstances takes it first with the unhealthy ones (seed 001: "failed or
    /// unhealthy").
    public var lastUpgradeFailed: Bool {
        guard let op = lastOperation else { return false }
        return (op.kind == .upgrade || op.kind == .rollback) && !op.succeeded
    }
}

/// An operation that ended on an instance, as scripts and the engine read it afterwards.
public struct OperationRecord: Equatable, Sendable {
    // The time first and the one-byte fields packed after it: 11 bytes, and nil costs none
    // (see `Instance`).
    /// When it ended, in milliseconds on the virtual clock.
    public var endedAt: Millis
    /// Upgrade, create, delete or rollback.
    public var kind: OperationKind
    /// Whether it succeeded.
    public var succeeded: Bool
    /// Whether it restarted the instance (a disruptive upgrade, a rollback, a create).
    public var restarted: Bool

    public init(kind: OperationKind, succeeded: Bool, endedAt: Millis, restarted: Bool) {
        self.endedAt = endedAt
        self.kind = kind
        self.succeeded = succeeded
        self.restarted = restarted
    }
}

/// Picks zones and domains for new instances: the emptiest zone first, then the emptiest fault
/// and update domain inside it, ties to the lowest (round-robin for a fresh scale set). Keeps
/// counts, so placing an instance costs O(zones + domains).
struct Spreader: Sendable {
    let zones: [String]
    private var zoneCounts: [Int]
    private var faultCounts: [[Int]]
    private var updateCounts: [[Int]]

    init(zones: [String], faultDomains: Int, updateDomains: Int) {
        self.zones = zones
        let slots = max(1, zones.count)
        zoneCounts = Array(repeating: 0, count: slots)
        faultCounts = Array(repeating: Array(repeating: 0, count: max(1, faultDomains)), count: slots)
        updateCounts = Array(repeating: Array(repeating: 0, count: max(1, updateDomains)), count: slots)
    }

    private func slot(_ zone: String?) -> Int { zone.flatMap { zones.firstIndex(of: $0) } ?? 0 }

    private static func emptiest(_ counts: [Int]) -> Int {
        var best = 0
        for i in counts.indices where counts[i] < counts[best] { best = i }
        return best
    }

    /// Chooses a place for a new instance and counts it there.
    mutating func place() -> (zone: String?, faultDomain: Int, updateDomain: Int) {
        let z = Self.emptiest(zoneCounts)
        let fd = Self.emptiest(faultCounts[z])
        let ud = Self.emptiest(updateCounts[z])
        add(zone: zones.isEmpty ? nil : zones[z], faultDomain: fd, updateDomain: ud)
        return (zones.isEmpty ? nil : zones[z], fd, ud)
    }

    /// The emptiest fault and update domain of `zone`, not yet counted (the caller places the
    /// instance there with `add`).
    func spot(inZone zone: String) -> (zone: String?, faultDomain: Int, updateDomain: Int) {
        let z = slot(zone)
        return (zone, Self.emptiest(faultCounts[z]), Self.emptiest(updateCounts[z]))
    }

    /// Counts an instance placed elsewhere (a MaxSurge replacement takes its old one's place).
    mutating func add(zone: String?, faultDomain: Int, updateDomain: Int) {
        let z = slot(zone)
        zoneCounts[z] += 1
        faultCounts[z][faultDomain] += 1
        updateCounts[z][updateDomain] += 1
    }

    /// Forgets a deleted instance.
    mutating func remove(zone: String?, faultDomain: Int, updateDomain: Int) {
        let z = slot(zone)
        zoneCounts[z] -= 1
        faultCounts[z][faultDomain] -= 1
        updateCounts[z][updateDomain] -= 1
    }
}
