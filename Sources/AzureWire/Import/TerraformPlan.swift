import Formats
import UpgradeEngine

/// `terraform show -json` output: a plan (`planned_values`, `resource_changes[].change.after`)
/// or a state (`values`), holding `azurerm_linux_virtual_machine_scale_set`,
/// `azurerm_windows_virtual_machine_scale_set` or `azurerm_orchestrated_virtual_machine_scale_set`
/// resources, with the provider's names: nested blocks are one-element lists, the health
/// extension's `settings` is a JSON string.
enum TerraformPlan {
    static let types = ["azurerm_linux_virtual_machine_scale_set", "azurerm_windows_virtual_machine_scale_set",
                        "azurerm_orchestrated_virtual_machine_scale_set"]

    struct Found {
        var address: String
        var type: String
        var values: JSON
        var path: String
    }

    static func read(_ plan: JSON, resource chosen: String?) throws(ValidationFailure) -> ImportedScaleSet {
        var found: [Found] = []
        let root = plan.member("planned_values")?.member("root_module") ?? plan.member("values")?.member("root_module")
        if let root { collect(root, path: plan.member("planned_values") != nil ? "planned_values.root_module" : "values.root_module", into: &found) }
        if found.isEmpty, case .array(let changes)? = plan.member("resource_changes") {
            for (i, change) in changes.enumerated() {
                guard case .string(let type)? = change.member("type"), types.contains(type), case .string(let address)? = change.member("address"),
                      let after = change.member("change")?.member("after"), after.object != nil else { continue }
                found.append(Found(address: address, type: type, values: after, path: "resource_changes[\(i)].change.after"))
            }
        }
        guard !found.isEmpty else {
            throw ValidationFailure([Problem(field: "planned_values", "holds no \(types.joined(separator: ", ")) resource")])
        }
        let picked = found[try pick(found.map(\.address), chosen: chosen, field: "planned_values")]
        var reader = Reader(path: picked.path, flexible: picked.type.contains("orchestrated"))
        let definition = reader.read(picked.values)
        // Values the plan does not know yet (known after apply).
        if case .array(let changes)? = plan.member("resource_changes") {
            for change in changes where change.member("address") == .string(picked.address) {
                if let unknown = change.member("change")?.member("after_unknown") {
                    reader.noteUnknown(unknown, at: "")
                }
            }
        }
        guard reader.problems.isEmpty else { throw ValidationFailure(reader.problems) }
        return ImportedScaleSet(definition: definition, warnings: reader.warnings, format: .terraformPlan, resource: picked.address, document: picked.values)
    }

    /// The index of the scale set `chosen` names among `addresses` (its address, or its end
    /// after a dot), or of the only one; otherwise a problem at `field` listing them.
    static func pick(_ addresses: [String], chosen: String?, field: String) throws(ValidationFailure) -> Int {
        if let chosen {
            guard let match = addresses.firstIndex(where: { $0 == chosen || $0.hasSuffix(".\(chosen)") }) else {
                throw ValidationFailure([Problem(at: .setting(.resource, value: chosen), "no scale set of that address; the plan has \(addresses.joined(separator: ", "))",
                                                 allowed: addresses)])
            }
            return match
        }
        guard addresses.count == 1 else {
            var problem = Problem(field: field, "holds \(addresses.count) scale sets (\(addresses.joined(separator: ", "))); choose one")
            problem.remedy = Remedy(.resource, placeholder: "ADDRESS", scriptForm: "resource = \"ADDRESS\"")
            problem.allowed = addresses
            throw ValidationFailure([problem])
        }
        return 0
    }

    static func collect(_ module: JSON, path: String, into found: inout [Found]) {
        if case .array(let resources)? = module.member("resources") {
            for (i, resource) in resources.enumerated() {
                guard case .string(let type)? = resource.member("type"), types.contains(type), case .string(let address)? = resource.member("address"),
                      let values = resource.member("values") else { continue }
                found.append(Found(address: address, type: type, values: values, path: "\(path).resources[\(i)].values"))
            }
        }
        if case .array(let children)? = module.member("child_modules") {
            for (i, child) in children.enumerated() { collect(child, path: "\(path).child_modules[\(i)]", into: &found) }
        }
    }

    /// The provider's fields, read into the engine's definition.
    struct Reader {
        let path: String
        let flexible: Bool
        var fields: FieldReader
        var warnings: [Problem] = []
        var problems: [Problem] { fields.problems }

        /// The fields that matter to a rollout, for naming unknown ones.
        static let relevant = ["instances", "zones", "upgrade_mode", "health_probe_id", "rolling_upgrade_policy", "automatic_os_upgrade_policy",
                               "extension", "sku", "sku_name", "source_image_reference", "platform_fault_domain_count", "name"]

        init(path: String, flexible: Bool) {
            self.path = path
            self.flexible = flexible
            fields = FieldReader(prefix: path)
        }

        /// The single element of a nested block (the provider writes a list), or nil.
        mutating func block(_ values: JSON, _ key: String) -> JSON? {
            guard let value = values.field(key) else { return nil }
            guard case .array(let items) = value else {
                fields.problem(key, "is \(value.kindName); expected the provider's one-element list")
                return nil
            }
            return items.first
        }

        mutating func read(_ values: JSON) -> ScaleSetDefinition {
            var name = "vmss"
            if case .string(let text)? = values.field("name") { name = text }
            let capacity = fields.integer(values, "", "instances", 0...1_000_000, unit: "instances") ?? 0
            if values.field("instances") == nil { fields.problem("instances", "is missing: how many instances the scale set has") }
            var d = ScaleSetDefinition(name: name, capacity: capacity)
            d.orchestration = flexible ? .flexible : .uniform
            if case .string(let location)? = values.field("location") { d.location = location }
            if case .string(let size)? = values.field("sku") ?? values.field("sku_name") { d.model["sku.name"] = size }
            if let zones = values.field("zones") {
                if case .array(let items) = zones {
                    d.zones = items.compactMap { if case .string(let s) = $0 { return s } else { return nil } }
                } else {
                    fields.problem("zones", "is \(zones.kindName); expected a list of zone names")
                }
            }
            if let count = fields.integer(values, "", "platform_fault_domain_count", 1...5, unit: "fault domains") { d.faultDomainCount = count }
            if let mode = values.field("upgrade_mode") {
                if case .string(let text) = mode, let parsed = UpgradeMode(parsing: text) { d.policy.mode = parsed } else {
                    fields.problem("upgrade_mode", "\(mode.serialized(pretty: false)) is not an upgrade mode; allowed Automatic, Manual, Rolling")
                }
            }
            if let probe = values.field("health_probe_id"), probe != .string("") { d.loadBalancerProbe = true }
            if let rolling = block(values, "rolling_upgrade_policy") { d.policy.rolling = rollingPolicy(rolling, "rolling_upgrade_policy[0]") }
            if let automatic = block(values, "automatic_os_upgrade_policy") {
                let at = "automatic_os_upgrade_policy[0]"
                for key in ["enable_automatic_os_upgrade", "automatic_os_upgrade_enabled"] {
                    if let v = fields.bool(automatic, at, key, acceptStrings: false) { d.policy.automaticOS.enableAutomaticOSUpgrade = v }
                }
                if let v = fields.bool(automatic, at, "disable_automatic_rollback", acceptStrings: false) { d.policy.automaticOS.disableAutomaticRollback = v }
            }
            if let image = block(values, "source_image_reference") {
                for (tf, attribute) in [("publisher", "publisher"), ("offer", "offer"), ("sku", "sku"), ("version", "version")] {
                    if case .string(let text)? = image.field(tf) { d.model["imageReference.\(attribute)"] = text }
                }
            }
            if case .string(let id)? = values.field("source_image_id"), !id.isEmpty { d.model["imageReference.id"] = id }
            readExtensions(values, into: &d)
            if let repair = block(values, "automatic_instance_repair") {
                // azurerm: enabled, grace_period (ISO 8601), action (Replace, Restart, Reimage).
                let at = "automatic_instance_repair[0]"
                var policy = AutomaticRepairsPolicy(enabled: false)
                if let v = fields.bool(repair, at, "enabled", acceptStrings: false) { policy.enabled = v }
                if let v = fields.duration(repair, at, "grace_period") { policy.gracePeriod = v }
                if case .string(let text)? = repair.field("action") {
                    if let action = RepairAction(parsing: text) { policy.repairAction = action } else {
                        fields.problem("\(at).action", "\"\(text)\" is not a repair action; allowed Replace, Restart, Reimage")
                    }
                }
                d.automaticRepairs = policy
            }
            return d
        }

        mutating func rollingPolicy(_ value: JSON, _ at: String) -> RollingUpgradePolicy {
            var p = RollingUpgradePolicy()
            if let v = fields.integer(value, at, "max_batch_instance_percent", 5...100, unit: "percent") { p.maxBatchInstancePercent = v }
            if let v = fields.integer(value, at, "max_unhealthy_instance_percent", 5...100, unit: "percent") { p.maxUnhealthyInstancePercent = v }
            if let v = fields.integer(value, at, "max_unhealthy_upgraded_instance_percent", 0...100, unit: "percent") {
                p.maxUnhealthyUpgradedInstancePercent = v
            }
            if let v = fields.duration(value, at, "pause_time_between_batches") { p.pauseTimeBetweenBatches = v }
            if let v = fields.bool(value, at, "cross_zone_upgrades_enabled", acceptStrings: false) { p.enableCrossZoneUpgrade = v }
            if let v = fields.bool(value, at, "prioritize_unhealthy_instances_enabled", acceptStrings: false) { p.prioritizeUnhealthyInstances = v }
            if let v = fields.bool(value, at, "maximum_surge_instances_enabled", acceptStrings: false) { p.maxSurge = v }
            return p
        }

        /// The Application Health extension among the `extension` blocks; its `settings` is a JSON string.
        mutating func readExtensions(_ values: JSON, into d: inout ScaleSetDefinition) {
            guard case .array(let items)? = values.field("extension") else { return }
            for (i, item) in items.enumerated() {
                guard case .string(let type)? = item.field("type"), ScaleSetResource.healthExtensionTypes.contains(type) else { continue }
                let at = "\(path).extension[\(i)]"
                var settings = JSON.object([:])
                switch item.field("settings") {
                case .string(let text)?:
                    do { settings = try JSON.parse(text) } catch {
                        fields.problems.append(Problem(field: "\(at).settings", "is not JSON: \(error.problem)"))
                        continue
                    }
                case .object?: settings = item.field("settings")!
                case nil: break
                case let other?: fields.problems.append(Problem(field: "\(at).settings", "is \(other.kindName); expected the settings as a JSON string"))
                }
                var properties: [String: JSON] = ["type": .string(type), "settings": settings]
                if let publisher = item.field("publisher") { properties["publisher"] = publisher }
                if let version = item.field("type_handler_version") { properties["typeHandlerVersion"] = version }
                do {
                    let (parsed, found) = try HealthExtensionSettings.parse(.object(["properties": .object(properties)]), prefix: at)
                    d.healthExtension = parsed
                    warnings += found
                } catch {
                    fields.problems += error.problems
                }
            }
        }

        /// Each relevant field the plan marks as known only after apply becomes a warning.
        mutating func noteUnknown(_ unknown: JSON, at key: String) {
            guard case .object(let members) = unknown else { return }
            for name in members.keys.sorted() where Self.relevant.contains(name) && members[name] == .bool(true) {
                warnings.append(Problem(field: "\(path).\(name)", "is known only after apply; the plan's value (or the default) is used"))
            }
        }
    }
}
