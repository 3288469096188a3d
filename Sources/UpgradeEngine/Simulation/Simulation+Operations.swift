import Formats

/// Operations on instances (upgrade, create, delete, rollback): start, fault decision, finish.
extension Simulation {
    // MARK: Operations

    /// Starts `kind` on instance `id`. The fault injector decides failure and duration.
    func beginOperation(_ kind: OperationKind, on id: Int, targetVersion: Int, upgrade: Int?) throws {
        let outcome = try setup.behaviours.faults?.outcome(of: kind, on: fleet.instances[id], at: now) ?? OperationOutcome()
        let timings = definition.timings
        let disruptive: Bool
        let duration: Millis
        switch kind {
        case .upgrade:
            disruptive = ChangeRules.isDisruptive(from: models[fleet.instances[id].modelVersion - 1], to: models[targetVersion - 1])
            duration = disruptive ? timings.disruptiveUpgrade : timings.inPlaceUpgrade
        case .rollback:
            disruptive = true
            duration = timings.rollback
        case .reimage:
            disruptive = true
            duration = timings.disruptiveUpgrade
        case .create:
            disruptive = false
            duration = timings.create
        case .delete:
            disruptive = false
            duration = timings.delete
        }
        counters.operationTokens += 1
        let op = PendingOperation(kind: kind, token: counters.operationTokens, fail: outcome.fail, targetVersion: targetVersion,
                                  disruptive: disruptive, upgrade: upgrade,
                                  batch: upgrade.flatMap { upgrades.outline.number == $0 ? upgrades.outline.batchNumber : nil })
        fleet.operations[id] = op
        noteActivity()
        switch kind {
        case .upgrade, .rollback, .reimage:
            updateInstance(id) { vm in
                vm.lifecycle = kind == .rollback ? .rollingBack : .upgrading
                if disruptive { vm.health.restart(at: now) }
            }
            if disruptive { stopProbing(id) }
        case .delete:
            updateInstance(id) { $0.lifecycle = .deleting }
            stopProbing(id)
        case .create: break
        }
        let took = max(0, outcome.duration ?? duration)
        let replaces = kind == .create ? fleet.instances[id].replaces : nil
        emit(.operationStarted(OperationFacts(kind: kind, name: fleet.instances[id].name, targetVersion: targetVersion, disruptive: disruptive,
                                              duration: took, willFail: outcome.fail, replaces: replaces)),
             instance: id, batch: op.batch)
        clock.queue.schedule(.operationDone(id: Int32(id), token: Int32(truncatingIfNeeded: op.token)), at: now + took)
    }

    func finishOperation(_ id: Int, _ op: PendingOperation) throws {
        let succeeded = !op.fail
        switch op.kind {
        case .upgrade, .rollback, .reimage:
            let before = fleet.instances[id].modelVersion
            updateInstance(id) { vm in
                vm.lifecycle = .running
                if succeeded { vm.modelVersion = op.targetVersion }
                if op.disruptive { vm.health.restart(at: now) }
                vm.lastOperation = OperationRecord(kind: op.kind, succeeded: succeeded, endedAt: now, restarted: op.disruptive)
            }
            let extensionMoved = healthExtensionMoved(id, from: before)
            if op.disruptive || extensionMoved { startProbing(id) }
        case .create:
            if succeeded {
                updateInstance(id) { vm in
                    vm.lifecycle = .running
                    vm.health.restart(at: now)
                    vm.lastOperation = OperationRecord(kind: .create, succeeded: true, endedAt: now, restarted: true)
                }
                startProbing(id)
            } else {
                removeInstance(id)
            }
        case .delete:
            removeInstance(id)
        }
        emit(.operationFinished(kind: op.kind, name: fleet.instances[id].name, succeeded: succeeded), instance: id, batch: op.batch)
        repairsSawOperationEnd(id)
        if let number = op.upgrade, upgrades.outline.number == number {
            try drive { $0.operationFinished(id, succeeded: succeeded, kind: op.kind, self) }
        }
        try startPendingUpgradeIfReady()
    }

    func removeInstance(_ id: Int) {
        let vm = fleet.instances[id]
        guard vm.lifecycle != .deleted else { return }
        updateInstance(id) { $0.lifecycle = .deleted }
        fleet.spreader.remove(zone: vm.zone, faultDomain: vm.faultDomain, updateDomain: vm.updateDomain)
        stopProbing(id)
        emit(.instanceDeleted(name: vm.name), instance: id)
    }

    /// Instances that exist and run (not being created, deleted or already gone).
    var presentInstances: [Instance] { fleet.instances.filter(\.isPresent) }
}
