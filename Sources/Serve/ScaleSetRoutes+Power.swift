import HTTPTypes
import Scenario
import UpgradeEngine

/// Power actions (VirtualMachineScaleSets_Restart, _PowerOff, _Deallocate, _Start, and the
/// VirtualMachineScaleSetVMs ones of one VM): `{"instanceIds": [...]}` optional (none, or an
/// empty list: every instance); 202 with the operation's headers, the operation done at once
/// (a boot goes on in the instance's health, not in the operation). An id that is not an
/// instance of the scale set is 404 `ResourceNotFound`; the engine's refusal (a protected
/// instance named) is 409.
extension ScaleSetRoutes {
    static let power: [ScaleSetRoute] = [
        ScaleSetRoute(.post, "restart") { c, run in try act(c, run, ids: try listed(c, run)) { .restart(ids: $0) } },
        ScaleSetRoute(.post, "poweroff") { c, run in try act(c, run, ids: try listed(c, run)) { .stop(ids: $0, deallocate: false) } },
        ScaleSetRoute(.post, "deallocate") { c, run in try act(c, run, ids: try listed(c, run)) { .stop(ids: $0, deallocate: true) } },
        ScaleSetRoute(.post, "start") { c, run in try act(c, run, ids: try listed(c, run)) { .start(ids: $0) } },
        ScaleSetRoute(.post, "virtualMachines/{id}/restart") { c, run in try act(c, run, ids: try one(c, run)) { .restart(ids: $0) } },
        ScaleSetRoute(.post, "virtualMachines/{id}/poweroff") { c, run in try act(c, run, ids: try one(c, run)) { .stop(ids: $0, deallocate: false) } },
        ScaleSetRoute(.post, "virtualMachines/{id}/deallocate") { c, run in try act(c, run, ids: try one(c, run)) { .stop(ids: $0, deallocate: true) } },
        ScaleSetRoute(.post, "virtualMachines/{id}/start") { c, run in try act(c, run, ids: try one(c, run)) { .start(ids: $0) } },
    ]

    /// The body's `instanceIds` (nil: every instance), each an instance of the scale set.
    private static func listed(_ c: ScaleSetCall, _ run: isolated ServedRun) throws(ARMError) -> [Int]? {
        guard let ids = try instanceIDs(c.body) else { return nil }
        let shapes = run.shapes(id: c.id)
        for id in ids where !shapes.instances.contains(where: { $0.id == id }) {
            throw ARMError.resourceNotFound("Microsoft.Compute/virtualMachineScaleSets/virtualMachines", "\(shapes.scaleSet.name)/\(id)", group: c.resourceGroup)
        }
        return ids
    }

    /// The VM the path names.
    private static func one(_ c: ScaleSetCall, _ run: isolated ServedRun) throws(ARMError) -> [Int] {
        [try c.instance(in: run.shapes(id: c.id)).id]
    }

    /// Performs the action on `ids` as one step; 202, the operation succeeded at once.
    private static func act(_ c: ScaleSetCall, _ run: isolated ServedRun, ids: [Int]?, _ action: ([Int]?) -> SessionAction) throws(ARMError) -> Answer {
        try run.perform(action(ids))
        return accepted(c, op: run.begin(.immediate))
    }
}

extension InstanceView {
    /// In no operation: running, stopped or deallocated.
    var isSettled: Bool { lifecycle == .running || lifecycle == .stopped || lifecycle == .deallocated }
}
