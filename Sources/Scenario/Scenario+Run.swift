import AzureWire
import LuaHost
public import UpgradeEngine

/// What a scenario run produced.
public struct ScenarioResult: Sendable {
    /// The run as data: events (when `ScenarioOptions.recordEvents`), summary, every instance's end.
    public var record: RunRecord
    /// The run's summary (status, availability, …).
    public var summary: RunSummary { record.summary }
    /// How many rolling upgrades started.
    public var upgrades: Int
    /// Every way the run differed from its `expect` calls.
    public var failures: [ExpectationFailure]
    /// The same, as "expect at file:line: code is Completed, expected Faulted".
    public var failedExpectations: [String] { failures.map(\.description) }
    /// How many `expect` calls the script made.
    public var expectationCount: Int
}

extension Scenario {
    /// A fresh simulation of the scenario's scale set, wired to its Lua behaviours and timeline.
    func makeSimulation(strictWire: Bool) throws(ScenarioError) -> Simulation {
        let sim: Simulation
        do {
            runtime.reset(model: definition.model)
            sim = try Simulation(definition, health: health.map { LuaHealthSource(runtime, $0, definition: definition) },
                                 phases: phase.map { LuaPhaseSource(runtime, $0) }, faults: fault.map { LuaFaultInjector(runtime, $0) },
                                 deferrals: deferral.map { LuaDeferralSource(runtime, $0) })
        } catch {
            throw .definition(error.problems, location: scalesetLocation)
        }
        sim.strictWire = strictWire
        sim.limits = options.runLimits
        state.resetRunTime()
        for (time, callback) in timeline { schedule(callback, at: time, on: sim) }
        simulation = sim
        return sim
    }

    /// Puts an `at` callback on the simulation's timeline. While it runs the script may act on the
    /// scale set; an error a nested call left in `fatal` ends the run as that error.
    func schedule(_ callback: Callback, at time: Millis, on sim: Simulation) {
        sim.schedule(at: time, name: "at(\"\(ISODuration.format(time))\") at \(callback.location)") { [unowned self] sim in
            activity = .atCallback
            runtime.now = sim.now
            defer { activity = .idle }
            do {
                try state.call(callback.function, [])
            } catch let error as LuaError {
                if let fatal { throw fatal }
                throw ScenarioError.script(error, context: "at \(ISODuration.format(sim.now))")
            }
            if let fatal { throw fatal }
        }
    }

    /// Runs the scenario to its end (or the time limit), sending every event to `onEvent` as it
    /// happens, then checks the expectations.
    public func run(onEvent: @escaping (Event) -> Void = { _ in }) throws(ScenarioError) -> ScenarioResult {
        let sim = try makeSimulation(strictWire: options.strictWire)
        defer { simulation = nil }
        var upgrades = 0
        var events: [Event] = []
        let keep = options.recordEvents
        let runtime = self.runtime
        sim.onEvent = { event in
            runtime.observe(event)
            if event.kind == .upgradeStarted { upgrades += 1 }
            if keep { events.append(event) }
            onEvent(event)
        }
        let summary: RunSummary
        do {
            summary = try sim.run(until: options.timeLimit)
        } catch let error as ScenarioError {
            throw error
        } catch let error as LuaError {
            throw .script(error, context: nil)
        } catch let limit as RunLimitExceeded {
            throw .runLimit(limit)
        } catch {
            throw .file("\(error)")
        }
        let failures = expectations.flatMap { $0.failures(summary: summary, upgrades: upgrades) }
        let record = RunRecord(events: events, summary: summary, instances: sim.instanceOutcomes)
        return ScenarioResult(record: record, upgrades: upgrades, failures: failures, expectationCount: expectations.count)
    }

    /// The batches of the scenario's first rolling upgrade, from the health its instances report
    /// when it starts, without running it. When the scenario starts none, the plan is made as if
    /// the model changed once every instance had left Initializing (or its grace had ended).
    /// The loaded scenario is used as it is: its top level ran once, when it was loaded.
    public func plan(onEvent: @escaping (Event) -> Void = { _ in }) throws(ScenarioError) -> UpgradePlan {
        let sim = try makeSimulation(strictWire: options.strictWire)
        defer { simulation = nil }
        var first: UpgradePlan?
        let runtime = self.runtime
        sim.onEvent = { event in
            runtime.observe(event)
            onEvent(event)
        }
        sim.onRollingUpgradeStart = { [unowned sim] plan in
            if first == nil { first = plan }
            sim.stop()
        }
        do {
            try sim.run(until: options.timeLimit)
            if let first { return first }
            // No rolling upgrade: let the instances settle on the same clock, then plan.
            let interval = (definition.healthExtension?.intervalInSeconds ?? 5) * 1000
            let settled = sim.now + (definition.healthExtension?.gracePeriod ?? 0) * 1000
            var time = sim.now
            while time <= settled, sim.instances.contains(where: { $0.isPresent && $0.health.state == .initializing }) {
                try sim.advance(to: time)
                time += interval
            }
            return try sim.planNow(assumingModelChange: true)
        } catch let error as ScenarioError {
            throw error
        } catch let error as LuaError {
            throw .script(error, context: "planning")
        } catch let limit as RunLimitExceeded {
            throw .runLimit(limit)
        } catch {
            throw .file("\(error)")
        }
    }
}
