import ArgumentParser
import Formats
import Foundation
import LuaHost
import Plugins
import Scenario
import UpgradeEngine

/// Options every command that loads a scenario shares.
struct ScenarioArguments: ParsableArguments {
    @Argument(help: "The Lua scenario script.") var scenario: String
    @Option(name: .customLong("plugin-path"), help: "A folder of plugin bundles, searched before REHEARSE_PLUGIN_PATH and ./plugins (repeatable).")
    var pluginPath: [String] = []
    @Flag(name: .customLong("strict-wire"), help: "Judge customMetrics sent as a JSON object as Azure's extension does (Unknown).")
    var strictWire = false
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

    func options(seed: UInt64, print: @escaping (String) -> Void) throws -> ScenarioOptions {
        var options = ScenarioOptions()
        options.seed = seed
        try checkPluginPaths(pluginPath)
        options.pluginPath = pluginPath
        options.strictWire = strictWire
        // Each limit through the one checked conversion: the engine's queue numbers instances
        // and actions in 32 bits, the run backstop counts milliseconds in 32 bits, and every
        // other count stops at 10^15 so that no arithmetic on it can overflow.
        let most = CheckedNumber.largestCount, int32 = Int(Int32.max)
        let limits = [(Diagnostics.option(for: RunLimit.actions), maxActions, int32), (Diagnostics.option(for: RunLimit.events), maxEvents, most),
                      (Diagnostics.option(for: RunLimit.instances), maxInstances, int32),
                      (Diagnostics.option(for: RunLimit.modelVersions), maxModelVersions, most), (Diagnostics.option(for: RunLimit.probes), maxProbes, most),
                      (Diagnostics.option(for: LuaRunLimit.cpuTime), maxScriptSeconds, Int(UInt32.max) / 1000),
                      (Diagnostics.option(for: LuaRunLimit.instructions), maxScriptInstructions, most)]
        for (option, value, largest) in limits {
            _ = try CheckedNumber.whole(value, field: option, in: 1...largest)
        }
        options.limits.runWallClockMilliseconds = maxScriptSeconds * 1000
        options.limits.runInstructions = maxScriptInstructions
        options.runLimits = RunLimits(actions: maxActions, events: maxEvents, instances: maxInstances, modelVersions: maxModelVersions,
                                      probes: maxProbes)
        if let lock {
            guard FileManager.default.fileExists(atPath: lock) else { throw InputError(option: "--lock", lock, problem: "no such file") }
            options.lockPath = lock
        } else if FileManager.default.fileExists(atPath: PluginLock.fileName) {
            options.lockPath = PluginLock.fileName
        }
        options.parameters = try parameterValues(parameters)
        options.print = print
        options.recordEvents = false
        switch ISODuration.parse(timeLimit) {
        case .success(let ms): options.timeLimit = ms
        case .failure(let error): throw InputError(option: "--time-limit", ScriptText.escaped(timeLimit), problem: "\(error)", allowed: "an ISO 8601 duration such as P7D, PT12H or PT90M")
        }
        return options
    }
}

/// Loads a scenario and warns of what its loading found; its errors end the command (exit 2).
func loadScenario(_ arguments: ScenarioArguments, seed: UInt64, print: @escaping (String) -> Void) throws -> ScenarioDefinition {
    let scenario = try ScenarioDefinition(path: arguments.scenario, options: try arguments.options(seed: seed, print: print))
    for warning in scenario.warnings { warn(warning) }
    return scenario
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
