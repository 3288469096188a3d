public import Formats

/// Actions from outside the timeline (a served run's requests) at a chosen instant.
extension Simulation {
    /// Handles everything scheduled before `time` (whether or not work is left: probes of an
    /// idle scale set too) and moves the clock to `time`, leaving what is due at `time` itself
    /// for later: the state a timeline action at `time` sees when it runs.
    public func proceed(before time: Millis) throws {
        clock.stopped = false
        let health = setup.behaviours.health, runs = asksInRuns(health)
        while let next = clock.queue.nextTime, next < time {
            let (at, what) = clock.queue.pop()!
            advanceClock(to: at)
            try dispatch(what, health: health, runs: runs)
            if let reached = counters.limitReached { throw reached }
        }
        if time > now { advanceClock(to: time) }
    }

    /// Records that the engine refused the action `name` now, with its error: the `actionFailed`
    /// event a timeline action refused at this instant gets (`update_model at PT10M`). For an
    /// action a script made, which goes on to see the refusal as an error it may catch.
    public func recordRefusal(of name: String, _ error: EngineError) {
        emit(.actionFailed(action: "\(name) at \(ISODuration.format(now))", message: error.message))
    }

    /// Notes what is scheduled so far (first probes, the timeline) as the run's setup: an action
    /// from outside at one of its instants comes after it, as a timeline action added last would.
    public func markSetup() { clock.queue.markSetup() }

    /// Runs `body` now, at `now`, where a timeline action at `now` would run (after the setup's
    /// entries at this instant, ahead of anything scheduled since); nothing after it is handled. An `EngineError` it throws
    /// becomes an `actionFailed` event named `name`, as for a timeline action.
    public func performNow(name: String, _ body: @escaping (Simulation) throws -> Void) throws {
        guard script.list.count < limits.actions else {
            reachLimit("actions", limits.actions, detail: "scheduling \(name)")
            if let reached = counters.limitReached { throw reached }
            return
        }
        script.list.append((name, { sim in
            defer { sim.stop() }
            try body(sim)
        }))
        script.left += 1
        clock.queue.scheduleFirst(.action(index: Int32(script.list.count - 1)), at: now)
        clock.stopped = false
        let health = setup.behaviours.health, runs = asksInRuns(health)
        while !clock.stopped, case let (at, what)? = clock.queue.pop() {
            advanceClock(to: at)
            try dispatch(what, health: health, runs: runs)
            if let reached = counters.limitReached { throw reached }
        }
    }
}
