public import Formats

/// The simulation's run loop and its events (its stored state is declared in
/// `Simulation+Unsafe.swift`, the types of its parts in `Simulation+State.swift`).
extension Simulation {
    /// Probe settings of the newest model (a load-balancer probe acts as binary http); nil when
    /// it has no health source.
    public var probeSettings: HealthExtensionSettings? { probeSettings(ofVersion: modelVersion) }
    /// The newest model version.
    public var modelVersion: Int { models.count }
    /// Whether a health source that answers runs of probes is asked for them (the default), or
    /// for one probe at a time. The events are the same either way.
    public var asksForProbeRuns: Bool {
        get { probes.runs }
        set { probes.runs = newValue }
    }

    /// Judge custom metrics sent as an object as Azure's extension does (Unknown).
    public var strictWire: Bool {
        get { probes.plan.strictWire }
        set { probes.plan.strictWire = newValue }
    }
    /// Bounds on the run as a whole.
    public var limits: RunLimits {
        get { setup.limits }
        set { setup.limits = newValue }
    }
    /// Receives every event as it happens.
    public var onEvent: ((Event) -> Void)? {
        get { setup.observers.onEvent }
        set { setup.observers.onEvent = newValue }
    }
    /// Told the plan of each rolling upgrade as it starts.
    public var onRollingUpgradeStart: ((UpgradePlan) -> Void)? {
        get { setup.observers.onRollingUpgradeStart }
        set { setup.observers.onRollingUpgradeStart = newValue }
    }
    /// An operation in flight on one instance.
    struct PendingOperation {
        var kind: OperationKind
        var token: Int
        var fail: Bool
        var targetVersion: Int
        var disruptive: Bool
        /// The rolling upgrade that started it, if any.
        var upgrade: Int?
        /// The batch of that upgrade it belongs to.
        var batch: Int?
    }

    /// Builds the scale set (validated whole first) with its instances at time 0, each just
    /// started (Initializing) and probed from time 0.
    public convenience init(_ definition: ScaleSetDefinition, health: (any HealthSource)? = nil, phases: (any PhaseSource)? = nil,
                            faults: (any FaultInjector)? = nil, deferrals: (any DeferralSource)? = nil) throws(ValidationFailure) {
        let problems = definition.validate()
        guard problems.isEmpty else { throw ValidationFailure(problems) }
        let probeSettings = definition.healthExtension ?? (definition.loadBalancerProbe ? Self.loadBalancerProbeSettings : nil)
        self.init(validated: definition,
                  plan: ProbePlan(interval: (probeSettings?.intervalInSeconds ?? 5) * 1000, probing: probeSettings != nil,
                                  judge: ProbeJudge(probeSettings ?? HealthExtensionSettings()),
                                  extensions: [definition.healthExtension], byVersion: [probeSettings.map(ProbeConfig.init)]),
                  setup: RunSetup(behaviours: Behaviours(health: health, phases: phases, faults: faults, deferrals: deferrals)))
        if let fleet = definition.fleet {
            startFleet(fleet)
        } else {
            fleet.instances.reserveCapacity(definition.capacity)
            for _ in 0..<definition.capacity { addInstance(lifecycle: .running, version: 1, place: nil) }
        }
    }

    // MARK: Running

    /// Schedules `body` at `time` (milliseconds). An `EngineError` it throws becomes an
    /// `actionFailed` event; any other error ends the run.
    public func schedule(at time: Millis, name: String, _ body: @escaping (Simulation) throws -> Void) {
        guard script.list.count < limits.actions else {
            reachLimit("actions", limits.actions, detail: "scheduling \(name)")
            return
        }
        script.list.append((name, body))
        script.left += 1
        clock.queue.schedule(.action(index: Int32(script.list.count - 1)), at: max(0, time))
    }

    /// Ends `run` after the current event (e.g. once a plan has been seen).
    public func stop() { clock.stopped = true }

    /// Whether anything is left that can change the outcome.
    var hasWork: Bool {
        guard !stalledOnApproval else { return false }
        return script.left > 0 || !fleet.operations.isEmpty || upgrades.pending != nil || upgrades.outline.code == .rollingForward
            || upgrades.outline.isWorking || hooks.active != nil
            || repairs.checkAt != nil || !repairs.settling.isEmpty || isBooting
    }

    /// Runs until no upgrade runs, no operation is in flight and no action is left, or until
    /// `limit` milliseconds. Errors thrown by behaviours or actions (other than `EngineError`)
    /// end the run and propagate.
    @discardableResult
    public func run(until limit: Millis = 7 * 86_400_000) throws -> RunSummary {
        clock.stopped = false
        try handle(through: limit, whileWorking: true, stoppable: true)
        // Work left past the limit: the run stops at it.
        let hitLimit = hasWork && !clock.stopped && clock.queue.nextTime != nil
        if meter.start != nil { advanceClock(to: now) }
        emit(.runEnded(hitTimeLimit: hitLimit))
        return summary(hitLimit: hitLimit)
    }

    /// The one event loop: handles, in order, what is scheduled up to `time` (while work is left,
    /// with `whileWorking`; until `stop`, when `stoppable`), ending with the first run limit reached.
    func handle(through time: Millis, whileWorking: Bool, stoppable: Bool) throws {
        // Held once for the whole loop: loading it for every probe would retain and release it.
        let health = setup.behaviours.health, runs = asksInRuns(health)
        while !whileWorking || hasWork, !stoppable || !clock.stopped, let next = clock.queue.nextTime, next <= time {
            let (at, what) = clock.queue.pop()!
            advanceClock(to: at)
            try dispatch(what, health: health, runs: runs)
            if let reached = counters.limitReached { throw reached }
        }
    }

    func summary(hitLimit: Bool) -> RunSummary {
        let availability = meter.availability(at: now)
        return RunSummary(endTime: now, status: status, skipped: upgrades.current?.skipped ?? [], protected: upgrades.current?.protected ?? [],
                          availability: availability, hitTimeLimit: hitLimit, probes: counters.probes, capacity: capacity,
                          rollbackFailed: upgrades.current?.rollbackFailed.sorted() ?? [], rolledBack: upgrades.current?.rolledBack ?? 0,
                          awaitingApproval: upgrades.current?.untilApproved.sorted() ?? [], osUpgradeHistory: osUpgradeHistory,
                          failed: upgrades.current?.failed ?? [], upgradeStarted: upgrades.current?.terms.startTime,
                          upgradeEnded: upgrades.current?.endTime, hooks: hookSummary)
    }

    /// Instances serving now (running and committed Healthy).
    public var servingCount: Int { meter.serving }

    /// The latest rolling upgrade as `get-latest` reports it.
    public var status: RollingUpgradeStatus? { upgrades.current.map(statusOf) }

    /// Whether probes go to `health` in runs (`probeRun`): it answers them, the engine asks for
    /// them, and a named state is the verdict.
    func asksInRuns(_ health: (any HealthSource)?) -> Bool { probes.runs && probes.plan.judge.namesStates && health?.answersRuns == true }

    /// Handles one scheduled thing; `health` is the scenario's health source, held by the caller,
    /// and `runs` what `asksInRuns` says of it.
    func dispatch(_ what: Scheduled, health: (any HealthSource)?, runs: Bool) throws {
        switch what {
        case .probe(let narrow, let generation):
            let id = Int(narrow)
            guard Int32(truncatingIfNeeded: probes.generation[id]) == generation else { return }
            try probeDue(id, health: health, runs: runs)
        case .probeTimedOut(let narrow, let generation):
            let id = Int(narrow)
            guard Int32(truncatingIfNeeded: probes.generation[id]) == generation else { return }
            try takeTimeout(id)
        case .operationDone(let narrow, let token):
            let id = Int(narrow)
            guard let op = fleet.operations[id], Int32(truncatingIfNeeded: op.token) == token else { return }
            fleet.operations[id] = nil
            try finishOperation(id, op)
        case .action(let narrow):
            let index = Int(narrow)
            script.left -= 1
            let action = script.list[index]
            script.list[index].body = { _ in }  // run once: its closure (and what it holds) can go
            do {
                try action.body(self)
            } catch let error as EngineError {
                emit(.actionFailed(action: action.name, message: error.message))
            }
        case .resume(let number):
            guard upgrades.outline.number == Int(number) else { return }
            try drive { $0.resume(self) }
        case .settle(let number):
            guard upgrades.outline.number == Int(number) else { return }
            try drive { $0.settle(self) }
        case .approve(let number, let narrow):
            let id = Int(narrow)
            guard upgrades.outline.number == Int(number), upgrades.current?.deferred.contains(id) == true else { return }
            try drive { $0.approve(id, byAction: false) }
        case .hookDeadline(let number):
            try hookDeadlineDue(Int(number))
        case .hookAnswer(let index):
            try delayedHookAnswerDue(Int(index))
        case .repairCheck:
            try repairCheckDue()
        }
    }

    // MARK: Events and availability

    func emit(_ payload: Payload, instance: Int? = nil, batch: Int? = nil, phase: Int? = nil) {
        counters.events &+= 1
        if counters.events > limits.events { reachLimit("events", limits.events, detail: "") }
        setup.observers.onEvent?(Event(time: now, instance: instance, batch: batch, phase: phase, payload))
    }

    /// Notes the first run-level limit reached; `run` ends with it after the current event.
    func reachLimit(_ limit: String, _ allowed: Int, detail: String) {
        if counters.limitReached == nil { counters.limitReached = RunLimitExceeded(limit: RunLimit(rawValue: limit)!, allowed: allowed, time: now, detail: detail) }
    }

    func isServing(_ instance: borrowing Instance) -> Bool {
        Self.serves(instance.lifecycle, instance.health.state)
    }

    static func serves(_ lifecycle: Lifecycle, _ state: HealthState) -> Bool {
        (lifecycle == .running || lifecycle == .upgrading) && state == .healthy
    }

    /// Whether instance `id` serves, read field by field (no copy of the instance).
    func isServing(_ id: Int) -> Bool { Self.serves(fleet.instances[id].lifecycle, fleet.instances[id].health.state) }

    /// Applies `change` to instance `id`, keeping the serving count right and recording a health
    /// state it changed (a restart's Initializing, the Healthy of an instance no health source
    /// reports on) as a probe's change is. Returns what `change` returns.
    @discardableResult
    func updateInstance<R>(_ id: Int, _ change: (inout Instance) -> R) -> R {
        let before = isServing(id), health = fleet.instances[id].health.state
        let result = change(&fleet.instances[id])
        let after = fleet.instances[id].health.state
        if after != health {
            let reason: HealthChangeReason = after == .initializing ? .restarted : fleet.instances[id].isPoweredOff ? .poweredOff : .noHealthSource
            emit(.healthChanged(from: health, to: after, reason: reason), instance: id)
        }
        servingMayHaveChanged(id, was: before, health: health)
        return result
    }

    /// Counts instance `id` entering or leaving service, if it did, and says so in an event.
    func servingMayHaveChanged(_ id: Int, was: Bool, health: HealthState) {
        let serving = isServing(id)
        guard serving != was else { return }
        meter.servingChanged(by: serving ? 1 : -1, at: now, capacity: capacity)
        let state = fleet.instances[id].health.state
        let reason: ServingReason = state != health ? .health(state) : .lifecycle(fleet.instances[id].lifecycle)
        emit(.servingChanged(serving: serving, count: meter.serving, reason: reason), instance: id)
    }

    func advanceClock(to time: Millis) {
        meter.advance(to: time, capacity: capacity)
        now = time
    }

    /// Marks the start of upgrade activity, from which availability is measured.
    func noteActivity() { meter.noteActivity(at: now, capacity: capacity) }

}

extension HealthTracker {
    /// Without any health source an instance counts as Healthy once it runs.
    mutating func markHealthyWithoutProbes() {
        _ = record(.healthy, at: startedAt)
    }
}
