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

/// A rehearsal as a function of a definition and run inputs. Each call makes its own behaviours
/// (for a Lua program, its own Lua state and runtime) and simulation, shares nothing with any other
/// call and may run on any thread; the same definition and inputs give the same record, byte for
/// byte, whatever runs beside it.
///
/// A Lua program's top level runs again at the start of every run. When the run's parameter
/// values are the definition's, that top level must describe what the definition holds; when
/// they differ, the run takes the scenario its top level describes for them (scale set,
/// timeline, expectations), read as the loader reads it, without reading the script again.
public enum Rehearsal {
    /// Runs `definition` with `inputs` to its end (or its time limit) and checks its expectations.
    /// The inputs' overrides change policy fields first and are checked as the definition's own
    /// policy. `printAt` receives each line the callbacks print with the virtual time (ms) it was
    /// printed at (the top level printed when the definition was loaded); `onEvent` receives
    /// every event as it happens.
    public static func run(_ definition: ScenarioDefinition, _ inputs: RunInputs, printAt: @escaping (Millis, String) -> Void = { _, _ in },
                           onEvent: (Event) -> Void = { _ in }) throws(RunFailure) -> RunRecord {
        // A session driven to its end: the one way a run proceeds.
        try withoutActuallyEscaping(onEvent) { (onEvent) throws(RunFailure) -> RunRecord in
            let session = try RehearsalSession(definition, inputs, printAt: printAt, onEvent: onEvent)
            return try session.finish()
        }
    }

    /// `run` with the default inputs of `seed` and `overrides`; `print` receives what the
    /// callbacks print.
    public static func run(_ definition: ScenarioDefinition, seed: UInt64, overrides: [PolicyOverride] = [],
                           print: @escaping (String) -> Void = { _ in }, onEvent: (Event) -> Void = { _ in }) throws(RunFailure) -> RunRecord {
        try run(definition, RunInputs(seed: seed, overrides: overrides), printAt: { print($1) }, onEvent: onEvent)
    }

    /// `run` with the default inputs of `seed` and `overrides`.
    public static func run(_ definition: ScenarioDefinition, seed: UInt64, overrides: [PolicyOverride] = [],
                           printAt: @escaping (Millis, String) -> Void, onEvent: (Event) -> Void = { _ in }) throws(RunFailure) -> RunRecord {
        try run(definition, RunInputs(seed: seed, overrides: overrides), printAt: printAt, onEvent: onEvent)
    }

    /// The batches of the first rolling upgrade of a run with `inputs`, from the health its
    /// instances report when it starts, without running it. When the run starts none, the plan
    /// is made as if the model changed once every instance had left Initializing (or its grace
    /// period had ended).
    public static func plan(_ definition: ScenarioDefinition, _ inputs: RunInputs,
                            printAt: @escaping (Millis, String) -> Void = { _, _ in }, onEvent: (Event) -> Void = { _ in }) throws(RunFailure) -> UpgradePlan {
        let run = try prepare(definition, inputs, print: printAt)
        let sim = run.simulation
        let runtime = run.session?.runtime
        let scaleSet = run.scaleSet
        do {
            return try withoutActuallyEscaping(onEvent) { onEvent in
                var first: UpgradePlan?
                sim.onEvent = { event in
                    runtime?.observe(event)
                    onEvent(event)
                }
                defer { sim.onEvent = nil }
                sim.onRollingUpgradeStart = { [unowned sim] plan in
                    if first == nil { first = plan }
                    sim.stop()
                }
                try sim.run(until: inputs.timeLimit)
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
            throw RunFailure(seed: inputs.seed, error: ScenarioError(error, context: .planning))
        }
    }

    /// `plan` with the default inputs of `seed` and `overrides`.
    public static func plan(_ definition: ScenarioDefinition, seed: UInt64, overrides: [PolicyOverride] = [],
                            print: @escaping (String) -> Void = { _ in }, onEvent: (Event) -> Void = { _ in }) throws(RunFailure) -> UpgradePlan {
        try plan(definition, RunInputs(seed: seed, overrides: overrides), printAt: { print($1) }, onEvent: onEvent)
    }

    /// Makes everything a run with `inputs` needs (for a Lua program a fresh state and sandbox,
    /// the top level run and checked, the modules; the simulation) and drops it: what a run costs
    /// before its first event, for benchmarks.
    public static func setUp(_ definition: ScenarioDefinition, _ inputs: RunInputs) throws(RunFailure) {
        _ = try prepare(definition, inputs, print: { _, _ in })
    }

    /// `setUp` with the default inputs of `seed`.
    public static func setUp(_ definition: ScenarioDefinition, seed: UInt64) throws(RunFailure) {
        try setUp(definition, RunInputs(seed: seed))
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

    /// The scenario a run of `definition` with `inputs` describes: `definition` itself when the
    /// inputs' parameter values are its own; otherwise, for a Lua program, what its top level
    /// (run once with the inputs' seed, parameter values and limits, printing through `print`)
    /// describes for those values, checked as the loader checks it (its overrides are not
    /// applied). Lets a caller check every combination of parameter values before any run.
    public static func definition(_ definition: ScenarioDefinition, for inputs: RunInputs,
                                  print: @escaping (String) -> Void = { _ in }) throws(RunFailure) -> ScenarioDefinition {
        let values = inputs.parameterValues(of: definition)
        guard values != definition.parameterValues else { return definition }
        do {
            switch definition.behaviour {
            case .lua(let program):
                let (session, merged) = try runTopLevel(program, inputs, values: values, print: { print($1) }, printTopLevel: true)
                return try ScenarioDefinition(describedBy: session, program: merged)
            case .swift:
                try checkParameters(values, of: definition)
                var copy = definition
                copy.parameterValues = values
                return copy
            }
        } catch {
            throw RunFailure(seed: inputs.seed, error: error)
        }
    }

    /// A simulation ready to run, with what it was made from: for a Lua program a fresh state
    /// whose top level ran with the inputs' seed and described the same scenario as the definition
    /// (or, for other parameter values, the scenario it describes); for Swift behaviours, fresh
    /// sources from the factory.
    static func prepare(_ definition: ScenarioDefinition, _ inputs: RunInputs, print: @escaping (Millis, String) -> Void) throws(RunFailure) -> Prepared {
        do {
            switch definition.behaviour {
            case .lua(let program): return try prepare(definition, program, inputs, print: print)
            case .swift(let behaviours): return try prepare(definition, behaviours, inputs)
            }
        } catch {
            throw RunFailure(seed: inputs.seed, error: error)
        }
    }

    private static func prepare(_ definition: ScenarioDefinition, _ program: LuaProgram, _ inputs: RunInputs,
                                print: @escaping (Millis, String) -> Void) throws(ScenarioError) -> Prepared {
        let values = inputs.parameterValues(of: definition)
        let own = values == definition.parameterValues
        // The overrides are checked before the script runs, when the scale set is known.
        let checked = own ? try Self.scaleSet(definition, overrides: inputs.overrides) : nil
        let (session, merged) = try runTopLevel(program, inputs, values: values, print: print, printTopLevel: false)
        session.state.setRunLabel("seed \(inputs.seed)")
        var described = definition
        if own {
            try session.check(against: definition, program: program)
        } else {
            described = try ScenarioDefinition(describedBy: session, program: merged)
            // Typed actions the caller added stay on the timeline, after the script's own.
            described.timeline += definition.timeline.filter { $0.location == nil }
        }
        let scaleSet: ScaleSetDefinition
        if let checked { scaleSet = checked } else { scaleSet = try Self.scaleSet(described, overrides: inputs.overrides) }
        let timeline = inputs.scriptTimeline ? described.timeline : described.timeline.filter { $0.location == nil }
        let sim = try session.makeSimulation(scaleSet, inputs: inputs, timeline: timeline)
        return Prepared(session: session, simulation: sim, scaleSet: scaleSet, expectations: described.expectations)
    }

    private static func prepare(_ definition: ScenarioDefinition, _ behaviours: SwiftBehaviours, _ inputs: RunInputs) throws(ScenarioError) -> Prepared {
        let values = inputs.parameterValues(of: definition)
        try checkParameters(values, of: definition)
        if let script = definition.timeline.firstIndex(where: { $0.location != nil }) {
            throw .definition([Problem(field: "timeline[\(script)]", "is a script callback, and this definition's behaviour is Swift, not a Lua program; allowed a typed action (.perform)")],
                              location: definition.path)
        }
        let scaleSet = try Self.scaleSet(definition, overrides: inputs.overrides)
        let made: Behaviours
        do {
            made = try behaviours.make(BehaviourContext(seed: inputs.seed, parameterValues: values, scaleSet: scaleSet))
        } catch {
            throw ScenarioError(error)
        }
        let sim: Simulation
        do {
            sim = try Simulation(scaleSet, health: made.health, phases: made.phases, faults: made.faults, deferrals: made.deferrals)
        } catch {
            throw .definition(error.problems, location: definition.scaleSetLocation)
        }
        sim.hookAnswers = inputs.gateActs ? made.hooks : nil
        sim.configure(for: inputs)
        for entry in definition.timeline {
            if case .perform(let action) = entry.action { sim.schedule(action, at: entry.time) }
        }
        return Prepared(session: nil, simulation: sim, scaleSet: scaleSet, expectations: definition.expectations)
    }

    /// A fresh Lua state for `program` whose top level ran with the inputs' seed and limits and
    /// `values`; modules come from the program first, then from its plugin path. Also returns the
    /// program with every module the top level read.
    private static func runTopLevel(_ program: LuaProgram, _ inputs: RunInputs, values: [String: String], print: @escaping (Millis, String) -> Void,
                                    printTopLevel: Bool) throws(ScenarioError) -> (ScriptSession, LuaProgram) {
        let plugins = PluginSession(searchPath: program.searchPath, lockPath: program.lockPath)
        let modules = program.modules
        let session = try ScriptSession(path: program.path, source: program.source, seed: inputs.seed, limits: inputs.limits,
                                        parameters: values, print: print, printTopLevel: printTopLevel,
                                        resolve: { name in
                                            if let module = modules[name] { return (module.source, module.path) }
                                            return try plugins.require(name)
                                        },
                                        searchPath: { plugins.searched })
        var merged = program
        merged.modules.merge(plugins.loaded) { old, _ in old }
        merged.bundles += plugins.chosen.filter { chosen in !program.bundles.contains { $0.name == chosen.name } }
        return (session, merged)
    }

    /// Every value names a parameter the definition declares and fits its kind.
    private static func checkParameters(_ values: [String: String], of definition: ScenarioDefinition) throws(ScenarioError) {
        let declared = definition.parameters.keys.sorted()
        let problems = values.keys.sorted().compactMap { name -> Problem? in
            guard let parameter = definition.parameters[name] else {
                return Problem(at: .setting(.parameter(name), value: nil), declared.isEmpty ? "the scenario declares no parameters"
                                                                          : "the scenario declares no such parameter; it declares \(declared.joined(separator: ", "))",
                               allowed: declared)
            }
            guard parameter.kind.value(values[name]!) == nil else { return nil }
            return Problem(at: .setting(.parameter(name), value: values[name]!), "is not \(parameter.kind.article) \(parameter.kind.rawValue) like the default \(parameter.defaultValue)")
        }
        guard problems.isEmpty else { throw .definition(problems, location: nil) }
    }

    /// A run's own state: the simulation, the Lua session that keeps it while it runs (nil for
    /// Swift behaviours), the scale set with the overrides applied and the expectations to check.
    struct Prepared {
        let session: ScriptSession?
        let simulation: Simulation
        let scaleSet: ScaleSetDefinition
        let expectations: [Expectation]
    }
}

extension ScenarioError {
    /// Any error of a run as a scenario error: script errors, run limits, engine refusals.
    init(_ error: any Error, context: ScriptContext? = nil) {
        switch error {
        case let error as ScenarioError: self = error
        case let error as LuaError: self = .script(error, context: context)
        case let limit as RunLimitExceeded: self = .runLimit(limit)
        default: self = .host("\(error)")
        }
    }
}
