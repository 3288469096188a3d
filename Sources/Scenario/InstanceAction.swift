import UpgradeEngine

/// An action a client calls on one instance of the scale set (`SessionAction.onInstance`).
public enum InstanceAction: Equatable, Sendable {
    case reimage, restart, start
    /// Power off (`deallocate` false) or deallocate.
    case stop(deallocate: Bool)

    /// The script function whose events the action gives.
    var name: SessionAction.Name {
        switch self {
        case .reimage: .reimage
        case .restart: .restart
        case .start: .start
        case .stop: .stop
        }
    }

    /// The scale set's action naming instances `ids` (a script has no per-instance call; the set's
    /// action refuses an instance protected from scale set actions, which this one does not).
    func onSet(ids: [Int]) -> SessionAction {
        switch self {
        case .reimage: .reimage(ids: ids)
        case .restart: .restart(ids: ids)
        case .start: .start(ids: ids)
        case .stop(let deallocate): .stop(ids: ids, deallocate: deallocate)
        }
    }

    /// Performs the action on instance `id` of `sim`, protected or not.
    func apply(to sim: Simulation, id: Int) throws {
        switch self {
        case .reimage: try sim.reimage(ids: [id], onInstance: true)
        case .restart: try sim.restart(ids: [id], onInstance: true)
        case .start: try sim.start(ids: [id], onInstance: true)
        case .stop(let deallocate): try sim.stop(ids: [id], deallocate: deallocate, onInstance: true)
        }
    }
}
