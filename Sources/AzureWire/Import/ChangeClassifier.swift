import Formats

/// What a changed field of a scale set is to the running fleet, as Azure (and, for a Terraform
/// plan, azurerm) applies it.
public enum ChangeClass: String, Equatable, Sendable, CaseIterable {
    /// Part of the VM model that Azure rolls out through the upgrade policy and that takes an
    /// instance down while it is applied (image, size, custom data, OS profile, network, …).
    case modelRestart = "modelRestart"
    /// Part of the VM model rolled out through the upgrade policy while instances keep running
    /// (extensions, data disks).
    case modelInPlace = "modelInPlace"
    /// A property of the scale set itself: applied to the resource, no instance changes.
    case scaleSetLevel = "scaleSetLevel"
    /// How many instances: instances are created or deleted.
    case capacity = "capacity"
    /// Zones added: Azure adds them in place, existing instances stay where they are.
    case zonesAdded = "zonesAdded"
    /// What cannot change in place: the scale set must be deleted and created again.
    case replacement = "replacement"
    /// The upgrade policy: how the next upgrade goes.
    case policy = "policy"
    /// Tags: metadata, nothing happens to an instance.
    case tags = "tags"
    /// A field Azure writes itself (ids, provisioning state, times): not a change.
    case nothing = "nothing"

    /// Whether the change is to the VM model (instances are out of date until upgraded).
    public var isModel: Bool { self == .modelRestart || self == .modelInPlace }
}

/// One row of the classifier's table: the fields it covers, their class, why, and where that
/// is written.
public struct ChangeRule: Sendable {
    /// The field paths the row covers: a path and everything under it (`*` a whole segment).
    public var path: String
    /// What a change of it is.
    public var kind: ChangeClass
    /// Why, in one sentence.
    public var why: String
    /// The page or code that says so.
    public var source: String
    /// Terraform only: whether azurerm rolls the instances itself on `terraform apply` when it
    /// changes (its `updateInstances`), under Manual with the provider's feature defaults.
    public var terraformRolls = false
}

/// The sources the table cites.
enum ChangeSource {
    static let upgradePolicy = "Learn: Upgrade policies for Virtual Machine Scale Sets (changes to the OS version, data disks, NICs … are applied as the policy says)"
    static let modify = "Learn: Modify a Virtual Machine Scale Set (the scale set model; properties that change only with deallocation or not at all)"
    static let zones = "Learn: Create a Virtual Machine Scale Set that uses Availability Zones (add zones to an existing scale set, api-version 2023-03-01 or later)"
    static let azurermSchema = "terraform-provider-azurerm internal/services/compute/linux_virtual_machine_scale_set_resource.go (schema ForceNew)"
    static let azurermUpdate = "terraform-provider-azurerm linux_virtual_machine_scale_set_resource.go update (updateInstances) and virtual_machine_scale_set_update.go"
    static let azurermZones = "terraform-provider-azurerm linux_virtual_machine_scale_set_resource.go CustomizeDiff (ForceNewIfChange zones when one is removed)"
    static let arm = "ARM: fields the platform writes (id, provisioningState, uniqueId, timeCreated) are not part of a deployment"
}

/// The classifier: one table per document shape, each row with its source. The first row whose
/// path covers a field decides; a field no row covers is classified by the fallback rows at
/// the end of each table.
public enum ChangeClassifier {
    typealias S = ChangeSource

    /// The rows for ARM-shaped documents (az vmss show, REST, ARM templates, compiled Bicep),
    /// paths as ARM writes them with `properties.` dropped.
    public static let arm: [ChangeRule] = [
        ChangeRule(path: "sku.capacity", kind: .capacity, why: "the instance count changes: Azure creates or deletes instances, the others keep running", source: S.modify),
        ChangeRule(path: "sku", kind: .modelRestart, why: "the VM size is part of the model: each instance is resized (restarted) as the upgrade policy applies it", source: S.upgradePolicy),
        ChangeRule(path: "zones", kind: .zonesAdded, why: "zones are added in place (api-version 2023-03-01+): existing instances are not moved, new ones spread over every zone", source: S.zones),
        ChangeRule(path: "tags", kind: .tags, why: "tags are metadata of the resource: no instance changes", source: S.modify),
        ChangeRule(path: "upgradePolicy", kind: .policy, why: "the upgrade policy changes how the next model change is rolled out, not the instances", source: S.upgradePolicy),
        ChangeRule(path: "virtualMachineProfile.extensionProfile", kind: .modelInPlace, why: "an extension added, removed or with other settings is a model change: each instance gets it through the upgrade policy, without a restart", source: S.upgradePolicy),
        ChangeRule(path: "virtualMachineProfile.storageProfile.dataDisks", kind: .modelInPlace, why: "data disks added or removed are a model change applied through the upgrade policy; the instance keeps running", source: S.upgradePolicy),
        ChangeRule(path: "virtualMachineProfile.networkProfile", kind: .modelRestart, why: "the network profile (NICs, load balancer pools, health probe) is a model change applied through the upgrade policy; rehearse takes each instance down while it is applied (Azure does not say it does not)", source: S.upgradePolicy),
        ChangeRule(path: "virtualMachineProfile.timeCreated", kind: .nothing, why: "written by the platform", source: S.arm),
        ChangeRule(path: "virtualMachineProfile", kind: .modelRestart, why: "part of the VM model (image, OS profile and custom data, security, diagnostics, …): instances are out of date until upgraded through the upgrade policy, and are restarted or reimaged to take it", source: S.upgradePolicy),
        ChangeRule(path: "orchestrationMode", kind: .replacement, why: "the orchestration mode is fixed when the scale set is created", source: S.modify),
        ChangeRule(path: "platformFaultDomainCount", kind: .replacement, why: "the fault domain count is fixed when the scale set is created", source: S.modify),
        ChangeRule(path: "provisioningState", kind: .nothing, why: "written by the platform", source: S.arm),
        ChangeRule(path: "uniqueId", kind: .nothing, why: "written by the platform", source: S.arm),
        ChangeRule(path: "timeCreated", kind: .nothing, why: "written by the platform", source: S.arm),
        ChangeRule(path: "id", kind: .nothing, why: "written by the platform", source: S.arm),
        ChangeRule(path: "etag", kind: .nothing, why: "written by the platform", source: S.arm),
        ChangeRule(path: "type", kind: .nothing, why: "the resource type, the same scale set", source: S.arm),
        ChangeRule(path: "resourceGroup", kind: .nothing, why: "written by az", source: S.arm),
        ChangeRule(path: "apiVersion", kind: .nothing, why: "the api-version of a template's resource, not a property", source: S.arm),
        ChangeRule(path: "dependsOn", kind: .nothing, why: "deployment order, not a property", source: S.arm),
        ChangeRule(path: "", kind: .scaleSetLevel, why: "a property of the scale set outside the VM model (repairs, overprovision, scale-in, placement group, identity, …): applied to the resource, no instance restarts", source: S.modify),
    ]

    /// The rows for Terraform plans (azurerm's attribute names).
    public static let terraform: [ChangeRule] = {
        var rows: [ChangeRule] = [
            ChangeRule(path: "instances", kind: .capacity, why: "the instance count changes: Azure creates or deletes instances", source: S.azurermUpdate),
            ChangeRule(path: "zones", kind: .zonesAdded, why: "zones added are updated in place; azurerm forces a new resource only when a zone is removed", source: S.azurermZones),
            ChangeRule(path: "tags", kind: .tags, why: "tags are metadata: no instance changes", source: S.azurermUpdate),
            ChangeRule(path: "rolling_upgrade_policy", kind: .policy, why: "the upgrade policy changes how the next model change is rolled out", source: S.azurermUpdate),
            ChangeRule(path: "automatic_os_upgrade_policy", kind: .policy, why: "the automatic OS upgrade policy changes how the next image is rolled out", source: S.azurermUpdate),
        ]
        // Model parts azurerm rolls itself under Manual (updateInstances = true).
        for (name, inPlace) in [("source_image_reference", false), ("source_image_id", false), ("os_disk", false), ("data_disk", true), ("custom_data", false),
                                ("user_data", false), ("sku", false), ("boot_diagnostics", false), ("disk_controller_type", false), ("extension", true),
                                ("extensions_time_budget", true)] {
            rows.append(ChangeRule(path: name, kind: inPlace ? .modelInPlace : .modelRestart,
                                   why: "\(name) is part of the VM model, rolled out through the upgrade policy; under Manual, terraform apply updates and reimages each out-of-date instance itself (roll_instances_when_required, reimage_on_manual_upgrade default true)",
                                   source: S.azurermUpdate, terraformRolls: true))
        }
        // Model parts azurerm sends without rolling instances.
        for name in ["network_interface", "health_probe_id", "admin_ssh_key", "disable_password_authentication", "secret", "termination_notification",
                     "encryption_at_host_enabled", "gallery_application", "max_bid_price", "additional_capabilities"] {
            rows.append(ChangeRule(path: name, kind: .modelRestart,
                                   why: "\(name) is part of the VM model, rolled out through the upgrade policy; azurerm does not roll instances for it (under Manual they wait)",
                                   source: S.azurermUpdate))
        }
        for name in ["name", "resource_group_name", "location", "admin_username", "admin_password", "capacity_reservation_group_id", "computer_name_prefix",
                     "edge_zone", "eviction_policy", "extension_operations_enabled", "host_group_id", "platform_fault_domain_count", "priority",
                     "provision_vm_agent", "proximity_placement_group_id", "secure_boot_enabled", "upgrade_mode", "vtpm_enabled", "zone_balance"] {
            rows.append(ChangeRule(path: name, kind: .replacement, why: "azurerm marks \(name) ForceNew: changing it deletes and creates the scale set", source: S.azurermSchema))
        }
        rows += [
            ChangeRule(path: "id", kind: .nothing, why: "written by the provider", source: S.azurermSchema),
            ChangeRule(path: "unique_id", kind: .nothing, why: "written by the provider", source: S.azurermSchema),
            ChangeRule(path: "timeouts", kind: .nothing, why: "Terraform's own timeouts, not a property of the scale set", source: S.azurermSchema),
            ChangeRule(path: "", kind: .scaleSetLevel, why: "a property of the scale set outside the VM model (repairs, overprovision, scale_in, identity, …): applied to the resource, no instance restarts", source: S.azurermUpdate),
        ]
        return rows
    }()

    /// The row that decides `field` (a path with `.` between segments, `[…]` after a list).
    public static func rule(for field: String, in table: [ChangeRule]) -> ChangeRule {
        let bare = field.replacingBrackets().lowercased()
        return table.first { row in
            let path = row.path.lowercased()
            return path.isEmpty || bare == path || bare.hasPrefix(path + ".")
        }!
    }
}

extension String {
    /// The path without list positions or keys (`a[web].b[0]` is `a.b`).
    func replacingBrackets() -> String {
        var out = ""
        var depth = 0
        for c in self {
            if c == "[" { depth += 1 } else if c == "]" { depth -= 1 } else if depth == 0 { out.append(c) }
        }
        return out
    }
}
