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
        if isServing(instance) { meter.servingChanged(by: 1) }
        if lifecycle == .running { startProbing(id) }
        return id
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

    func probe(_ id: Int) throws {
        guard setup.probing else { return }
        guard instances[id].lifecycle == .running || instances[id].lifecycle == .upgrading else { return }
        counters.probes += 1
        if counters.probes > limits.probes { reachLimit("probes", limits.probes, detail: "") }
        let reply: ProbeReply
        if let health = behaviours.health {
            let all = instances  // one buffer retain; the element is then lent, not copied
            reply = try health.probe(all[id], at: now)
        } else {
            reply = .structured(state: "Healthy", metrics: nil)
        }
        let result = setup.judge.evaluate(reply, strictWire: setup.strictWire)
        if !result.diagnostics.isEmpty { warn(result.diagnostics, about: id) }
        probes.last[id] = result
        let before = instances[id].health.state
        let change = updateInstance(id) { $0.health.record(result.state, at: now) }
        queue.schedule(.probe(id: id, generation: probes.generation[id]), at: now + setup.probeInterval)
        if let change {
            emit(.healthChanged(from: before, to: instances[id].health.state, reason: change), instance: id)
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
        if let run = rolling { try perform(run.healthChanged(id, self)) }
    }
}
