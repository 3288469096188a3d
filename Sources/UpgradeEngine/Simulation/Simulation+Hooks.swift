import Formats

/// Lifecycle hooks on the virtual clock (SPEC §6b): an event is raised, the scenario's answer
/// source is asked at once (its answer may arrive later), answers from outside decide targets or
/// move `waitUntil`, and at `waitUntil` every target still Waiting gets the default action. The
/// event then completes and the platform goes on: the OS upgrade is scheduled (or not), or the
/// batch starts with its approved instances.
extension Simulation {
    /// The simulation's lifecycle hook state.
    struct HookState {
        /// The scale set's `lifecycleHooksProfile` now.
        var profile: [LifecycleHook]
        /// Every event raised, oldest first.
        var events: [LifecycleHookEvent] = []
        /// The index in `events` of the one event still Active.
        var active: Int?
        /// Answers that arrive later (`after`), by index; each arrives once.
        var delayed: [(event: Int, response: HookResponse)] = []
        /// The OS upgrade a scheduling event stands before.
        var scheduling: OSUpgradeTerms?
        /// Who answers each event as it is raised (a script's `on_hook`).
        var answers: (any HookAnswerSource)?
        /// Events whose waitUntil applied a default, and how many targets got it.
        var defaultedEvents = 0
        var defaultedTargets = 0
        /// Scheduling events that ended rejected.
        var rejectedSchedules = 0
    }

    /// The scale set's lifecycle hooks now (the definition's until changed).
    public var lifecycleHooks: [LifecycleHook] {
        get { hooks.profile }
        set { hooks.profile = newValue }
    }

    /// Who answers each lifecycle hook event as it is raised (nil: nobody; events wait).
    public var hookAnswers: (any HookAnswerSource)? {
        get { hooks.answers }
        set { hooks.answers = newValue }
    }

    /// Replaces the scale set's `lifecycleHooksProfile` (a PATCH of the scale set, `az vmss
    /// lifecycle-hook add/update/remove`): the next event raised uses it; an OS upgrade already
    /// running keeps the batch hook it started with. Refused whole with Azure's limits.
    public func setLifecycleHooks(_ profile: [LifecycleHook]) throws(EngineError) {
        let problems = ScaleSetDefinition.hookProblems(profile)
        guard problems.isEmpty else {
            throw EngineError("set_lifecycle_hooks refused: " + problems.map { "\($0.field): \($0.message)" }.joined(separator: "; "), .invalid(problems))
        }
        hooks.profile = profile
    }

    /// Every lifecycle hook event of the run, oldest first (`lifecycleHookEvents` of the scale set).
    public var lifecycleHookEvents: [LifecycleHookEvent] { hooks.events }

    /// The hook of `type` in the profile now.
    func hook(_ type: LifecycleHookType) -> LifecycleHook? { hooks.profile.first { $0.type == type } }

    var hookSummary: HookSummary {
        var summary = HookSummary()
        summary.events = hooks.events.count
        summary.defaultedEvents = hooks.defaultedEvents
        summary.defaultedTargets = hooks.defaultedTargets
        summary.batchWaits = upgrades.current?.hookWaits ?? []
        summary.rejected = upgrades.current?.hookRejected ?? []
        summary.rejectedSchedules = hooks.rejectedSchedules
        return summary
    }

    // MARK: Raising

    /// Raises an event of `hook` for `targets` (empty: the scale set), asks the answer source,
    /// and schedules its `waitUntil`.
    func raiseHook(_ hook: LifecycleHook, targets: [Int], upgrade: Int?, batch: Int?, phase: Int?) throws {
        if hooks.active != nil { try completeActiveHook(abandoned: true) }
        let number = hooks.events.count + 1
        let listed = targets.isEmpty
            ? [HookTarget(instance: nil, name: definition.name, actionState: .waiting)]
            : targets.map { HookTarget(instance: $0, name: fleet.instances[$0].name, actionState: .waiting) }
        let event = LifecycleHookEvent(number: number, name: LifecycleHookEvent.name(number), type: hook.type, timeCreated: now,
                                       waitUntil: now + hook.waitDuration, maxWaitUntil: now + hook.type.maxWait,
                                       defaultAction: hook.defaultAction, targets: listed, upgrade: upgrade, batch: batch)
        hooks.events.append(event)
        hooks.active = hooks.events.count - 1
        emit(.hookRaised(name: event.name, type: hook.type, targets: targets, waitUntil: event.waitUntil, maxWaitUntil: event.maxWaitUntil,
                         defaultAction: hook.defaultAction), batch: batch, phase: phase)
        clock.queue.schedule(.hookDeadline(event: Int32(number)), at: event.waitUntil)
        guard let source = hooks.answers, let response = try source.answer(event, at: now) else { return }
        if let after = response.after, after > 0 {
            hooks.delayed.append((event: hooks.events.count - 1, response: response))
            clock.queue.schedule(.hookAnswer(index: Int32(hooks.delayed.count - 1)), at: now + after)
        } else {
            try apply(response, toEvent: hooks.events.count - 1, via: "on_hook")
        }
    }

    // MARK: Answers

    /// Answers the Active lifecycle hook event (`event`: its name; nil: whichever is Active), as
    /// `az vmss lifecycle-hook-event approve/reject/update` do. Refused whole, with the reason,
    /// when no event is Active, the name is not the Active one's, an id is not a target, or the
    /// new `waitUntil` is past `maxWaitUntil` or before now.
    public func answerHook(event: String?, _ response: HookResponse, via: String = "answer_hook") throws(EngineError) {
        guard let index = hooks.active else { throw EngineError("\(via) refused: no lifecycle hook event is Active", .noActiveHookEvent) }
        if let event, event != hooks.events[index].name {
            let known = hooks.events.contains { $0.name == event }
            throw EngineError("\(via) refused: lifecycle hook event \(event) " + (known ? "is Completed" : "does not exist")
                              + "; the Active one is \(hooks.events[index].name)", .hookEventNotActive(event, exists: known, active: hooks.events[index].name))
        }
        do { try apply(response, toEvent: index, via: via) } catch let error as EngineError { throw error } catch {
            throw EngineError("\(via): \(error)")
        }
    }

    /// A delayed answer arrives: applied if its event is still Active, else said to be late.
    func delayedHookAnswerDue(_ index: Int) throws {
        let (event, response) = hooks.delayed[index]
        guard hooks.active == event else {
            emit(.actionFailed(action: "on_hook", message: "answer to lifecycle hook event \(hooks.events[event].name) arrived after it completed"))
            return
        }
        do { try apply(response, toEvent: event, via: "on_hook") } catch let error as EngineError {
            emit(.actionFailed(action: "on_hook", message: error.message))
        }
    }

    /// Checks `response` whole against event `index`, then applies it: rejections, approvals, a
    /// new `waitUntil`. Completes the event when no target is left Waiting.
    private func apply(_ response: HookResponse, toEvent index: Int, via: String) throws {
        var event = hooks.events[index]
        let waiting = event.targets.indices.filter { event.targets[$0].actionState == .waiting }
        func chosen(_ selection: HookSelection?) throws(EngineError) -> [Int] {
            switch selection {
            case nil: return []
            case .all: return waiting
            case .instances(let ids):
                return try ids.map { id throws(EngineError) in
                    guard let i = event.targets.firstIndex(where: { $0.instance == id }) else {
                        let targets = event.targets.compactMap(\.instance).map(String.init).joined(separator: ", ")
                        throw EngineError("\(via) refused: instance \(id) is not a target of lifecycle hook event \(event.name); targets: \(targets.isEmpty ? "the scale set" : targets)",
                                              .notAHookTarget(id, event: event.name))
                    }
                    return i
                }
            }
        }
        let rejected = try chosen(response.reject), approved = try chosen(response.approve).filter { !rejected.contains($0) }
        var newWaitUntil: Millis?
        if let wait = response.waitFor {
            let until = event.timeCreated + wait
            guard until <= event.maxWaitUntil, until >= now else {
                throw EngineError("\(via) refused: waitUntil \(ISODuration.format(until)) is outside \(ISODuration.format(now))–\(ISODuration.format(event.maxWaitUntil)) (maxWaitUntil)",
                                  .waitOutside(until: until, earliest: now, latest: event.maxWaitUntil))
            }
            newWaitUntil = until
        }
        var decided: [HookTarget] = []
        for (list, state) in [(rejected, HookActionState.rejected), (approved, .approved)] {
            for i in list where event.targets[i].actionState == .waiting {
                event.targets[i].actionState = state
                decided.append(event.targets[i])
            }
        }
        if let newWaitUntil { event.waitUntil = newWaitUntil }
        hooks.events[index] = event
        emit(.hookAnswered(name: event.name, decided: decided, waitUntil: newWaitUntil, via: via), batch: event.batch)
        if let newWaitUntil { clock.queue.schedule(.hookDeadline(event: Int32(event.number)), at: newWaitUntil) }
        if !event.targets.contains(where: { $0.actionState == .waiting }) { try completeActiveHook(abandoned: false) }
    }

    // MARK: Completion

    /// Event number `number`'s `waitUntil` came: if it is still Active and that is still its
    /// `waitUntil`, every target Waiting gets the default action and the event completes.
    func hookDeadlineDue(_ number: Int) throws {
        guard let index = hooks.active, hooks.events[index].number == number, hooks.events[index].waitUntil == now else { return }
        var event = hooks.events[index]
        let state: HookActionState = event.defaultAction == .approve ? .approved : .rejected
        var defaulted = 0
        for i in event.targets.indices where event.targets[i].actionState == .waiting {
            event.targets[i].actionState = state
            event.targets[i].defaulted = true
            defaulted += 1
        }
        hooks.events[index] = event
        if defaulted > 0 {
            hooks.defaultedEvents += 1
            hooks.defaultedTargets += defaulted
        }
        try completeActiveHook(abandoned: false)
    }

    /// Completes the Active event and lets the platform go on (unless `abandoned`: the upgrade
    /// it stood before ended, and nothing follows).
    func completeActiveHook(abandoned: Bool) throws {
        guard let index = hooks.active else { return }
        hooks.active = nil
        hooks.events[index].isActive = false
        hooks.events[index].completedAt = now
        let event = hooks.events[index]
        let approved = event.targets.filter { $0.actionState == .approved }, rejected = event.targets.filter { $0.actionState == .rejected }
        let rejectedIDs = rejected.compactMap(\.instance).sorted()
        emit(.hookCompleted(HookCompletion(name: event.name, type: event.type, approved: approved.count, rejected: rejected.count,
                                           defaulted: event.targets.count { $0.defaulted }, rejectedInstances: rejectedIDs,
                                           waited: now - event.timeCreated, abandoned: abandoned)), batch: event.batch)
        guard !abandoned else { return }
        switch event.type {
        case .upgradeAutoOSScheduling:
            guard let terms = hooks.scheduling else { return }
            hooks.scheduling = nil
            if approved.isEmpty {
                hooks.rejectedSchedules += 1
                return
            }
            do { try startAutomaticOSUpgrade(terms) } catch let error as EngineError {
                emit(.actionFailed(action: "automatic OS image upgrade", message: error.message))
            }
        case .upgradeAutoOSRollingBatchStarting:
            guard upgrades.outline.number == event.upgrade else { return }
            let ids = approved.compactMap(\.instance), waited = now - event.timeCreated
            try drive { $0.batchHookCompleted(approved: ids, rejected: rejectedIDs, waited: waited, self) }
        }
    }
}
