/// What a client does to chosen instances: delete them, set their protection.
extension Simulation {
    /// Deletes `ids` (Azure's delete-instances): a scale-in of exactly these, protected or not
    /// (protection spares an instance from the scale set's own choices, not from a named
    /// delete); the capacity drops by their count. Refused whole when an id does not exist or
    /// is busy with another operation. Repeated ids are one instance.
    public func deleteInstances(ids: [Int]) throws {
        var seen = Set<Int>()
        let chosen = ids.filter { seen.insert($0).inserted }
        let missing = chosen.filter { $0 < 0 || $0 >= fleet.instances.count || !fleet.instances[$0].isPresent || fleet.instances[$0].lifecycle == .deleting }
        if !missing.isEmpty {
            throw EngineError("delete refused: instance(s) \(missing.map(String.init).joined(separator: ", ")) do not exist", .noSuchInstances(missing))
        }
        let busy = chosen.filter { fleet.operations[$0] != nil }.sorted()
        if !busy.isEmpty {
            throw EngineError("delete refused: instance(s) \(busy.map(String.init).joined(separator: ", ")) are in another operation; retry once it ends", .busy(busy))
        }
        guard !chosen.isEmpty else { return }
        let present = fleet.instances.count { $0.lifecycle != .deleted && $0.lifecycle != .deleting }
        capacity = max(0, capacity - chosen.count)
        emit(.scaled(from: present, to: present - chosen.count, deleted: chosen.sorted(), short: false))
        for id in chosen.sorted() { try beginOperation(.delete, on: id, targetVersion: fleet.instances[id].modelVersion, upgrade: nil) }
    }

    /// Sets instance `id`'s protection policy (`protectFromScaleIn`, `protectFromScaleSetActions`),
    /// as a PUT of the VM's `protectionPolicy` does; later scale-ins and upgrades see it.
    public func protect(id: Int, fromScaleIn: Bool, fromScaleSetActions: Bool) throws {
        guard id >= 0, id < fleet.instances.count, fleet.instances[id].isPresent else {
            throw EngineError("protect refused: instance \(id) does not exist", .noSuchInstances([id]))
        }
        fleet.instances[id].protectFromScaleIn = fromScaleIn
        fleet.instances[id].protectFromScaleSetActions = fromScaleSetActions
    }
}
