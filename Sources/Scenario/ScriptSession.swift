import Formats
import Foundation
import LuaHost
import UpgradeEngine

/// One Lua state running one scenario script: made to load a definition, and made again, fresh,
/// for every run of it. Its top level runs once, when it is made: there the script describes the
/// scale set, registers its callbacks and puts actions on the timeline; during a run the engine
/// calls the callbacks and the actions act on the session's simulation. Nothing in it is shared
/// with another session, so sessions on different threads never meet.
final class ScriptSession {
    /// The script's path, as errors show it.
    let path: String
    let runtime: ScriptRuntime
    var state: LuaState { runtime.state }

    /// What the top level described, in the order it did.
    /// `scaleset { … }`: the table and where it was called (a script calls it once).
    var scaleset: (value: LuaValue, location: String)?
    var scalesetLocation: String? { scaleset?.location }
    var scalesetValue: LuaValue? { scaleset?.value }
    var health: Callback?
    var phase: Callback?
    var fault: Callback?
    var deferral: Callback?
    /// `on_hook(function(event, now) … end)`: answers lifecycle hook events.
    var onHook: Callback?
    /// `health_model { … }`: the application as a value (no function called per probe), read.
    var healthModel: (model: Result<HealthModel, ValidationFailure>, location: String)?
    var timeline: [(time: Millis, callback: Callback)] = []
    /// What `expect { … }` and `risk { … }` said, each with where (a script has at most one risk).
    var asked = Asked()
    var expectationTables: [(table: LuaValue, location: String)] { asked.expectations }
    var riskTables: [(table: LuaValue, location: String)] { asked.risk }

    /// The tables of `expect` and `risk` calls, in order, with where each was made.
    struct Asked {
        var expectations: [(table: LuaValue, location: String)] = []
        var risk: [(table: LuaValue, location: String)] = []
    }
    /// `--param` values given, by name, as written.
    let parameterValues: [String: String]
    /// The parameters the script declared with `param(name, default)`, by name.
    var parameters: [String: ScenarioParameter] = [:]
    /// Values given that do not fit their parameter's type.
    var parameterProblems: [Problem] = []

    /// The simulation an `at` callback acts on, while a run goes.
    var simulation: Simulation?

    typealias Activity = ScriptRuntime.Activity
    var activity: Activity {
        get { runtime.activity }
        set { runtime.activity = newValue }
    }
    var fatal: (any Error)? {
        get { runtime.fatal }
        set { runtime.fatal = newValue }
    }

    /// A script function the engine calls, with where it was registered.
    struct Callback {
        var function: LuaFunctionRef
        var location: String
    }

    /// Makes a fresh sandboxed state seeded with `seed`, registers the scenario API, and runs the
    /// top level of `source` (named `path` in errors). `resolve` answers every `require` that is
    /// not a built-in module; `printTopLevel` false drops what the top level prints (a run
    /// repeats a top level whose output was shown when the definition was loaded).
    init(path: String, source: String, seed: UInt64, limits: LuaLimits, parameters: [String: String], print: @escaping (Millis, String) -> Void,
         printTopLevel: Bool, resolve: @escaping (String) throws -> (source: String, path: String)?,
         searchPath: @escaping () -> (folders: [String], text: String)) throws(ScenarioError) {
        self.path = path
        parameterValues = parameters
        do {
            runtime = ScriptRuntime(state: try LuaState(limits: limits), model: [:])
        } catch {
            throw .host("cannot create a Lua state: \(error)")
        }
        let runtime = self.runtime
        // Each line carries the virtual time it was printed at.
        let sink: (String) -> Void = { [unowned runtime] line in
            if printTopLevel || runtime.activity != .loading { print(runtime.now, line) }
        }
        var sandbox = LuaSandboxOptions(seed: seed, print: sink, clock: { [unowned runtime] in Double(runtime.now) / 1000 })
        sandbox.resolveModule = { name in
            if let builtin = BuiltinLibrary.modules[name] { return (builtin, "(builtin)/\(name).lua") }
            if let found = try resolve(name) { return found }
            let searched = searchPath()
            throw LuaArgumentError(position: 1, problem: "module '\(name)' not found: it is neither a built-in module (\(BuiltinLibrary.modules.keys.sorted().joined(separator: ", "))) nor a plugin bundle on the plugin path (\(searched.text))",
                                   refusal: .module(name: name, .notFound(tried: searched.folders)))
        }
        do {
            try state.openSandbox(sandbox)
            registerAPI()
        } catch let error as LuaError {
            throw .script(error, context: nil)
        } catch {
            throw .host("cannot build the sandbox: \(error)")
        }
        do {
            let chunk = try state.load(source, chunkName: path)
            try state.call(chunk, [])
            state.release(chunk)
        } catch var error as LuaError {
            error.function = nil  // the location already names the file
            throw .script(error, context: nil)
        } catch {
            throw .host("cannot load \(path): \(error)")
        }
        activity = .idle
    }

    /// A fresh simulation of `scaleSet`, wired to the session's callbacks, with `timeline`'s
    /// entries scheduled in order: the n-th script entry is the n-th callback the top level put on
    /// its timeline, a typed entry its action.
    func makeSimulation(_ scaleSet: ScaleSetDefinition, inputs: RunInputs, timeline entries: [ScenarioDefinition.TimelineEntry]) throws(ScenarioError) -> Simulation {
        let sim: Simulation
        do {
            runtime.reset(model: scaleSet.model, healthExtension: scaleSet.healthExtension != nil)
            let source: (any HealthSource)?
            if case .success(let model)? = healthModel?.model {
                source = ModelHealthSource(model, seed: inputs.seed)
            } else {
                source = health.map { LuaHealthSource(runtime, $0, definition: scaleSet) }
            }
            sim = try Simulation(scaleSet, health: source,
                                 phases: phase.map { LuaPhaseSource(runtime, $0) }, faults: fault.map { LuaFaultInjector(runtime, $0) },
                                 deferrals: deferral.map { LuaDeferralSource(runtime, $0) })
            sim.hookAnswers = inputs.gateActs ? onHook.map { LuaHookAnswerSource(runtime, $0) } : nil
        } catch {
            throw .definition(error.problems, location: scalesetLocation)
        }
        // A fleet listed by a document may start on two model versions.
        runtime.models = sim.models
        runtime.gateActs = inputs.gateActs
        runtime.healthExtensions = Array(repeating: scaleSet.healthExtension != nil, count: sim.models.count)
        sim.configure(for: inputs)
        state.resetRunTime()
        var callbacks = timeline.makeIterator()
        for entry in entries {
            switch entry.action {
            case .script:
                // The run's top level was checked against the definition: its callbacks are the script entries.
                guard let (time, callback) = callbacks.next() else { continue }
                schedule(callback, at: time, on: sim)
            case .perform(let action):
                let runtime = runtime
                sim.schedule(action, at: entry.time) { now in runtime.now = now }
            }
        }
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
                // The callback is named `at(PT1M)` in the error already: no second time.
                throw ScenarioError.script(error, context: nil)
            }
            if let fatal { throw fatal }
        }
    }
}
