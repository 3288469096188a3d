import Formats
import Foundation
public import LuaHost
import Plugins
import UpgradeEngine

/// How the Lua loader reads a scenario script: the seed and limits its top level runs with, where
/// its bundles come from and where what it prints goes. A run's own inputs are `RunInputs`.
public struct ScenarioOptions {
    /// The seed the top level runs with when the script is loaded.
    public var seed: UInt64 = 0
    /// `--plugin-path` folders, searched before `REHEARSE_PLUGIN_PATH` and `./plugins`.
    public var pluginPath: [String] = []
    /// A `rehearse.lock` whose versions and file hashes bind the bundles the script requires.
    public var lockPath: String?
    /// Limits of the top level's calls while the script is loaded.
    public var limits = LuaLimits()
    /// Where `print` in scripts goes while the script is loaded (runs take their own).
    public var print: (String) -> Void = { Swift.print($0) }
    /// The environment the plugin path is read from.
    public var environment: [String: String] = ProcessInfo.processInfo.environment
    /// Values of the script's `param(name, default)` parameters, by name, as written on the
    /// command line (`--param bootFailure=0.1`); each must be one the script declares. The
    /// definition describes the scenario for these values.
    public var parameters: [String: String] = [:]

    /// The defaults: seed 0, no plugin path, the default limits, prints to standard output.
    public init() {}

    /// The plugin folders in search order: `pluginPath`, `REHEARSE_PLUGIN_PATH`, `./plugins`.
    var searchPath: [String] { PluginCatalog.searchPath(explicit: pluginPath, environment: environment) }
}

extension ScenarioDefinition {
    /// The Lua adapter: loads the script at `path`, runs its top level in a fresh sandbox (seeded
    /// with `options.seed`, printing through `options.print`) and keeps what it described as a
    /// definition whose behaviour is the program; every problem of the definition is reported at once.
    public init(luaScript path: String, options: ScenarioOptions = ScenarioOptions()) throws(ScenarioError) {
        guard FileManager.default.fileExists(atPath: path) else { throw .file(path: path, problem: "does not exist") }
        let data: [UInt8]
        do {
            data = try BoundedFile.read(path, maxBytes: BoundedFile.maxSourceBytes)
        } catch {
            throw .file(path: error.path, problem: error.problem)
        }
        if data.first == 0x1B {
            throw .script(LuaError(kind: .syntax, message: "\(path) is precompiled Lua bytecode; only source text is accepted",
                                   refusal: .sandbox(.textChunksOnly)), context: nil)
        }
        let source: String
        switch LuaSourceText.decode(data) {
        case .success(let text): source = text
        case .failure(let bad): throw .script(LuaError(kind: .syntax, message: bad.message(), location: "\(path):\(bad.line)"), context: nil)
        }
        let searchPath = options.searchPath
        let plugins = PluginSession(searchPath: searchPath, lockPath: options.lockPath)
        let session = try ScriptSession(path: path, source: source, seed: options.seed, limits: options.limits,
                                        parameters: options.parameters, print: { [print = options.print] in print($1) }, printTopLevel: true,
                                        resolve: { name in try plugins.require(name) }, searchPath: { plugins.searched })
        let program = LuaProgram(path: path, source: source, modules: plugins.loaded, bundles: plugins.chosen, hooks: session.hooks,
                                 searchPath: searchPath, lockPath: options.lockPath, described: .nil)
        try self.init(describedBy: session, program: program)
    }

    /// What the top level of `session` described, as a definition whose behaviour is `program`
    /// (its hooks and described scale set taken from the session): the loader's reading, and a
    /// run's when its parameter values differ from the definition's.
    init(describedBy session: ScriptSession, program: LuaProgram) throws(ScenarioError) {
        let path = program.path
        let unknown = session.parameterValues.keys.sorted().filter { session.parameters[$0] == nil }
        let declared = session.parameters.keys.sorted()
        let parameterProblems = session.parameterProblems + unknown.map { name in
            Problem(at: .setting(.parameter(name), value: nil), declared.isEmpty ? "the script declares no parameters (param(\"name\", default))"
                                                               : "the script declares no such parameter; it declares \(declared.joined(separator: ", "))",
                    allowed: declared)
        }
        guard parameterProblems.isEmpty else { throw .definition(parameterProblems, location: nil) }
        guard let value = session.scalesetValue else {
            throw .definition([Problem(field: "scaleset", "the script never calls scaleset { ... }; it must describe exactly one scale set")], location: path)
        }
        var reader = DefinitionReader(folder: ScenarioDefinition.folder(of: path))
        let scaleSet = reader.read(value)
        var problems = reader.problems
        var warnings: [String] = []
        if let model = session.healthModel {
            if let health = session.health {
                problems.append(Problem(call: "health_model", at: model.location,
                                        "the health(...) function at \(health.location) also answers every probe; a scenario describes its application one way: a function or a model"))
            }
            if case .failure(let failure) = model.model { problems += failure.problems.map { Problem(call: "health_model", at: model.location, "\($0.field): \($0.message)") } }
        } else if session.health == nil && scaleSet.hasHealthSource && scaleSet.healthExtension != nil {
            warnings.append("\(path): no health(...) function: every probe answers Healthy")
        }
        if let phase = session.phase, scaleSet.hasHealthSource, !(scaleSet.healthExtension?.richStates ?? false) {
            problems.append(Problem(call: "phase", at: phase.location,
                                    "phase() stands for the PhaseOrderingNumber custom metric, which needs rich health states (typeHandlerVersion 2.0) over http or https; this scale set's health source reports binary states or tcp"))
        }
        let automatic = scaleSet.policy.automaticOS
        if let deferral = session.deferral, !(automatic.enableAutomaticOSUpgrade && automatic.osRollingUpgradeDeferral) {
            problems.append(Problem(call: "deferral", at: deferral.location,
                                    "deferral() answers the notice of an automatic OS upgrade, which needs upgradePolicy.automaticOSUpgradePolicy with enableAutomaticOSUpgrade and osRollingUpgradeDeferral both true; as written it would never be called"))
        }
        if let onHook = session.onHook, scaleSet.lifecycleHooks.isEmpty || !automatic.enableAutomaticOSUpgrade {
            problems.append(Problem(call: "on_hook", at: onHook.location,
                                    "on_hook() answers lifecycle hook events, which need scaleset.lifecycleHooksProfile and automatic OS image upgrades (upgradePolicy.automaticOSUpgradePolicy.enableAutomaticOSUpgrade = true); as written it would never be called"))
        }
        var expectations: [Expectation] = []
        for (table, location) in session.expectationTables {
            let (expectation, found) = ExpectationReader.read(table, location: location)
            expectations.append(expectation)
            problems += found.map { Problem(call: "expect", at: location, $0) }
        }
        let (risk, riskProblems) = RiskReader.read(session.riskTables)
        problems += riskProblems
        warnings += reader.warnings.map(\.description)
        guard problems.isEmpty else { throw .definition(problems, location: session.scalesetLocation) }
        var program = program
        program.hooks = session.hooks
        program.described = value
        self.init(path: path, scaleSet: scaleSet, behaviour: .lua(program),
                  timeline: session.timeline.map { TimelineEntry(time: $0.time, action: .script(location: $0.callback.location)) },
                  expectations: expectations, risk: risk, parameters: session.parameters, parameterValues: session.parameterValues,
                  scaleSetLocation: session.scalesetLocation, warnings: warnings, documents: reader.documents)
    }
}

extension ScriptSession {
    /// Where each callback was registered.
    var hooks: LuaProgram.Hooks {
        LuaProgram.Hooks(health: health?.location ?? healthModel?.location, phase: phase?.location, fault: fault?.location, deferral: deferral?.location,
                         onHook: onHook?.location)
    }

    /// A run's top level must describe what the definition holds: the same scale set, callbacks,
    /// script timeline and expectations. A top level that draws random numbers for them would
    /// make a different scenario for every seed, which the definition cannot stand for.
    func check(against definition: ScenarioDefinition, program: LuaProgram) throws(ScenarioError) {
        var differences: [String] = []
        if let value = scalesetValue, value != program.described { differences.append("the scale set") }
        if scalesetLocation != definition.scaleSetLocation { differences.append("where scaleset is called") }
        if hooks != program.hooks { differences.append("the callbacks") }
        let entries = timeline.map { ScenarioDefinition.TimelineEntry(time: $0.time, action: .script(location: $0.callback.location)) }
        if entries != definition.timeline.filter({ $0.location != nil }) { differences.append("the timeline") }
        if expectationTables.count != definition.expectations.count { differences.append("the expectations") }
        guard !differences.isEmpty else { return }
        throw .definition([Problem(field: "top level",
                                   "this run's top level described \(differences.joined(separator: ", ")) differently from when the script was loaded; the top level must describe the same scenario for every seed (draw random numbers inside callbacks, not at the top level)")],
                          location: definition.path)
    }
}
