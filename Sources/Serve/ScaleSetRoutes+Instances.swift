import Formats
import HTTPTypes
import Scenario
import UpgradeEngine

/// Instance actions a pipeline calls besides upgrades: delete instances (of the set, one VM)
/// and instance protection (a PUT of the VM's `protectionPolicy`).
extension ScaleSetRoutes {
    static let instanceActions: [ScaleSetRoute] = [
        // VirtualMachineScaleSets_DeleteInstances: `{"instanceIds": [...]}`, required; `["*"]`
        // deletes every instance not already going.
        ScaleSetRoute(.post, "delete") { c, run in
            let ids = try instanceIDs(c.body, required: "delete")
            return try delete(c, run, ids: ids ?? run.instances.filter(\.isMember).map(\.id))
        },
        // VirtualMachineScaleSetVMs_Delete.
        ScaleSetRoute(.delete, "virtualMachines/{id}") { c, run in try delete(c, run, ids: [try c.instance(in: run.shapes(id: c.id)).id]) },
        // VirtualMachineScaleSetVMs_Update: `properties.protectionPolicy` is applied, every other field must say what
        // GET shows (else 400 naming it); the VM as it is now is answered.
        ScaleSetRoute(.put, "virtualMachines/{id}") { c, run in
            let shapes = run.shapes(id: c.id)
            let vm = try c.instance(in: shapes)
            let policy = c.body?.field("properties")?.field("protectionPolicy")
            if let body = c.body {
                let unapplied = UpdateFields.vm.problems(body, served: shapes.vm(vm, expand: false))
                if !unapplied.isEmpty { throw ARMError.invalid(ValidationFailure(unapplied)) }
            }
            let scaleIn = try flag(policy, "protectFromScaleIn") ?? vm.protectFromScaleIn
            let actions = try flag(policy, "protectFromScaleSetActions") ?? vm.protectFromScaleSetActions
            if scaleIn != vm.protectFromScaleIn || actions != vm.protectFromScaleSetActions {
                try run.perform(.protect(id: vm.id, fromScaleIn: scaleIn, fromScaleSetActions: actions))
            }
            let after = run.shapes(id: c.id)
            return Answer(body: after.vm(try c.instance(in: after), expand: false), headers: lroHeaders(c, op: run.begin(.immediate), location: false))
        },
    ]

    /// Deletes `ids`; the operation ends once they are gone.
    private static func delete(_ c: ScaleSetCall, _ run: isolated ServedRun, ids: [Int]) throws(ARMError) -> Answer {
        let shapes = run.shapes(id: c.id)
        for id in ids where !shapes.instances.contains(where: { $0.id == id }) {
            throw ARMError.resourceNotFound("Microsoft.Compute/virtualMachineScaleSets/virtualMachines", "\(shapes.scaleSet.name)/\(id)", group: c.resourceGroup)
        }
        try run.perform(.deleteInstances(ids: ids))
        return accepted(c, op: run.begin(.instances(ids)))
    }

    /// A boolean of `protectionPolicy`; nil when absent.
    private static func flag(_ policy: JSON?, _ name: String) throws(ARMError) -> Bool? {
        guard let value = policy?.field(name) else { return nil }
        guard case .bool(let flag) = value else {
            throw ARMError(.badRequest, code: "InvalidParameter", message: "\(name) is \(value.kindName); expected true or false",
                           target: "properties.protectionPolicy.\(name)")
        }
        return flag
    }
}
