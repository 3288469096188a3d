import HTTPTypes
import Scenario
import UpgradeEngine

/// Power actions (VirtualMachineScaleSets_Restart, _PowerOff, _Deallocate, _Start, and the
/// VirtualMachineScaleSetVMs ones of one VM): `{"instanceIds": [...]}` optional (none, or an
/// empty list: every instance); 202 with the operation's headers, the operation done at once
/// (a boot goes on in the instance's health, not in the operation). An id that is not an
/// instance of the scale set is 404 `ResourceNotFound`; the engine's refusal (a protected
/// instance named in a scale-set-wide call) is 409. A per-VM call acts on a protected VM too.
extension ScaleSetRoutes {
    static let power: [ScaleSetRoute] = [
        ScaleSetRoute(.post, "restart") { c, run in try act(c, run, ids: try listed(c, run)) { .restart(ids: $0) } },
        ScaleSetRoute(.post, "poweroff") { c, run in try act(c, run, ids: try listed(c, run)) { .stop(ids: $0, deallocate: false) } },
        ScaleSetRoute(.post, "deallocate") { c, run in try act(c, run, ids: try listed(c, run)) { .stop(ids: $0, deallocate: true) } },
        ScaleSetRoute(.post, "start") { c, run in try act(c, run, ids: try listed(c, run)) { .start(ids: $0) } },
        ScaleSetRoute(.post, "virtualMachines/{id}/restart") { c, run in try onInstance(c, run, .restart) },
        ScaleSetRoute(.post, "virtualMachines/{id}/poweroff") { c, run in try onInstance(c, run, .stop(deallocate: false)) },
        ScaleSetRoute(.post, "virtualMachines/{id}/deallocate") { c, run in try onInstance(c, run, .stop(deallocate: true)) },
        ScaleSetRoute(.post, "virtualMachines/{id}/start") { c, run in try onInstance(c, run, .start) },
    ]

    /// The body's `instanceIds` (nil: every instance), each an instance of the scale set.
    private static func listed(_ c: ScaleSetCall, _ run: isolated ServedRun) throws(ARMError) -> [Int]? {
        guard let ids = try instanceIDs(c.body) else { return nil }
        let shapes = run.shapes(id: c.id)
        for id in ids where !shapes.instances.contains(where: { $0.id == id && $0.isMember }) {
            throw ARMError.resourceNotFound("Microsoft.Compute/virtualMachineScaleSets/virtualMachines", "\(shapes.scaleSet.name)/\(id)", group: c.resourceGroup)
        }
        return ids
    }

    /// The action on the VM the path names, protected from scale set actions or not (a call on
    /// the instance itself); 202, the operation succeeded at once.
    private static func onInstance(_ c: ScaleSetCall, _ run: isolated ServedRun, _ action: InstanceAction) throws(ARMError) -> Answer {
        try run.perform(.onInstance(id: try c.instance(in: run.shapes(id: c.id)).id, action))
        return accepted(c, op: run.begin(.immediate))
    }

    /// Performs the action on `ids` as one step; 202, the operation succeeded at once.
    private static func act(_ c: ScaleSetCall, _ run: isolated ServedRun, ids: [Int]?, _ action: ([Int]?) -> SessionAction) throws(ARMError) -> Answer {
        try run.perform(action(ids))
        return accepted(c, op: run.begin(.immediate))
    }
}

extension InstanceView {
    /// Still one of the scale set's instances: neither deleted nor being deleted.
    var isMember: Bool { lifecycle != .deleting && lifecycle != .deleted }

    /// In no operation: running, stopped or deallocated.
    var isSettled: Bool { lifecycle == .running || lifecycle == .stopped || lifecycle == .deallocated }
}
