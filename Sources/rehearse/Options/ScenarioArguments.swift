import ArgumentParser
import AzureWire
import Formats
import Foundation
import LuaHost
import Plugins
import Scenario
import UpgradeEngine

/// Options every command that loads a scenario script shares: the script, then how it is loaded
/// and run.
struct ScenarioArguments: ParsableArguments {
    @Argument(help: "The Lua scenario script.") var scenario: String
    @OptionGroup var loading: LoadingArguments

    /// The command line as (definition, inputs): `ScenarioLoader.load` of the script.
    func load(seed: UInt64, overrides: [PolicyOverride] = [], parameters: [String: String] = [:],
              print: @escaping (String) -> Void) throws -> (ScenarioDefinition, RunInputs) {
        try loading.loader(seed: seed, overrides: overrides, parameters: parameters, print: print).load(scenario)
    }
}

/// How a scenario is loaded and run: plugin folders, lock file, limits, parameter values, the
/// time limit and wire strictness.
struct LoadingArguments: ParsableArguments {
    @OptionGroup var plugins: PluginPathOption
    @OptionGroup var wire: StrictWireOption
    @Option(name: .customLong("time-limit"), help: "Stop the virtual clock here (ISO 8601 duration).") var timeLimit = "P7D"
    @Option(help: "A lock file pinning bundle versions and contents (default: ./rehearse.lock when it exists).") var lock: String?
    @Option(name: .customLong("max-actions"), help: "Most at(...) actions one run may schedule.") var maxActions = RunLimits().actions
    @Option(name: .customLong("max-events"), help: "Most events one run may emit.") var maxEvents = RunLimits().events
    @Option(name: .customLong("max-instances"), help: "Most instances one run may create (initial, scale-out and MaxSurge).")
    var maxInstances = RunLimits().instances
    @Option(name: .customLong("max-model-versions"), help: "Most model versions one run may make.") var maxModelVersions = RunLimits().modelVersions
    @Option(name: .customLong("max-probes"), help: "Most health probes one run may make.") var maxProbes = RunLimits().probes
    @Option(name: .customLong("param"), help: "A value for the script's param(NAME, default): NAME=VALUE (repeatable).")
    var parameters: [String] = []
    @Option(name: .customLong("max-script-instructions"), help: "Lua instructions all calls of one run may execute together (counted exactly).")
    var maxScriptInstructions = LuaLimits().runInstructions
    @Option(name: .customLong("max-script-seconds"), help: "CPU seconds the scripts of one run may spend in all (a last-resort backstop).")
    var maxScriptSeconds = LuaLimits().runWallClockMilliseconds / 1000

    /// The loader these options make, checked (exit 2 naming the option otherwise). `parameters`
    /// are added to (and win over) the `--param` values.
    func loader(seed: UInt64, overrides: [PolicyOverride], parameters extra: [String: String], print: @escaping (String) -> Void) throws -> ScenarioLoader {
        // Each limit through the one checked conversion: the engine's queue numbers instances
        // and actions in 32 bits, the run backstop counts milliseconds in 32 bits, and every
        // other count stops at 10^15 so that no arithmetic on it can overflow.
        let most = CheckedNumber.largestCount, int32 = Int(Int32.max)
        let limits = [(Diagnostics.option(for: RunLimit.actions), maxActions, int32), (Diagnostics.option(for: RunLimit.events), maxEvents, most),
                      (Diagnostics.option(for: RunLimit.instances), maxInstances, int32),
                      (Diagnostics.option(for: RunLimit.modelVersions), maxModelVersions, most), (Diagnostics.option(for: RunLimit.probes), maxProbes, most),
                      (Diagnostics.option(for: LuaRunLimit.cpuTime), maxScriptSeconds, Int(UInt32.max) / 1000),
                      (Diagnostics.option(for: LuaRunLimit.instructions), maxScriptInstructions, most)]
        try checkPluginPaths(plugins.pluginPath)
        for (option, value, largest) in limits {
            _ = try CheckedNumber.whole(value, field: option, in: 1...largest)
        }
        var luaLimits = LuaLimits()
        luaLimits.runWallClockMilliseconds = maxScriptSeconds * 1000
        luaLimits.runInstructions = maxScriptInstructions
        let runLimits = RunLimits(actions: maxActions, events: maxEvents, instances: maxInstances, modelVersions: maxModelVersions,
                                  probes: maxProbes)
        var loader = try ScenarioLoader(seed: seed, pluginPath: plugins.pluginPath, lock: lock, print: print)
        loader.options.limits = luaLimits
        loader.options.parameters = try parameterValues(parameters).merging(extra) { _, given in given }
        loader.inputs.overrides = overrides
        loader.inputs.limits = luaLimits
        loader.inputs.runLimits = runLimits
        loader.inputs.strictWire = wire.strictWire
        switch ISODuration.parse(timeLimit) {
        case .success(let ms): loader.inputs.timeLimit = ms
        case .failure(let error): throw InputError(option: "--time-limit", ScriptText.escaped(timeLimit), problem: "\(error)", allowed: "an ISO 8601 duration such as P7D, PT12H or PT90M")
        }
        return loader
    }
}

/// The one way the command line turns a scenario into (definition, inputs), for every command
/// that loads one (`run`, `plan`, `sweep`, `compare`, `tune`, `test`, `validate`, `serve`): the
/// loader's options (seed of the top level, plugin path, lock file, limits, parameter values,
/// prints) and the inputs of its runs (the same seed and limits, overrides, time limit, wire
/// strictness, events not kept).
struct ScenarioLoader {
    /// How the script is loaded.
    var options = ScenarioOptions()
    /// What its runs take.
    var inputs = RunInputs(recordEvents: false)

    /// A loader with the default limits: the top level seeded with `seed`, bundles from
    /// `pluginPath` (each folder checked), bound by `lock` or else by `./rehearse.lock` when it
    /// exists (exit 2 when a named lock file does not), prints to `print`.
    init(seed: UInt64, pluginPath: [String], lock: String?, print: @escaping (String) -> Void) throws {
        try checkPluginPaths(pluginPath)
        options.seed = seed
        options.pluginPath = pluginPath
        options.print = print
        inputs.seed = seed
        if let lock {
            guard FileManager.default.fileExists(atPath: lock) else { throw InputError(option: "--lock", lock, problem: "no such file") }
            options.lockPath = lock
        } else if FileManager.default.fileExists(atPath: PluginLock.fileName) {
            options.lockPath = PluginLock.fileName
        }
    }

    /// The script at `path` as a definition, its warnings printed, and the inputs of its runs; the
    /// loader's error, typed, when it cannot be loaded (exit 2 once `main` renders it).
    func load(_ path: String) throws -> (ScenarioDefinition, RunInputs) {
        let definition = try definition(path)
        for warning in definition.warnings { warn(warning) }
        return (definition, inputs)
    }

    /// The script at `path` as a definition, its warnings not printed; the loader's error as it is.
    func definition(_ path: String) throws(ScenarioError) -> ScenarioDefinition {
        try ScenarioDefinition(luaScript: path, options: options)
    }
}

/// `--plugin-path DIR`, repeatable: every command that loads scripts or bundles.
struct PluginPathOption: ParsableArguments {
    @Option(name: .customLong("plugin-path"), help: "A folder of plugin bundles, searched before REHEARSE_PLUGIN_PATH and ./plugins (repeatable).")
    var pluginPath: [String] = []
}

/// `--strict-wire`: custom metrics judged as Azure's extension judges them (`run` and the commands
/// that load a scenario, `probe`).
struct StrictWireOption: ParsableArguments {
    @Flag(name: .customLong("strict-wire"), help: "Judge customMetrics sent as a JSON object as Azure's extension does (Unknown).")
    var strictWire = false
}

/// `--seed N`: the seed of a command's one run (or of every run, for `test`).
struct SeedOption: ParsableArguments {
    @Option(help: "Seed of math.random and every seeded failure injector.") var seed: UInt64 = 0
}

/// `--set PATH=VALUE`, repeatable: policy fields a command's runs change.
struct PolicySetOption: ParsableArguments {
    @Option(name: .customLong("set"), help: "A policy field, PATH=VALUE (e.g. rollingUpgradePolicy.maxBatchInstancePercent=10); repeatable.")
    var set: [String] = []

    /// The fields as overrides; a malformed one is exit 2.
    func overrides() throws -> [PolicyOverride] { try parseOverrides(set) }
}

/// `--report FILE.html`: a self-contained HTML page of what the command found.
struct ReportOption: ParsableArguments {
    @Option(name: .customLong("report"),
            help: "Write a self-contained HTML page to this file: a run's swim lanes and capacity curve, a sweep's shares and histograms, a comparison, a search.")
    var reportFile: String?
}

/// `--events FILE`: every event as one JSON object per line, as it happens.
struct EventsOption: ParsableArguments {
    @Option(help: "Write every event to this file as one JSON object per line, as it happens.") var events: String?
}

/// `--param NAME=VALUE` options by name; a malformed or repeated one is exit 2.
func parameterValues(_ texts: [String]) throws -> [String: String] {
    var values: [String: String] = [:]
    for text in texts {
        guard let equals = text.firstIndex(of: "="), equals != text.startIndex else {
            throw InputError(option: "--param", text, allowed: "NAME=VALUE, such as bootFailure=0.1")
        }
        let name = String(text[..<equals])
        guard values[name] == nil else { throw InputError(option: "--param", name, problem: "is given twice") }
        values[name] = String(text[text.index(after: equals)...])
    }
    return values
}
