public import Formats
public import UpgradeEngine

/// A `Microsoft.Compute/virtualMachineScaleSets` resource as ARM, the REST API and `az vmss show`
/// write it: `name`, `location`, `sku` (`name`: the VM size, `capacity`), `zones`, and the
/// properties (under `properties`, or at the top level as `az` flattens them):
/// `orchestrationMode`, `platformFaultDomainCount`, `upgradePolicy`, and in
/// `virtualMachineProfile` the health extension, the load balancer's health probe and the image.
/// `null` means absent. Everything else is ignored on purpose, except what would change the
/// answer and cannot be modelled, which is a warning.
public struct ScaleSetResource {
    /// The resource type ARM names.
    public static let type = "Microsoft.Compute/virtualMachineScaleSets"
    /// The extension types that are the Application Health extension.
    static let healthExtensionTypes = ["ApplicationHealthLinux", "ApplicationHealthWindows"]

    /// The path of the resource in its document (`resources[0]`), or empty at the top.
    let prefix: String
    /// Every problem found, each naming its path.
    public private(set) var problems: [Problem] = []
    /// What the resource says that rehearse cannot model.
    public private(set) var warnings: [Problem] = []

    /// A reader of the resource found at `prefix`.
    public init(prefix: String) { self.prefix = prefix }

    func path(_ field: String) -> String { prefix.isEmpty ? field : "\(prefix).\(field)" }

    mutating func problem(_ field: String, _ message: String) { problems.append(Problem(field: path(field), message)) }
    mutating func warn(_ field: String, _ message: String) { warnings.append(Problem(field: path(field), message)) }

    /// The definition `value` describes.
    public mutating func read(_ given: JSON) -> ScaleSetDefinition {
        let (value, lenient) = LenientScalars.normalize(given, prefix: prefix)
        warnings += lenient
        let properties = value.field("properties") ?? value
        let inner = value.field("properties") == nil ? "" : "properties."
        var name = "vmss"
        switch value.field("name") {
        case .string(let text)?: name = text
        case let other?: problem("name", "\(other.serialized(pretty: false)) is not a name; allowed a string")
        case nil: break
        }
        var capacity = 0
        let sku = value.field("sku")
        if let sku, sku.object == nil { problem("sku", "is \(sku.kindName); expected an object with name and capacity") }
        switch sku?.field("capacity") {
        case .int(let n)? where n >= 0: capacity = n
        case let other?: problem("sku.capacity", "\(other.serialized(pretty: false)) is not a count of instances; allowed a whole number of at least 0")
        case nil: problem("sku.capacity", "is missing: how many instances the scale set has")
        }
        var d = ScaleSetDefinition(name: name, capacity: capacity)
        if case .string(let size)? = sku?.field("name") { d.model["sku.name"] = size }
        if case .string(let tier)? = sku?.field("tier") { d.model["sku.tier"] = tier }
        if case .string(let location)? = value.field("location") { d.location = location }
        // An empty string is how templates write "no zones" (if(…, '', array(…))).
        if let zones = value.field("zones"), zones != .string("") {
            if case .array(let items) = zones {
                d.zones = items.enumerated().compactMap { i, item in
                    switch item {
                    case .string(let s): return s
                    case .int(let n): return String(n)
                    default:
                        problem("zones[\(i)]", "\(item.serialized(pretty: false)) is not a zone; allowed a string such as \"1\"")
                        return nil
                    }
                }
            } else {
                problem("zones", "is \(zones.kindName); expected a list such as [\"1\", \"2\", \"3\"]")
            }
        }
        if let mode = properties.field("orchestrationMode") {
            if case .string(let text) = mode, let parsed = Orchestration(parsing: text) { d.orchestration = parsed } else {
                problem(inner + "orchestrationMode", "\(mode.serialized(pretty: false)) is not an orchestration mode; allowed Uniform, Flexible")
            }
        }
        if let count = properties.field("platformFaultDomainCount") {
            if case .int(let n) = count { d.faultDomainCount = n } else {
                problem(inner + "platformFaultDomainCount", "\(count.serialized(pretty: false)) is not a whole number")
            }
        }
        if let given = properties.field("upgradePolicy") {
            let (policy, legacy) = UpgradePolicy.movingLegacyFields(given, prefix: path(inner + "upgradePolicy"))
            warnings += legacy
            do { d.policy = try UpgradePolicy.parse(policy, prefix: path(inner + "upgradePolicy")) } catch { problems += error.problems }
        }
        if let repairs = properties.field("automaticRepairsPolicy"), repairs != .null {
            let (policy, found) = AutomaticRepairsPolicy.read(repairs, prefix: path(inner + "automaticRepairsPolicy"))
            d.automaticRepairs = policy
            problems += found
        }
        if let hooks = properties.field("lifecycleHooksProfile") {
            let (read, found) = LifecycleHooksWire.profile(hooks, prefix: path(inner + "lifecycleHooksProfile"))
            d.lifecycleHooks = read
            problems += found
        }
        let profile = properties.field("virtualMachineProfile")
        let profilePath = inner + "virtualMachineProfile"
        readHealthExtension(profile, profilePath, into: &d)
        if let probe = profile?.field("networkProfile")?.field("healthProbe") {
            // A probe is named by its id: a load balancer's probe, or something else by mistake.
            if case .string(let id)? = probe.field("id"), !Self.isLoadBalancerProbe(id) {
                warn(profilePath + ".networkProfile.healthProbe.id", "is not a load balancer's probe (…/providers/Microsoft.Network/loadBalancers/NAME/probes/NAME): it is not taken as a health source")
            } else {
                d.loadBalancerProbe = true
            }
        }
        if let image = profile?.field("storageProfile")?.field("imageReference") {
            for field in ["publisher", "offer", "sku", "version"] {
                if case .string(let text)? = image.field(field) { d.model["imageReference.\(field)"] = text }
            }
            if case .string(let id)? = image.field("id") { d.model["imageReference.id"] = id }
        }
        warnUnmodelled(properties, inner)
        return d
    }

    /// The Application Health extension among `extensionProfile.extensions`, in the ARM shape.
    mutating func readHealthExtension(_ profile: JSON?, _ profilePath: String, into d: inout ScaleSetDefinition) {
        guard let extensions = profile?.field("extensionProfile")?.field("extensions") else { return }
        guard case .array(let items) = extensions else {
            return problem("\(profilePath).extensionProfile.extensions", "is \(extensions.kindName); expected a list")
        }
        for (i, item) in items.enumerated() {
            let properties = item.field("properties") ?? item
            // `az` prints an extension's type as typePropertiesType (its own flattening).
            let typeKey = properties.field("type") != nil ? "type" : "typePropertiesType"
            // A Service Fabric node's durability decides whether automatic OS upgrades need a health source.
            if case .string(let type)? = properties.field(typeKey), Self.serviceFabricNodeTypes.contains(type.lowercased()),
               case .string(let durability)? = properties.field("settings")?.member("durabilityLevel") {
                d.serviceFabricDurability = durability
                continue
            }
            guard case .string(let type)? = properties.field(typeKey), Self.healthExtensionTypes.contains(type) else { continue }
            let at = "\(profilePath).extensionProfile.extensions[\(i)]"
            // The fields the extension's reader knows; the rest of a real document (provisioning
            // state, protected settings, ordering) does not change a rollout.
            let known = ["publisher", "type", "typeHandlerVersion", "autoUpgradeMinorVersion", "enableAutomaticUpgrade", "settings"]
            var kept: [String: JSON] = [:]
            for key in known { if let v = properties.member(key == "type" ? typeKey : key), v != .null { kept[key] = v } }
            var arm: [String: JSON] = ["properties": .object(kept)]
            if let name = item.field("name") { arm["name"] = name }
            do {
                let (settings, found) = try HealthExtensionSettings.parse(.object(arm), prefix: path(at))
                d.healthExtension = settings
                warnings += found
            } catch {
                problems += error.problems
            }
        }
    }

    /// The Service Fabric node extensions' types (publisher Microsoft.Azure.ServiceFabric), lowercased.
    static let serviceFabricNodeTypes: Set<String> = ["servicefabricnode", "servicefabriclinuxnode"]

    /// Settings that change what a rollout does and that rehearse does not model.
    mutating func warnUnmodelled(_ properties: JSON, _ inner: String) {
        // The default rule is what rehearse does in effect; only other rules change the answer.
        if case .array(let rules)? = properties.field("scaleInPolicy")?.field("rules"), rules.contains(where: { if case .string(let rule) = $0 { return rule.lowercased() != "default" } else { return true } }) {
            warn(inner + "scaleInPolicy.rules", "scale-in rules other than Default are not modelled: scale() removes the newest instances")
        }
    }

    /// Whether `id` names a load balancer's probe (any case, as ARM compares ids).
    static func isLoadBalancerProbe(_ id: String) -> Bool {
        let parts = id.lowercased().pieces(separatedBy: "/providers/microsoft.network/loadbalancers/")
        guard parts.count == 2 else { return false }
        let rest = parts[1].split(separator: "/")
        return rest.count == 3 && rest[1] == "probes"
    }
}
