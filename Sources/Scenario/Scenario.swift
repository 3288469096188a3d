public import AzureWire
import Foundation
public import LuaHost
public import UpgradeEngine

/// How a scenario runs.
public struct ScenarioOptions {
    /// Seeds `math.random` (and so every seeded failure injector).
    public var seed: UInt64 = 0
    /// `--plugin-path` folders, searched before `REHEARSE_PLUGIN_PATH` and `./plugins`.
    public var pluginPath: [String] = []
    /// A `rehearse.lock` whose versions and file hashes bind the bundles the script requires.
    public var lockPath: String?
    /// Judge custom metrics sent as a JSON object as Azure's extension does.
    public var strictWire = false
    /// Limits of every call into the script.
    public var limits = LuaLimits()
    /// Limits of the run as a whole (actions scheduled, events, instances created).
    public var runLimits = RunLimits()
    /// The virtual time after which a run stops with work left, in milliseconds.
    public var timeLimit: Millis = 7 * 86_400_000
    /// Where `print` in scripts goes.
    public var print: (String) -> Void = { Swift.print($0) }
    /// Whether the run keeps every event in its `RunRecord` (a caller that streams events, as
    /// the command line does, can spare the memory).
    public var recordEvents = true
    /// The environment the plugin path is read from.
    public var environment: [String: String] = ProcessInfo.processInfo.environment

    /// The defaults: seed 0, no plugin path, a 7-day limit, events kept.
    public init() {}
}

/// A scenario script loaded and checked: its scale set, its behaviours and its timeline.
/// Loading runs the script's top level in the sandbox; nothing of the engine runs yet.
public final class Scenario {
    /// The script's path.
    public let path: String
    /// How it runs.
    public let options: ScenarioOptions
    let runtime: ScriptRuntime
    var state: LuaState { runtime.state }
    /// The plugin catalog, read the first time a script requires something that is not built in.
    public var catalog: PluginCatalog { plugins.catalog }
    let plugins: PluginSession
    /// The scale set the script describes.
    public private(set) var definition = ScaleSetDefinition(name: "vmss", capacity: 0)
    /// Warnings about the definition that do not stop a run.
    public private(set) var warnings: [String] = []

    var scalesetLocation: String?
    var health: Callback?
    var phase: Callback?
    var fault: Callback?
    var deferral: Callback?
    var timeline: [(time: Millis, callback: Callback)] = []
    /// The script's `expect` calls, read when it was loaded.
    public private(set) var expectations: [Expectation] = []
    var expectationTables: [(table: LuaValue, location: String)] = []
    var scalesetValue: LuaValue?

    typealias Activity = ScriptRuntime.Activity
    var activity: Activity {
        get { runtime.activity }
        set { runtime.activity = newValue }
    }
    var fatal: (any Error)? {
        get { runtime.fatal }
        set { runtime.fatal = newValue }
    }

    /// The simulation an `at` callback acts on, while one runs.
    var simulation: Simulation?

    /// A script function the engine calls, with where it was registered.
    struct Callback {
        var function: LuaFunctionRef
        var location: String
    }

    /// Loads `path`, runs its top level in a fresh sandbox and builds the scale set, reporting
    /// every problem of the definition at once.
    public init(path: String, options: ScenarioOptions = ScenarioOptions()) throws(ScenarioError) {
        self.path = path
        self.options = options
        plugins = PluginSession(searchPath: PluginCatalog.searchPath(explicit: options.pluginPath, environment: options.environment),
                                lockPath: options.lockPath)
        do {
            runtime = ScriptRuntime(state: try LuaState(limits: options.limits), model: [:])
        } catch {
            throw .file("cannot create a Lua state: \(error)")
        }
        let plugins = self.plugins
        let runtime = self.runtime
        var sandbox = LuaSandboxOptions(seed: options.seed, print: options.print, clock: { [unowned runtime] in Double(runtime.now) / 1000 })
        sandbox.resolveModule = { name in
            if let builtin = BuiltinLibrary.modules[name] { return (builtin, "(builtin)/\(name).lua") }
            if let found = try plugins.require(name) { return found }
            let catalog = plugins.catalog
            let names = catalog.names
            throw LuaArgumentError(position: 1, problem: "module '\(name)' not found: it is neither a built-in module (\(BuiltinLibrary.modules.keys.sorted().joined(separator: ", "))) nor a plugin bundle on the plugin path (\(catalog.searchPath.map(absolutePath).joined(separator: ", "))\(names.isEmpty ? "" : "; bundles: " + names.joined(separator: ", ")))")
        }
        do {
            try state.openSandbox(sandbox)
            registerAPI()
        } catch let error as LuaError {
            throw .script(error, context: nil)
        } catch {
            throw .file("\(error)")
        }
        guard FileManager.default.fileExists(atPath: path) else { throw .file("cannot read \(path): no such file") }
        do {
            let chunk = try state.loadFile(path)
            try state.call(chunk, [])
            state.release(chunk)
        } catch var error as LuaError {
            if error.kind == .file { throw .file(error.message) }
            error.function = nil  // the location already names the file
            throw .script(error, context: nil)
        } catch {
            throw .file("\(error)")
        }
        activity = .idle
        try buildDefinition()
    }

    private func buildDefinition() throws(ScenarioError) {
        guard let value = scalesetValue else {
            throw .definition([Problem(field: "scaleset", "the script never calls scaleset { ... }; it must describe exactly one scale set")], location: path)
        }
        var reader = DefinitionReader()
        definition = reader.read(value)
        var problems = reader.problems
        if health == nil && definition.hasHealthSource && definition.healthExtension != nil {
            warnings.append("\(path): no health(...) function: every probe answers Healthy")
        }
        if let phase, definition.hasHealthSource, !(definition.healthExtension?.richStates ?? false) {
            problems.append(Problem(field: "phase at \(phase.location)",
                                    "phase() stands for the PhaseOrderingNumber custom metric, which needs rich health states (typeHandlerVersion 2.0) over http or https; this scale set's health source reports binary states or tcp"))
        }
        let automatic = definition.policy.automaticOS
        if let deferral, !(automatic.enableAutomaticOSUpgrade && automatic.osRollingUpgradeDeferral) {
            problems.append(Problem(field: "deferral at \(deferral.location)",
                                    "deferral() answers the notice of an automatic OS upgrade, which needs upgradePolicy.automaticOSUpgradePolicy with enableAutomaticOSUpgrade and osRollingUpgradeDeferral both true; as written it would never be called"))
        }
        for (table, location) in expectationTables {
            let (expectation, found) = Expectation.parse(table, location: location)
            expectations.append(expectation)
            problems += found.map { Problem(field: "expect at \(location)", $0) }
        }
        warnings += reader.warnings.map(\.description)
        guard problems.isEmpty else { throw .definition(problems, location: scalesetLocation) }
    }

}

/// The bundles of one scenario: the catalog (read on first use, so a run whose script requires
/// no bundle reads none), the lock file, and the versions chosen so far.
final class PluginSession {
    let searchPath: [String]
    let lockPath: String?
    private var built: PluginCatalog?
    private var resolver: BundleResolver<PluginBundle>?
    private var lock: PluginLock?
    private var verified: Set<String> = []

    init(searchPath: [String], lockPath: String?) {
        self.searchPath = searchPath
        self.lockPath = lockPath
    }

    var catalog: PluginCatalog {
        if let built { return built }
        let catalog = PluginCatalog(searchPath: searchPath)
        built = catalog
        return catalog
    }

    /// `require "<bundle>"` (its entry module) or `require "<bundle>.<module>"` (a file inside
    /// it): nil when no bundle has that name. The version is the resolver's choice; a locked
    /// bundle must have exactly the files the lock recorded.
    func require(_ name: String) throws -> (source: String, path: String)? {
        let head = String(name.split(separator: ".", maxSplits: 1).first ?? "")
        guard !catalog.versions(of: head).isEmpty else { return nil }
        do {
            if resolver == nil {
                if let lockPath { lock = try PluginLock.read(lockPath) }
                resolver = catalog.resolver(lock: lock)
            }
            let bundle = try resolver!.select(head, by: "the scenario")
            if let entry = lock?.entry(named: head), verified.insert(head).inserted {
                let changes = PluginLock.differences(entry, folder: bundle.folder, shownAs: bundle.folder)
                guard changes.isEmpty else {
                    verified.remove(head)
                    throw PluginProblem("bundle \(bundle.manifest.label) differs from \(lockPath ?? PluginLock.fileName): \(changes.joined(separator: "; "))")
                }
            }
            let rest = name.count > head.count ? String(name.dropFirst(head.count + 1)) : bundle.manifest.entry
            let found = try ModuleFinder(folders: [bundle.folder]).find(rest)
            return (found.source, found.displayPath)
        } catch let problem as PluginProblem {
            throw LuaArgumentError(position: 1, problem: problem.message)
        }
    }
}
