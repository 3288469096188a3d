/// Instances, their placement and their probes: the health state machine fed by the health source.
extension Simulation {
    // MARK: Instances and probes

    @discardableResult
    func addInstance(lifecycle: Lifecycle, version: Int, place: (zone: String?, faultDomain: Int, updateDomain: Int)?) -> Int {
        let id = instances.count
        if id >= limits.instances { reachLimit("instances", limits.instances, detail: "creating \(definition.name)_\(id)") }
        let spot: (zone: String?, faultDomain: Int, updateDomain: Int)
        if let place {
            spot = place
            spreader.add(zone: place.zone, faultDomain: place.faultDomain, updateDomain: place.updateDomain)
        } else {
            spot = spreader.place()
        }
        let settings = probeSettings ?? HealthExtensionSettings()
        var instance = Instance(id: id, name: "\(definition.name)_\(id)", zone: spot.zone, faultDomain: spot.faultDomain,
                                updateDomain: spot.updateDomain, modelVersion: version,
                                protectFromScaleSetActions: definition.protected.contains(id),
                                protectFromScaleIn: definition.protectedFromScaleIn.contains(id), lifecycle: lifecycle,
                                health: HealthTracker(settings: settings, startedAt: now))
        if probeSettings == nil { instance.health.markHealthyWithoutProbes() }
        instances.append(instance)
        probes.last.append(nil)
        probes.generation.append(0)
        servingMayHaveChanged(id, was: false, health: .initializing)
        if lifecycle == .running { startProbing(id) }
        return id
    }

    /// The fleet as a document listed it: its ids (gaps stand for instances deleted before the run),
    /// zones and domains, protections, and the instances not on the latest model running an
    /// older one (model version 1; the latest is 2).
    func startFleet(_ fleet: [ExistingInstance]) {
        let outOfDate = fleet.contains { !$0.latestModelApplied }
        if outOfDate {
            var previous = definition.model
            previous[ScaleSetDefinition.previousModelAttribute] = "true"
            models = [previous, definition.model]
        }
        let byID = Dictionary(fleet.map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
        let last = fleet.map(\.id).max() ?? -1
        instances.reserveCapacity(last + 1)
        for id in 0...max(0, last) where last >= 0 {
            guard let vm = byID[id] else {
                addGap()
                continue
            }
            let place = vm.faultDomain.map { (zone: vm.zone, faultDomain: $0, updateDomain: vm.updateDomain ?? 0) }
                ?? vm.zone.map { spreader.spot(inZone: $0) }
            let added = addInstance(lifecycle: .running, version: vm.latestModelApplied ? models.count : 1, place: place)
            updateInstance(added) {
                $0.protectFromScaleSetActions = $0.protectFromScaleSetActions || vm.protectFromScaleSetActions
                $0.protectFromScaleIn = $0.protectFromScaleIn || vm.protectFromScaleIn
            }
        }
    }

    /// An id the scale set no longer has (deleted before the run): kept so ids match the
    /// document's, never probed, placed nowhere.
    func addGap() {
        let id = instances.count
        instances.append(Instance(id: id, name: "\(definition.name)_\(id)", zone: nil, faultDomain: 0, updateDomain: 0, modelVersion: 1,
                                  protectFromScaleSetActions: false, protectFromScaleIn: false, lifecycle: .deleted,
                                  health: HealthTracker(settings: probeSettings ?? HealthExtensionSettings(), startedAt: now)))
        probes.last.append(nil)
        probes.generation.append(0)
    }

    /// (Re)starts setup.probing of instance `id` from now (its grace clock restarted with its health).
    func startProbing(_ id: Int) {
        probes.generation[id] += 1
        guard setup.probing else {
            updateInstance(id) { $0.health.markHealthyWithoutProbes() }
            return
        }
        // Grace is looked at only when a probe's result arrives (SPEC §3), so nothing else is
        // scheduled: the first probe is now.
        queue.schedule(.probe(id: id, generation: probes.generation[id]), at: now)
    }

    func stopProbing(_ id: Int) { probes.generation[id] += 1 }

    func probe(_ id: Int, health: (any HealthSource)?) throws {
        guard setup.probing else { return }
        guard instances[id].lifecycle == .running || instances[id].lifecycle == .upgrading else { return }
        counters.probes += 1
        if counters.probes > limits.probes { reachLimit("probes", limits.probes, detail: "") }
        // Lent by address: passing the element itself copies the instance for the call, and a
        // closure around the call retains the buffer and the source. The address stays valid
        // through the call: `instances` is held by the simulation, and a health source cannot act
        // on the simulation (scripts' actions are refused inside callbacks). Called through the
        // optional itself: binding it to a name would retain the source for every probe.
        let address = instances.withUnsafeBufferPointer { $0.baseAddress! + id }
        let reply = try health?.probe(lent: address, at: now) ?? .structured(state: "Healthy", metrics: nil)
        let state: HealthState
        if let verdict = setup.judge.quickVerdict(reply) {
            state = verdict
            probes.last[id] = LastProbe(state: verdict, metrics: nil, metricsDeferred: true)
        } else {
            let result = setup.judge.evaluate(reply, strictWire: setup.strictWire)
            if !result.diagnostics.isEmpty { warn(result.diagnostics, about: id) }
            probes.last[id] = LastProbe(state: result.state, metrics: result.metrics, metricsDeferred: result.metricsDeferred)
            state = result.state
        }
        let before = instances[id].health.state, wasServing = isServing(id)
        let change = instances[id].health.record(state, at: now)
        queue.schedule(.probe(id: id, generation: probes.generation[id]), at: now + setup.probeInterval)
        if let change {
            emit(.healthChanged(from: before, to: instances[id].health.state, reason: change), instance: id)
            servingMayHaveChanged(id, was: wasServing, health: before)
            try healthChanged(id)
        }
    }

    /// Reports each kind of wire oddity once per instance.
    func warn(_ diagnostics: [WireDiagnostic], about id: Int) {
        for diagnostic in diagnostics where counters.warned.insert("\(id)/\(diagnostic.kind.rawValue)").inserted {
            emit(.wireWarning(name: instances[id].name, message: diagnostic.message), instance: id)
        }
    }

    func healthChanged(_ id: Int) throws {
        if let run = upgrades.current { try perform(run.healthChanged(id, self)) }
    }
}
