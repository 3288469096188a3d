import AzureWire
import Formats
import Scenario
import UpgradeEngine

/// The served scale set's resources in the REST spec's shapes (`VirtualMachineScaleSet`,
/// `VirtualMachineScaleSetVM`, their instance views), from a session's snapshot.
struct ScaleSetShapes {
    /// `/subscriptions/{s}/resourceGroups/{g}/providers/Microsoft.Compute/virtualMachineScaleSets/{name}` as asked.
    let id: String
    let scaleSet: ScaleSetDefinition
    let model: [String: String]
    let capacity: Int
    let instances: [InstanceView]
    let provisioningState: String
    /// The Unix second virtual time 0 stands for (`ServedRun.epoch`).
    let epoch: Int
    /// The scale set's etag (`"3"`); nil for a client of an api-version before ETags.
    let etag: String?

    static let vmSize = "Standard_D2s_v3"
    /// The image when the scenario's model names none of its parts.
    static let defaultImage = ["publisher": "Canonical", "offer": "0001-com-ubuntu-server-jammy", "sku": "22_04-lts-gen2", "version": "latest"]

    /// `imageReference`: the model's `imageReference.*` attributes over the defaults; `exactVersion`
    /// is the scenario's `image` attribute when it has one.
    var imageReference: JSON {
        var fields: [String: JSON] = [:]
        for (part, fallback) in Self.defaultImage { fields[part] = .string(model["imageReference.\(part)"] ?? fallback) }
        if let image = model["image"] { fields["exactVersion"] = .string(image) }
        return .object(fields)
    }

    /// The VM size: the model's `sku.name` and `sku.tier` when it names them.
    var vmSize: String { model["sku.name"] ?? Self.vmSize }

    var sku: JSON { .object(["name": .string(vmSize), "tier": .string(model["sku.tier"] ?? "Standard"), "capacity": .int(capacity)]) }

    /// The health extension as `extensionProfile` lists it.
    var extensions: JSON {
        guard let health = scaleSet.healthExtension else { return .array([]) }
        var settings: [String: JSON] = ["protocol": .string(health.protocol.rawValue), "intervalInSeconds": .int(health.intervalInSeconds),
                                        "numberOfProbes": .int(health.numberOfProbes), "gracePeriod": .int(health.gracePeriod)]
        if let port = health.port { settings["port"] = .int(port) }
        if let path = health.requestPath { settings["requestPath"] = .string(path) }
        let properties: [String: JSON] = ["publisher": .string("Microsoft.ManagedServices"), "type": .string("ApplicationHealthLinux"),
                                          "typeHandlerVersion": .string(health.typeHandlerVersion), "autoUpgradeMinorVersion": .bool(true),
                                          "settings": .object(settings), "provisioningState": .string("Succeeded")]
        return .array([.object(["name": .string("HealthExtension"), "properties": .object(properties)])])
    }

    /// `GET virtualMachineScaleSets/{name}`.
    var resource: JSON {
        let properties: [String: JSON] = [
            "upgradePolicy": scaleSet.policy.json,
            "virtualMachineProfile": .object([
                "osProfile": .object(["computerNamePrefix": .string(scaleSet.name), "adminUsername": .string("azureuser"),
                                      "linuxConfiguration": .object(["disablePasswordAuthentication": .bool(true)])]),
                "storageProfile": .object(["imageReference": imageReference,
                                           "osDisk": .object(["createOption": .string("FromImage"), "caching": .string("ReadWrite"),
                                                              "managedDisk": .object(["storageAccountType": .string("Premium_LRS")])])]),
                "networkProfile": .object(["networkInterfaceConfigurations": .array([])]),
                "extensionProfile": .object(["extensions": extensions]),
            ]),
            "provisioningState": .string(provisioningState),
            "overprovision": .bool(false),
            "singlePlacementGroup": .bool(true),
            "orchestrationMode": .string(scaleSet.orchestration.rawValue),
            "platformFaultDomainCount": .int(scaleSet.effectiveFaultDomains),
            "uniqueId": .string(Self.uuid(0)),
            "timeCreated": .string(Timestamp.format(0, epoch: epoch)),
        ]
        var shown = properties
        if !scaleSet.lifecycleHooks.isEmpty { shown["lifecycleHooksProfile"] = LifecycleHooksWire.profileJSON(scaleSet.lifecycleHooks) }
        if let repairs = scaleSet.automaticRepairs {
            shown["automaticRepairsPolicy"] = .object(["enabled": .bool(repairs.enabled), "gracePeriod": .string(ISODuration.format(repairs.gracePeriod)),
                                                       "repairAction": .string(repairs.repairAction.rawValue)])
        }
        var root: [String: JSON] = ["id": .string(id), "name": .string(scaleSet.name), "type": .string("Microsoft.Compute/virtualMachineScaleSets"),
                                    "location": .string(scaleSet.location), "sku": sku, "properties": .object(shown)]
        if !scaleSet.zones.isEmpty { root["zones"] = .array(scaleSet.zones.map(JSON.string)) }
        if let etag { root["etag"] = .string(etag) }
        return .object(root)
    }

    /// A stable GUID-shaped id for `n` (no randomness: the same scenario answers the same bytes).
    static func uuid(_ n: Int) -> String {
        let hex = String(n, radix: 16)
        return "00000000-0000-4000-8000-" + String(repeating: "0", count: max(0, 12 - hex.count)) + hex
    }

    /// `vmHealth.status.code` as Azure writes it.
    static func healthCode(_ state: HealthState) -> (code: String, level: String) {
        switch state {
        case .healthy: ("HealthState/healthy", "Info")
        case .unhealthy: ("HealthState/unhealthy", "Warning")
        case .unknown: ("HealthState/unknown", "Warning")
        case .initializing: ("HealthState/initializing", "Info")
        }
    }

    /// `ProvisioningState/…` of an instance in `lifecycle`.
    static func provisioning(_ lifecycle: Lifecycle) -> String {
        switch lifecycle {
        case .running, .stopped, .deallocated: "Succeeded"
        case .creating: "Creating"
        case .upgrading, .rollingBack: "Updating"
        case .deleting, .deleted: "Deleting"
        }
    }

    /// One instance's `instanceView`.
    func instanceView(_ vm: InstanceView) -> JSON {
        let health = Self.healthCode(vm.health)
        let state = Self.provisioning(vm.lifecycle)
        var statuses: [JSON] = [.object(["code": .string("ProvisioningState/\(state.lowercased())"), "level": .string("Info"),
                                         "displayStatus": .string("Provisioning \(state.lowercased())")])]
        switch vm.lifecycle {
        case .running, .upgrading:
            statuses.append(.object(["code": .string("PowerState/running"), "level": .string("Info"), "displayStatus": .string("VM running")]))
        case .stopped:
            statuses.append(.object(["code": .string("PowerState/stopped"), "level": .string("Info"), "displayStatus": .string("VM stopped")]))
        case .deallocated:
            statuses.append(.object(["code": .string("PowerState/deallocated"), "level": .string("Info"), "displayStatus": .string("VM deallocated")]))
        case .creating, .rollingBack, .deleting, .deleted: break
        }
        return .object([
            "platformUpdateDomain": .int(vm.updateDomain),
            "platformFaultDomain": .int(vm.faultDomain),
            "computerName": .string("\(scaleSet.name)\(String(repeating: "0", count: max(0, 6 - String(vm.id, radix: 36).count)))\(String(vm.id, radix: 36))"),
            "vmHealth": .object(["status": .object(["code": .string(health.code), "level": .string(health.level),
                                                    "displayStatus": .string("The VM is \(vm.health.rawValue.lowercased())")])]),
            "statuses": .array(statuses),
        ])
    }

    /// One `VirtualMachineScaleSetVM`, with its instance view when `expand`.
    func vm(_ vm: InstanceView, expand: Bool) -> JSON {
        var properties: [String: JSON] = [
            "latestModelApplied": .bool(vm.latestModelApplied),
            "provisioningState": .string(Self.provisioning(vm.lifecycle)),
            "vmId": .string(Self.uuid(vm.id + 1)),
            "protectionPolicy": .object(["protectFromScaleIn": .bool(vm.protectFromScaleIn),
                                         "protectFromScaleSetActions": .bool(vm.protectFromScaleSetActions)]),
            "hardwareProfile": .object(["vmSize": .string(vmSize)]),
            "storageProfile": .object(["imageReference": imageReference]),
        ]
        if expand { properties["instanceView"] = instanceView(vm) }
        var root: [String: JSON] = ["id": .string("\(id)/virtualMachines/\(vm.id)"), "name": .string(vm.name), "instanceId": .string("\(vm.id)"),
                                    "type": .string("Microsoft.Compute/virtualMachineScaleSets/virtualMachines"),
                                    "location": .string(scaleSet.location),
                                    "sku": .object(["name": .string(vmSize), "tier": .string(model["sku.tier"] ?? "Standard")]),
                                    "properties": .object(properties)]
        if let zone = vm.zone { root["zones"] = .array([.string(zone)]) }
        return .object(root)
    }

    /// `GET …/instanceView` of the scale set: how many instances are in each provisioning state, the extension's.
    var scaleSetInstanceView: JSON {
        var counts: [String: Int] = [:]
        for vm in instances { counts["ProvisioningState/\(Self.provisioning(vm.lifecycle).lowercased())", default: 0] += 1 }
        let summary = counts.keys.sorted().map { JSON.object(["code": .string($0), "count": .int(counts[$0]!)]) }
        var healthCounts: [String: Int] = [:]
        for vm in instances { healthCounts[Self.healthCode(vm.health).code, default: 0] += 1 }
        let extensionSummary = healthCounts.keys.sorted().map { JSON.object(["code": .string($0), "count": .int(healthCounts[$0]!)]) }
        var root: [String: JSON] = [
            "virtualMachine": .object(["statusesSummary": .array(summary)]),
            "statuses": .array([.object(["code": .string("ProvisioningState/\(provisioningState.lowercased())"), "level": .string("Info"),
                                         "displayStatus": .string("Provisioning \(provisioningState.lowercased())")])]),
        ]
        if scaleSet.healthExtension != nil {
            root["extensions"] = .array([.object(["name": .string("HealthExtension"), "statusesSummary": .array(extensionSummary)])])
        }
        return .object(root)
    }
}
