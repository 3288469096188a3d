public import AzureWire
public import Formats
import LuaHost
public import UpgradeEngine

/// A run that could not finish: a script error, a budget or memory limit, a run limit, or a
/// definition that the overrides made invalid. It names the seed, so one failed run among a
/// thousand says which.
public struct RunFailure: Error, CustomStringConvertible {
    /// The seed of the run that failed.
    public var seed: UInt64
    /// What went wrong.
    public var error: ScenarioError

    /// A failure of the run with `seed`.
    public init(seed: UInt64, error: ScenarioError) {
        self.seed = seed
        self.error = error
    }

    public var description: String { "seed \(seed): \(error)" }
}

extension RunFailure: UserFacingError {
    /// Where the run's error is.
    public var place: Location? { error.place }
    /// What the run's error allows.
    public var allowed: String? { error.allowed }
    /// The run's error's status: 2.
    public var exitCode: Int32 { error.exitCode }
}

/// A rehearsal as a function of a definition and a seed. Each call makes its own Lua state,
/// runtime and simulation, shares nothing with any other call and may run on any thread; the
/// same definition, seed and overrides give the same record, byte for byte, whatever runs
/// beside it.
public enum Rehearsal {
    /// Runs `definition` with `seed` to its end (or its time limit) and checks its expectations.
    /// `overrides` change policy fields first and are checked as the definition's own policy.
    /// `print` receives what the script's callbacks print (the top level printed when the
    /// definition was loaded); `onEvent` receives every event as it happens.
    public static func run(_ definition: ScenarioDefinition, seed: UInt64, overrides: [PolicyOverride] = [],
                           print: @escaping (String) -> Void = { _ in }, onEvent: (Event) -> Void = { _ in }) throws(RunFailure) -> RunRecord {
        try run(definition, seed: seed, overrides: overrides, printAt: { print($1) }, onEvent: onEvent)
    }

    /// `run`, with each line the callbacks print handed over with the virtual time (ms) it was
    /// printed at.
    public static func run(_ definition: ScenarioDefinition, seed: UInt64, overrides: [PolicyOverride] = [],
                           printAt: @escaping (Millis, String) -> Void, onEvent: (Event) -> Void = { _ in }) throws(RunFailure) -> RunRecord {
        // A session driven to its end: the one way a run proceeds.
        try withoutActuallyEscaping(onEvent) { (onEvent) throws(RunFailure) -> RunRecord in
            let session = try RehearsalSession(definition, seed: seed, overrides: overrides, printAt: printAt, onEvent: onEvent)
            return try session.finish()
        }
    }

    /// The batches of the first rolling upgrade of a run with `seed`, from the health its
    /// instances report when it starts, without running it. When the run starts none, the plan
    /// is made as if the model changed once every instance had left Initializing (or its grace
    /// period had ended).
    public static func plan(_ definition: ScenarioDefinition, seed: UInt64, overrides: [PolicyOverride] = [],
                            print: @escaping (String) -> Void = { _ in }, onEvent: (Event) -> Void = { _ in }) throws(RunFailure) -> UpgradePlan {
        let run = try prepare(definition, seed: seed, overrides: overrides, print: { print($1) })
        let sim = run.simulation
        let runtime = run.session.runtime
        let scaleSet = run.scaleSet
        do {
            return try withoutActuallyEscaping(onEvent) { onEvent in
                var first: UpgradePlan?
                sim.onEvent = { event in
                    runtime.observe(event)
                    onEvent(event)
                }
                defer { sim.onEvent = nil }
                sim.onRollingUpgradeStart = { [unowned sim] plan in
                    if first == nil { first = plan }
                    sim.stop()
                }
                try sim.run(until: definition.settings.timeLimit)
                if let first { return first }
                // No rolling upgrade: let the instances settle on the same clock, then plan.
                let interval = (scaleSet.healthExtension?.intervalInSeconds ?? 5) * 1000
                let settled = sim.now + (scaleSet.healthExtension?.gracePeriod ?? 0) * 1000
                var time = sim.now
                while time <= settled, sim.instances.contains(where: { $0.isPresent && $0.health.state == .initializing }) {
                    try sim.advance(to: time)
                    time += interval
                }
                var assumed = try sim.planNow(assumingModelChange: true)
                assumed.assumed = true
                return assumed
            }
        } catch {
            throw RunFailure(seed: seed, error: ScenarioError(error, context: "planning"))
        }
    }

    /// Makes everything a run with `seed` needs (a fresh Lua state and sandbox, the top level run
    /// and checked, the modules, the simulation) and drops it: what a run costs before its first
    /// event, for benchmarks.
    public static func setUp(_ definition: ScenarioDefinition, seed: UInt64) throws(RunFailure) {
        _ = try prepare(definition, seed: seed, overrides: [], print: { _, _ in })
    }

    /// The scale set a run of `definition` starts from, with `overrides` applied and checked.
    public static func scaleSet(_ definition: ScenarioDefinition, overrides: [PolicyOverride]) throws(ScenarioError) -> ScaleSetDefinition {
        var scaleSet = definition.scaleSet
        do {
            scaleSet.policy = try scaleSet.policy.applying(overrides)
        } catch {
            throw .definition(error.problems.map { Problem(at: .setting(.policyOverride($0.field), value: nil), $0.message) }, location: nil)
        }
        return scaleSet
    }

    /// A session and simulation ready to run: a fresh state whose top level ran with `seed` and
    /// described the same scenario as the definition.
    static func prepare(_ definition: ScenarioDefinition, seed: UInt64, overrides: [PolicyOverride],
                                print: @escaping (Millis, String) -> Void) throws(RunFailure) -> Prepared {
        do {
            let scaleSet = try Self.scaleSet(definition, overrides: overrides)
            let settings = definition.settings
            let plugins = PluginSession(searchPath: settings.searchPath, lockPath: settings.lockPath)
            let modules = definition.modules
            let session = try ScriptSession(path: definition.path, source: definition.source, seed: seed, limits: settings.limits,
                                            parameters: definition.parameterValues, print: print, printTopLevel: false,
                                            resolve: { name in
                                                if let module = modules[name] { return (module.source, module.path) }
                                                return try plugins.require(name)
                                            },
                                            searchPathText: { plugins.searchPathText })
            session.state.setRunLabel("seed \(seed)")
            try session.check(against: definition)
            let sim = try session.makeSimulation(scaleSet, settings: settings)
            return Prepared(session: session, simulation: sim, scaleSet: scaleSet)
        } catch {
            throw RunFailure(seed: seed, error: error)
        }
    }

    /// A run's own state: the session (which keeps the simulation while it runs) and the scale set.
    struct Prepared {
        let session: ScriptSession
        let simulation: Simulation
        let scaleSet: ScaleSetDefinition
    }
}

extension ScriptSession {
    /// A run's top level must describe what the definition holds: the same scale set, callbacks,
    /// timeline and expectations. A top level that draws random numbers for them would make a
    /// different scenario for every seed, which the definition cannot stand for.
    func check(against definition: ScenarioDefinition) throws(ScenarioError) {
        var differences: [String] = []
        if let value = scalesetValue, value != definition.described { differences.append("the scale set") }
        if scalesetLocation != definition.scaleSetLocation { differences.append("where scaleset is called") }
        if hooks != definition.hooks { differences.append("the callbacks") }
        let entries = timeline.map { ScenarioDefinition.TimelineEntry(time: $0.time, location: $0.callback.location) }
        if entries != definition.timeline { differences.append("the timeline") }
        if expectationTables.count != definition.expectations.count { differences.append("the expectations") }
        guard !differences.isEmpty else { return }
        throw .definition([Problem(field: "top level",
                                   "this run's top level described \(differences.joined(separator: ", ")) differently from when the script was loaded; the top level must describe the same scenario for every seed (draw random numbers inside callbacks, not at the top level)")],
                          location: definition.path)
    }
}

extension ScenarioError {
    /// Any error of a run as a scenario error: script errors, run limits, engine refusals.
    init(_ error: any Error, context: String? = nil) {
        switch error {
        case let error as ScenarioError: self = error
        case let error as LuaError: self = .script(error, context: context)
        case let limit as RunLimitExceeded: self = .runLimit(limit)
        default: self = .host("\(error)")
        }
    }
}
