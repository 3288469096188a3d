public import Formats
import Foundation
public import LuaHost
import Plugins
public import UpgradeEngine

/// How a scenario is loaded and run.
public struct ScenarioOptions {
    /// The seed the top level runs with when the script is loaded (and a run's default seed).
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
    /// Where `print` in scripts goes while the script is loaded (runs take their own).
    public var print: (String) -> Void = { Swift.print($0) }
    /// Whether a run keeps every event in its `RunRecord` (a caller that streams events, as
    /// the command line does, can spare the memory).
    public var recordEvents = true
    /// The environment the plugin path is read from.
    public var environment: [String: String] = ProcessInfo.processInfo.environment
    /// Values of the script's `param(name, default)` parameters, by name, as written on the
    /// command line (`--param bootFailure=0.1`); each must be one the script declares.
    public var parameters: [String: String] = [:]
    /// Whether the engine asks the health function for runs of probes due at one instant (the
    /// default) or for one probe at a time; the events are the same (tests compare the two).
    var probesInRuns = true

    /// The defaults: seed 0, no plugin path, a 7-day limit, events kept.
    public init() {}

    /// What every run of a definition loaded with these options uses.
    var settings: RunSettings {
        RunSettings(searchPath: PluginCatalog.searchPath(explicit: pluginPath, environment: environment), lockPath: lockPath,
                    strictWire: strictWire, limits: limits, runLimits: runLimits, timeLimit: timeLimit, recordEvents: recordEvents,
                    probesInRuns: probesInRuns)
    }
}

/// How every run of a definition goes, fixed when it was loaded.
public struct RunSettings: Equatable, Sendable {
    /// The plugin folders, in search order (for a `require` the top level did not make).
    public var searchPath: [String]
    /// The lock file binding bundle versions, if any.
    public var lockPath: String?
    /// Judge custom metrics sent as a JSON object as Azure's extension does.
    public var strictWire: Bool
    /// Limits of every call into the script.
    public var limits: LuaLimits
    /// Limits of a run as a whole.
    public var runLimits: RunLimits
    /// The virtual time after which a run stops with work left, in milliseconds.
    public var timeLimit: Millis
    /// Whether a run keeps every event in its record.
    public var recordEvents: Bool
    /// Whether runs of probes are asked of the health function (`ScenarioOptions.probesInRuns`).
    var probesInRuns = true
}

/// A scenario as a value: everything a run needs and nothing live. Loading a script runs its top
/// level once, in a sandbox of its own, and keeps what it described: the scale set, the timeline,
/// the callbacks it registered, the expectations, and the source of the script and of every module
/// it required. `Rehearsal.run` makes a fresh Lua state from it for every run, so a definition can
/// be run any number of times, on any thread, with the same result for the same seed.
public struct ScenarioDefinition: Sendable {
    /// The script's path, as messages name it.
    public var path: String
    /// The script's text.
    public var source: String
    /// The scale set every run starts from. The script describes it; an importer or a caller may
    /// replace it (runs still take the callbacks and the timeline from the script).
    public var scaleSet: ScaleSetDefinition
    /// Where the script calls `scaleset { ... }` (`file:line`).
    public var scaleSetLocation: String?
    /// The actions the top level put on the timeline, in the order it did.
    public var timeline: [TimelineEntry]
    /// Where the script registers each callback; nil where it registers none.
    public var hooks: Hooks
    /// What every run must show at its end.
    public var expectations: [Expectation]
    /// The script's `risk { … }`: requirements on shares of runs that `sweep`, `compare`, `test` and
    /// `tune` judge; nil without one.
    public var risk: RiskQuestion?
    /// Every module the top level required beyond the built-in ones, by name: its source and the
    /// path it was read from. Runs read these, not the files.
    public var modules: [String: ModuleSource]
    /// The bundles those modules came from, with the version chosen and whether a lock bound it.
    public var bundles: [BundleChoice]
    /// What is odd about the definition without stopping a run.
    public var warnings: [String]
    /// Limits and options of every run.
    public var settings: RunSettings
    /// The parameters the script declares, by name.
    public var parameters: [String: ScenarioParameter]
    /// The values given for them (the rest take their defaults); every run's top level gets these.
    public var parameterValues: [String: String]
    /// The table the script gave `scaleset`, as a value: a run checks its own top level against it
    /// (without reading a `from` document again).
    var described: LuaValue
    /// The documents the scale set was read from (`from`, `parameters`), by path.
    public var documents: [String]

    /// The folder of the script at `path`: where `from` documents' relative paths start.
    static func folder(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    /// One action on the timeline: when, and where the script scheduled it.
    public struct TimelineEntry: Equatable, Sendable {
        /// Virtual time, in milliseconds.
        public var time: Millis
        /// `file:line` of the `at` call.
        public var location: String
    }

    /// Where each callback was registered (`file:line`).
    public struct Hooks: Equatable, Sendable {
        /// `health(...)`.
        public var health: String?
        /// `phase(...)`.
        public var phase: String?
        /// `fault(...)`.
        public var fault: String?
        /// `deferral(...)`.
        public var deferral: String?
    }

    /// A module's text and the path its errors name.
    public struct ModuleSource: Equatable, Sendable {
        /// The Lua source.
        public var source: String
        /// The path shown in errors (`plugins/slow-boot/init.lua`).
        public var path: String
    }

    /// A bundle the script required.
    public struct BundleChoice: Equatable, Sendable {
        /// The bundle's name.
        public var name: String
        /// The version chosen.
        public var version: String
        /// The folder it was read from.
        public var folder: String
        /// Whether `rehearse.lock` bound it (its files were checked against the lock).
        public var locked: Bool
    }

    /// Loads the script at `path`: runs its top level in a fresh sandbox (seeded with
    /// `options.seed`, printing through `options.print`) and reads what it described, reporting
    /// every problem of the definition at once.
    public init(path: String, options: ScenarioOptions = ScenarioOptions()) throws(ScenarioError) {
        guard FileManager.default.fileExists(atPath: path) else { throw .file(path: path, problem: "does not exist") }
        let data: [UInt8]
        do {
            data = try BoundedFile.read(path, maxBytes: BoundedFile.maxSourceBytes)
        } catch {
            throw .file(path: error.path, problem: error.problem)
        }
        if data.first == 0x1B {
            throw .script(LuaError(kind: .syntax, message: "\(path) is precompiled Lua bytecode; only source text is accepted"), context: nil)
        }
        let source = String(decoding: data, as: UTF8.self)
        let settings = options.settings
        let plugins = PluginSession(searchPath: settings.searchPath, lockPath: settings.lockPath)
        let session = try ScriptSession(path: path, source: source, seed: options.seed, limits: settings.limits,
                                        parameters: options.parameters, print: { [print = options.print] in print($1) }, printTopLevel: true, resolve: { name in try plugins.require(name) },
                                        searchPathText: { plugins.searchPathText })
        try self.init(path: path, source: source, session: session, plugins: plugins, settings: settings)
    }

    private init(path: String, source: String, session: ScriptSession, plugins: PluginSession, settings: RunSettings) throws(ScenarioError) {
        self.path = path
        self.source = source
        self.settings = settings
        parameters = session.parameters
        parameterValues = session.parameterValues
        let unknown = session.parameterValues.keys.sorted().filter { session.parameters[$0] == nil }
        let declared = session.parameters.keys.sorted()
        let parameterProblems = session.parameterProblems + unknown.map { name in
            Problem(at: .setting(.parameter(name), value: nil), declared.isEmpty ? "the script declares no parameters (param(\"name\", default))"
                                                               : "the script declares no such parameter; it declares \(declared.joined(separator: ", "))")
        }
        guard parameterProblems.isEmpty else { throw .definition(parameterProblems, location: nil) }
        guard let value = session.scalesetValue else {
            throw .definition([Problem(field: "scaleset", "the script never calls scaleset { ... }; it must describe exactly one scale set")], location: path)
        }
        var reader = DefinitionReader(folder: ScenarioDefinition.folder(of: path))
        let scaleSet = reader.read(value)
        var problems = reader.problems
        var warnings: [String] = []
        if session.health == nil && scaleSet.hasHealthSource && scaleSet.healthExtension != nil {
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
        self.risk = risk
        self.scaleSet = scaleSet
        described = value
        documents = reader.documents
        scaleSetLocation = session.scalesetLocation
        timeline = session.timeline.map { TimelineEntry(time: $0.time, location: $0.callback.location) }
        hooks = session.hooks
        self.expectations = expectations
        self.warnings = warnings
        modules = plugins.loaded
        bundles = plugins.chosen
    }
}

extension ScriptSession {
    /// Where each callback was registered.
    var hooks: ScenarioDefinition.Hooks {
        ScenarioDefinition.Hooks(health: health?.location, phase: phase?.location, fault: fault?.location, deferral: deferral?.location)
    }
}

/// The bundles of one load or run: the catalog (read on first use, so a script that requires no
/// bundle reads none), the lock file, the versions chosen so far, and every module read.
final class PluginSession {
    let searchPath: [String]
    let lockPath: String?
    private var built: PluginCatalog?
    private var resolver: BundleResolver<PluginBundle>?
    private var lock: PluginLock?
    private var verified: Set<String> = []
    /// Every module read, by the name it was required as.
    private(set) var loaded: [String: ScenarioDefinition.ModuleSource] = [:]
    /// Every bundle chosen, in the order first required.
    private(set) var chosen: [ScenarioDefinition.BundleChoice] = []

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

    /// The plugin path and the bundles on it, for a `module not found` message.
    var searchPathText: String {
        let names = catalog.names
        return catalog.searchPath.map(absolutePath).joined(separator: ", ") + (names.isEmpty ? "" : "; bundles: " + names.joined(separator: ", "))
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
            let entry = lock?.entry(named: head)
            if let entry, verified.insert(head).inserted {
                let changes = PluginLock.differences(entry, folder: bundle.folder, shownAs: bundle.folder)
                guard changes.isEmpty else {
                    verified.remove(head)
                    throw PluginProblem("bundle \(bundle.manifest.label) differs from \(lockPath ?? PluginLock.fileName): \(changes.joined(separator: "; "))")
                }
            }
            if !chosen.contains(where: { $0.name == head }) {
                chosen.append(ScenarioDefinition.BundleChoice(name: head, version: bundle.manifest.version.description, folder: bundle.folder,
                                                              locked: entry != nil))
            }
            let rest = name.count > head.count ? String(name.dropFirst(head.count + 1)) : bundle.manifest.entry
            let found = try ModuleFinder(folders: [bundle.folder]).find(rest)
            loaded[name] = ScenarioDefinition.ModuleSource(source: found.source, path: found.displayPath)
            return (found.source, found.displayPath)
        } catch let problem as PluginProblem {
            throw LuaArgumentError(position: 1, problem: problem.message)
        }
    }
}
