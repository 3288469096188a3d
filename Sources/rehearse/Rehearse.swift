import ArgumentParser
import AzureWire
import Foundation
import LuaHost
import Scenario
import UpgradeEngine

/// The version `rehearse --version` prints.
let rehearseVersion = "0.6.0"

/// `rehearse`: rehearse Azure-style rolling upgrades of scale sets described in Lua scenarios.
@main
struct Rehearse: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rehearse",
        abstract: "Rehearse Azure VM scale set rolling upgrades on a virtual clock.",
        discussion: """
            Exit status: 0 when the run went as expected (every expect{} held), 1 when an expectation \
            failed, 2 for a bad scenario, a policy error or a script error.
            """,
        version: rehearseVersion,
        subcommands: [RunCommand.self, PlanCommand.self, ValidateCommand.self, PluginsCommand.self, ProbeCommand.self, APICommand.self]
    )

    /// Runs the command line. A bad option or argument is bad input like any other: exit 2 with
    /// the parser's message (what is wrong and the usage), not the parser's own 64.
    static func main() {
        // A closed pipe (`--events - | head -c 10`) is a write error reported with exit 2, not a
        // death by SIGPIPE.
        signal(SIGPIPE, SIG_IGN)
        do {
            var command = try parseAsRoot()
            try command.run()
        } catch {
            if exitCode(for: error) == .validationFailure {
                printError(fullMessage(for: error))
                Foundation.exit(2)
            }
            exit(withError: error)
        }
    }
}

/// Options every command that loads a scenario shares.
struct ScenarioArguments: ParsableArguments {
    @Argument(help: "The Lua scenario script.") var scenario: String
    @Option(help: "Seed of math.random and every seeded failure injector.") var seed: UInt64 = 0
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
    @Option(name: .customLong("max-script-seconds"), help: "Wall-clock seconds the scripts of one run may spend in all (a last-resort backstop).")
    var maxScriptSeconds = LuaLimits().runWallClockMilliseconds / 1000

    func options(print: @escaping (String) -> Void) throws -> ScenarioOptions {
        var options = ScenarioOptions()
        options.seed = seed
        try checkPluginPaths(pluginPath)
        options.pluginPath = pluginPath
        options.strictWire = strictWire
        let limits = [("--max-actions", maxActions), ("--max-events", maxEvents), ("--max-instances", maxInstances),
                      ("--max-model-versions", maxModelVersions), ("--max-probes", maxProbes), ("--max-script-seconds", maxScriptSeconds)]
        for (option, value) in limits where value < 1 {
            throw fail(Message("\(option) \(value): allowed a whole number of at least 1"))
        }
        options.limits.runWallClockMilliseconds = maxScriptSeconds * 1000
        options.runLimits = RunLimits(actions: maxActions, events: maxEvents, instances: maxInstances, modelVersions: maxModelVersions,
                                      probes: maxProbes)
        if let lock {
            guard FileManager.default.fileExists(atPath: lock) else { throw fail(Message("--lock \(lock): no such file")) }
            options.lockPath = lock
        } else if FileManager.default.fileExists(atPath: PluginLock.fileName) {
            options.lockPath = PluginLock.fileName
        }
        options.print = print
        options.recordEvents = false
        switch ISODuration.parse(timeLimit) {
        case .success(let ms): options.timeLimit = ms
        case .failure(let error): throw fail(Message("--time-limit \(ScriptText.escaped(timeLimit)): \(error); an ISO 8601 duration such as P7D, PT12H or PT90M is allowed"))
        }
        return options
    }
}

/// Writes to standard error, with control characters shown rather than interpreted (messages
/// carry text from scripts and manifests).
func printError(_ text: String) {
    FileHandle.standardError.write(Data((ScriptText.escaped(text, keepingNewlines: true) + "\n").utf8))
}

/// Prints what `error` stands for and returns its exit status (2 for bad input).
func fail(_ error: any Error) -> ExitCode {
    // Already reported: an exit status made by an inner `fail`.
    if let code = error as? ExitCode { return code }
    let diagnostics = Diagnostic.of(error)
    report(diagnostics, header: (error as? ScenarioError).flatMap(definitionHeader))
    return ExitCode(diagnostics.map(\.exitCode).max() ?? 2)
}

/// The one renderer of diagnostics on standard error. One diagnostic is one line,
/// `rehearse: error: message (context)`, with its location first when the message does not
/// carry it; several problems of one definition are listed under `header`.
func report(_ diagnostics: [Diagnostic], header: String? = nil) {
    if let header, diagnostics.count > 1 {
        printError("rehearse: error: \(header)\(diagnostics.count) problems in the scenario:")
        for d in diagnostics { printError("  - \(d.location.map { "\($0): " } ?? "")\(d.message)") }
        return
    }
    for d in diagnostics {
        var line = "rehearse: \(d.severity.rawValue): "
        // The definition's location heads only the problems located by field, not those that
        // carry their own file:line (an expect, phase or deferral call).
        let header = d.context == nil ? nil : header
        if let header { line += header }
        if let location = d.location, !d.message.contains(location) { line += "\(location): " }
        line += d.message
        if let context = d.context, header == nil { line += " (\(context))" }
        printError(line)
    }
}

/// `file:line: ` before a definition's problems.
func definitionHeader(_ error: ScenarioError) -> String? {
    if case .definition(_, let location) = error { return location.map { "\($0): " } ?? "" }
    return nil
}

/// Every `--plugin-path` must be a folder: a path that does not exist is bad input, not an empty
/// plugin path.
func checkPluginPaths(_ paths: [String]) throws {
    for path in paths {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw fail(Message("--plugin-path \(path): no such folder; allowed a folder that holds plugin bundles"))
        }
    }
}

/// A warning on standard error, through the same renderer.
func warn(_ message: String, location: String? = nil) {
    report([Diagnostic(.warning, message, location: location)])
}

/// A warning on standard error for an event that is one (a wire oddity, instances without metrics).
func warnIfWire(_ event: Event) {
    switch event.payload {
    case .wireWarning(let name, let message): warn(message, location: name)
    case .metricsMissing: warn(event.detail)
    default: break
    }
}

/// Loads a scenario, turning its errors into exit status 2.
func loadScenario(_ arguments: ScenarioArguments, print: @escaping (String) -> Void) throws -> ScenarioDefinition {
    do {
        let scenario = try ScenarioDefinition(path: arguments.scenario, options: try arguments.options(print: print))
        for warning in scenario.warnings { warn(warning) }
        return scenario
    } catch let error as ValidationError {
        throw error
    } catch {
        throw fail(error)
    }
}

/// A plain error message for the command line.
struct Message: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
