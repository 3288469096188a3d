import Formats

/// Instances, their placement and their probes: the health state machine fed by the health source.
extension Simulation {
    // MARK: Instances and probes

    @discardableResult
    func addInstance(lifecycle: Lifecycle, version: Int, place: (zone: String?, faultDomain: Int, updateDomain: Int)?, name: String? = nil) -> Int {
        let id = fleet.instances.count
        if id >= limits.instances { reachLimit("instances", limits.instances, detail: "creating \(definition.name)_\(id)") }
        let spot: (zone: String?, faultDomain: Int, updateDomain: Int)
        if let place {
            spot = place
            fleet.spreader.add(zone: place.zone, faultDomain: place.faultDomain, updateDomain: place.updateDomain)
        } else {
            spot = fleet.spreader.place()
        }
        let settings = probeSettings(ofVersion: version)
        var instance = Instance(id: id, name: name ?? "\(definition.name)_\(id)", zone: spot.zone, faultDomain: spot.faultDomain,
                                updateDomain: spot.updateDomain, modelVersion: version,
                                protectFromScaleSetActions: definition.protected.contains(id),
                                protectFromScaleIn: definition.protectedFromScaleIn.contains(id), lifecycle: lifecycle,
                                health: HealthTracker(settings: settings ?? HealthExtensionSettings(), startedAt: now))
        if settings == nil { instance.health.markHealthyWithoutProbes() }
        fleet.instances.append(instance)
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
            models = [previous]
            appendModel(definition.model, extension: definition.healthExtension)
        }
        let byID = Dictionary(fleet.map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
        let last = fleet.map(\.id).max() ?? -1
        self.fleet.instances.reserveCapacity(last + 1)
        for id in 0...max(0, last) where last >= 0 {
            guard let vm = byID[id] else {
                addGap()
                continue
            }
            let place = vm.faultDomain.map { (zone: vm.zone, faultDomain: $0, updateDomain: vm.updateDomain ?? 0) }
                ?? vm.zone.map { self.fleet.spreader.spot(inZone: $0) }
            let added = addInstance(lifecycle: .running, version: vm.latestModelApplied ? models.count : 1, place: place, name: vm.name)
            updateInstance(added) {
                $0.protectFromScaleSetActions = $0.protectFromScaleSetActions || vm.protectFromScaleSetActions
                $0.protectFromScaleIn = $0.protectFromScaleIn || vm.protectFromScaleIn
            }
        }
    }

    /// An id the scale set no longer has (deleted before the run): kept so ids match the
    /// document's, never probed, placed nowhere.
    func addGap() {
        let id = fleet.instances.count
        fleet.instances.append(Instance(id: id, name: "\(definition.name)_\(id)", zone: nil, faultDomain: 0, updateDomain: 0, modelVersion: 1,
                                  protectFromScaleSetActions: false, protectFromScaleIn: false, lifecycle: .deleted,
                                  health: HealthTracker(settings: HealthExtensionSettings(), startedAt: now)))
        probes.last.append(nil)
        probes.generation.append(0)
    }

    /// (Re)starts probing instance `id` from now (its grace clock restarted with its health),
    /// when the model it runs has a health source.
    func startProbing(_ id: Int) {
        probes.generation[id] += 1
        guard reportsHealth(id) else {
            updateInstance(id) { $0.health.markHealthyWithoutProbes() }
            return
        }
        // Grace is looked at only when a probe's result arrives (SPEC §3), so nothing else is
        // scheduled: the first probe is now.
        clock.queue.schedule(.probe(id, generation: probes.generation[id]), at: now)
    }

    func stopProbing(_ id: Int) { probes.generation[id] += 1 }

    func probe(_ id: Int, health: (any HealthSource)?) throws {
        guard probes.plan.probing, isProbed(id) else { return }
        countProbe()
        // Lent in place (`lend`): passing the element itself copies the instance for the call.
        // Called through the optional itself: binding it to a name would retain the source for
        // every probe.
        let reply = try health?.probe(lent: lend(id), at: now) ?? .structured(state: "Healthy", metrics: nil)
        try take(reply, from: id)
    }

    /// Probes instance `id` and the probes queued right after it at this instant, as one run
    /// asked of `health`. The result is the same as probing them one by one: each probe that
    /// answers the state its instance is in changes nothing the source can see (no event, no
    /// table, no callback), so its bookkeeping may follow the run; the first probe that answers
    /// anything else ends the run and is handled in full before the probes after it, which go
    /// back to the clock.queue.
    func probeRun(_ id: Int, health: any HealthSource) throws {
        guard probes.plan.probing, isProbed(id) else { return }
        // An instance whose answer may change something ends a run: alone, it is probed alone.
        guard let quiet = quietState(id) else { return try probe(id, health: health) }
        let buffers = probes.run
        buffers.set(0, id: id, expected: quiet, taken: 0)
        var count = 1, taken = 0
        let lookahead = ProbeLookahead(instances: fleet.instances, last: probes.last, generations: probes.generation)
        // The probe that reaches the probe limit ends the run, as it ends the loop.
        let allowance = max(1, min(RunBuffers.capacity - 1, limits.probes - counters.probes) + 1)  // no `+ 1` on a limit of Int.max
        while count < allowance, let next = clock.queue.popProbe() {
            taken += 1
            if let later = clock.queue.probeID(ahead: ProbeLookahead.distance) { lookahead.prefetch(later) }
            guard Int32(truncatingIfNeeded: probes.generation[next.id]) == next.generation, isProbed(next.id) else { continue }
            let state = quietState(next.id)
            buffers.set(count, id: next.id, expected: state, taken: taken)
            count += 1
            if state == nil { break }
        }
        let lent = lendRun(count: count)
        var run = ProbeRun(lent, time: now)
        health.probe(run: &run)
        let matched = run.matched
        settle(lent, matched: matched)
        guard matched < count else { return }
        let after = taken - buffers.taken(at: matched)
        switch run.stop {
        case .none:  // a source that clock.stopped without saying why: the rest is probed again
            clock.queue.unpop(after + 1)
        case .answered(let reply):
            clock.queue.unpop(after)
            countProbe()
            try take(reply, from: lent[matched])
        case .failed(let error):
            clock.queue.unpop(after)
            countProbe()
            throw error
        }
    }

    /// The bookkeeping of the first `matched` probes of `run`, which each answered the state its
    /// instance is in: what `take` does with such an answer (the probe counted and kept, the
    /// instance's pending change forgotten, its next probe scheduled), in one pass.
    private func settle(_ run: LentProbes, matched: Int) {
        guard matched > 0 else { return }
        counters.probes += matched
        if counters.probes > limits.probes { reachLimit("probes", limits.probes, detail: "") }
        settleInPlace(run, matched: matched)
        clock.queue.scheduleProbes(run.prefix(matched), generations: probes.generation, at: now + probes.plan.interval)
    }

    /// Instance `id` is probed: it runs or is being upgraded.
    private func isProbed(_ id: Int) -> Bool { fleet.instances[id].lifecycle == .running || fleet.instances[id].lifecycle == .upgrading }

    private func countProbe() {
        counters.probes += 1
        if counters.probes > limits.probes { reachLimit("probes", limits.probes, detail: "") }
    }

    /// The state whose answer would change nothing for instance `id`: the committed Healthy or
    /// Unhealthy (an Initializing or Unknown instance may change on any answer).
    private func quietState(_ id: Int) -> HealthState? {
        let state = fleet.instances[id].health.state
        return state == .healthy || state == .unhealthy ? state : nil
    }

    /// Instance `id`'s answer to the probe made now: judged, recorded, the next probe scheduled.
    /// Every model probed as the first reads the setup's judge and interval; otherwise the
    /// instance's model's (`probeConfig`).
    @inline(__always)
    private func take(_ reply: ProbeReply, from id: Int) throws {
        guard probes.plan.uniformProbing else {
            let config = probeConfig(of: id)
            // A source that keeps metrics for later (made for the first model's rich states) says
            // nothing of metrics sent to a model whose extension reports binary states or tcp.
            let keptForLater = probes.plan.judge.namesStates && !config.judge.namesStates
            return try take(keptForLater ? reply.forgettingKeptMetrics : reply, from: id, config)
        }
        try take(reply, from: id, ProbeConfig(judge: probes.plan.judge, interval: probes.plan.interval))
    }

    @inline(__always)
    private func take(_ reply: ProbeReply, from id: Int, _ config: ProbeConfig) throws {
        let state: HealthState
        if let verdict = config.judge.quickVerdict(reply) {
            state = verdict
            probes.last[id] = LastProbe(state: verdict, metrics: nil, metricsDeferred: true)
        } else {
            // A probe that gets no reply: its result comes when the extension's timeout ends.
            if case .timeout = reply {
                let generation = Int32(truncatingIfNeeded: probes.generation[id])
                return clock.queue.schedule(.probeTimedOut(id: Int32(id), generation: generation), at: now + probeTimeout)
            }
            let result = judged(reply, by: config.judge)
            if !result.diagnostics.isEmpty { warn(result.diagnostics, about: id) }
            probes.last[id] = LastProbe(state: result.state, metrics: result.metrics, metricsDeferred: result.metricsDeferred)
            state = result.state
        }
        try commit(state, of: id, nextProbeAt: now + config.interval)
    }

    /// The result of instance `id`'s probe that got no reply, 30 s after it started: judged as
    /// the extension judges a timeout, grace looked at now, and the next probe starts at once.
    func takeTimeout(_ id: Int) throws {
        let state = probeConfig(of: id).judge.evaluate(.timeout, strictWire: false).state
        probes.last[id] = LastProbe(state: state, metrics: nil, metricsDeferred: false)
        try commit(state, of: id, nextProbeAt: now)
    }

    /// Records probe result `state` of instance `id` now and schedules its next probe.
    @inline(__always)
    private func commit(_ state: HealthState, of id: Int, nextProbeAt next: Millis) throws {
        let before = fleet.instances[id].health.state, wasServing = isServing(id)
        let change = fleet.instances[id].health.record(state, at: now)
        clock.queue.schedule(.probe(id, generation: probes.generation[id]), at: next)
        if let change {
            emit(.healthChanged(from: before, to: fleet.instances[id].health.state, reason: change), instance: id)
            servingMayHaveChanged(id, was: wasServing, health: before)
            try healthChanged(id)
        }
    }

    /// The verdict on `reply`, which depends on nothing else: an HTTP answer equal to the last
    /// one judged takes its verdict (the same body string compares by identity, at once).
    private func judged(_ reply: ProbeReply, by judge: ProbeJudge) -> ProbeResult {
        guard case .http(let status, let body) = reply else { return judge.evaluate(reply, strictWire: probes.plan.strictWire) }
        if let last = probes.lastHTTP, last.status == status, last.strictWire == probes.plan.strictWire, last.judge == judge, last.body == body {
            return last.result
        }
        let result = judge.evaluate(reply, strictWire: probes.plan.strictWire)
        probes.lastHTTP = (status, body, probes.plan.strictWire, judge, result)
        return result
    }

    /// Reports each kind of wire oddity once per instance.
    func warn(_ diagnostics: [WireDiagnostic], about id: Int) {
        for diagnostic in diagnostics where counters.warned.insert("\(id)/\(diagnostic.kind.rawValue)").inserted {
            emit(.wireWarning(name: fleet.instances[id].name, message: diagnostic.message), instance: id)
        }
    }

    func healthChanged(_ id: Int) throws {
        repairsSawHealth(id)
        // Most health changes concern no batch: the outline says so without touching the upgrade.
        guard upgrades.outline.code == .rollingForward, upgrades.outline.watching.contains(id) else { return }
        try drive { $0.healthChanged(id, self) }
    }
}
