import Formats

/// One instance of the scale set as it is now (`az vmss list-instances`): a rehearsal can start
/// from the fleet as it is, not an idealised one.
public struct ExistingInstance: Equatable, Sendable {
    /// Its instance id.
    public var id: Int
    /// Its zone; nil in a regional scale set.
    public var zone: String?
    /// Its platform fault domain, when the document says (else the engine places it).
    public var faultDomain: Int?
    /// Its platform update domain, when the document says.
    public var updateDomain: Int?
    /// Whether it runs the scale set's latest model (`latestModelApplied`).
    public var latestModelApplied: Bool
    /// `protectionPolicy.protectFromScaleSetActions`.
    public var protectFromScaleSetActions: Bool
    /// `protectionPolicy.protectFromScaleIn`.
    public var protectFromScaleIn: Bool
    /// A Flexible scale set's VM name, which `az vmss list-instances` gives as its `instanceId`
    /// (SPEC §6b); nil: the Uniform name `<scaleSet>_<id>`.
    public var name: String?

    /// An instance `id` on the latest model, unprotected, placed by the engine unless given.
    public init(id: Int, zone: String? = nil, faultDomain: Int? = nil, updateDomain: Int? = nil, latestModelApplied: Bool = true,
                protectFromScaleSetActions: Bool = false, protectFromScaleIn: Bool = false, name: String? = nil) {
        self.id = id
        self.zone = zone
        self.faultDomain = faultDomain
        self.updateDomain = updateDomain
        self.latestModelApplied = latestModelApplied
        self.protectFromScaleSetActions = protectFromScaleSetActions
        self.protectFromScaleIn = protectFromScaleIn
        self.name = name
    }
}

extension ScaleSetDefinition {
    /// The attribute that sets the model older instances run apart from the latest one: what it
    /// was is not in the documents, only that it differs, so an upgrade to the latest takes
    /// them down.
    public static let previousModelAttribute = "rehearse.previousModel"

    /// Problems of a starting fleet: ids once each, as many as the capacity, zones the scale set
    /// has, domains within its counts.
    func fleetProblems() -> [Problem] {
        guard let fleet else { return [] }
        var problems: [Problem] = []
        var seen = Set<Int>()
        for (i, vm) in fleet.enumerated() {
            if vm.id < 0 || vm.id > 1_000_000 { problems.append(Problem(field: "instances[\(i)].instanceId", "\(vm.id) is out of range; allowed 0–1000000")) }
            if !seen.insert(vm.id).inserted { problems.append(Problem(field: "instances[\(i)].instanceId", "\(vm.id) is listed twice")) }
            if let zone = vm.zone, !zones.contains(zone) {
                problems.append(Problem(field: "instances[\(i)].zones", "zone \(zone) is not one of the scale set's zones (\(zones.joined(separator: ", ")))"))
            }
            if vm.zone == nil && !zones.isEmpty { problems.append(Problem(field: "instances[\(i)].zones", "is missing in a zonal scale set")) }
            if let fd = vm.faultDomain, !(0..<effectiveFaultDomains).contains(fd) {
                problems.append(Problem(field: "instances[\(i)].platformFaultDomain", "\(fd) is out of range; the scale set has \(effectiveFaultDomains) fault domain(s)"))
            }
            if let ud = vm.updateDomain, !(0..<max(1, effectiveUpdateDomains)).contains(ud) {
                problems.append(Problem(field: "instances[\(i)].platformUpdateDomain", "\(ud) is out of range; the scale set has \(effectiveUpdateDomains) update domain(s)"))
            }
        }
        if fleet.count != capacity {
            problems.append(Problem(field: "capacity", "\(capacity), but the instance list holds \(fleet.count) instances; give one or the other"))
        }
        return problems
    }
}
