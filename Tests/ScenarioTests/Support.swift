import Foundation
import Scenario
import UpgradeEngine
import XCTest

/// The repository root, found from this file's path.
let repositoryRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path

/// Options that find the repository's plugins and keep prints.
func options(seed: UInt64 = 0, printed: ((String) -> Void)? = nil) -> ScenarioOptions {
    var o = ScenarioOptions()
    o.seed = seed
    o.pluginPath = [repositoryRoot + "/plugins"]
    o.environment = [:]
    o.print = printed ?? { _ in }
    return o
}

/// Writes a scenario to a temporary file and returns its path.
func writeScenario(_ text: String, name: String = "scenario.lua") throws -> String {
    let dir = FileManager.default.temporaryDirectory.appendingPathComponent("rehearse-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    let path = dir.appendingPathComponent(name).path
    try text.write(toFile: path, atomically: true, encoding: .utf8)
    return path
}

/// A loaded scenario, the options it was loaded with and the inputs of its runs: runs print
/// through the options' sink, and a failed run throws its `ScenarioError` (the seed is the test's own).
struct Loaded {
    let definition: ScenarioDefinition
    let options: ScenarioOptions
    let inputs: RunInputs

    func run(onEvent: (Event) -> Void = { _ in }) throws -> RunRecord {
        do {
            return try Rehearsal.run(definition, inputs, printAt: { [print = options.print] in print($1) }, onEvent: onEvent)
        } catch {
            throw error.error
        }
    }

    func plan(onEvent: (Event) -> Void = { _ in }) throws -> UpgradePlan {
        do {
            return try Rehearsal.plan(definition, inputs, printAt: { options.print($1) }, onEvent: onEvent)
        } catch {
            throw error.error
        }
    }
}

/// Loads the scenario at `path`; its runs take `configure`'s inputs (by default the options'
/// seed and limits).
func load(path: String, options: ScenarioOptions, _ configure: (inout RunInputs) -> Void = { _ in }) throws -> Loaded {
    var inputs = RunInputs(seed: options.seed, limits: options.limits)
    configure(&inputs)
    return Loaded(definition: try ScenarioDefinition(luaScript: path, options: options), options: options, inputs: inputs)
}

/// Runs the scenario `text` and returns the record, its events and what the script printed.
func runScript(_ text: String) throws -> (RunRecord, [Event], [String]) {
    var printed: [String] = []
    let loaded = try load(path: try writeScenario(text), options: options(printed: { printed.append($0) }))
    var events: [Event] = []
    let record = try loaded.run { events.append($0) }
    return (record, events, printed)
}

/// Runs a scenario file and returns its record and events.
func runScenario(_ path: String, seed: UInt64 = 0, strictWire: Bool = false) throws -> (RunRecord, [Event]) {
    var events: [Event] = []
    let result = try load(path: path, options: options(seed: seed)) { $0.strictWire = strictWire }.run { events.append($0) }
    return (result, events)
}

/// Each batch's instance ids, as "1, 2", from the typed `batchStarted` events.
func batches(_ events: [Event]) -> [String] {
    events.compactMap { event in
        if case .batchStarted(let ids, _) = event.payload { return ids.map(String.init).joined(separator: ", ") }
        return nil
    }
}

/// A minimal scale set in Lua, for tests that vary one thing.
let baseScaleSet = """
    scaleset {
      name = "web", capacity = 10, model = { image = "v1" },
      upgradePolicy = { mode = "Rolling" },
      healthExtension = { protocol = "http", port = 8000, requestPath = "/health" },
    }
    """

/// What a Swift behaviour notes during a run, for the test to read afterwards: behaviours are
/// made in a `@Sendable` factory, so what they share with the test sits behind a lock.
final class Notes<Value: Sendable>: @unchecked Sendable {
    // Safe: every access holds `lock`.
    private let lock = NSLock()
    private var values: [Value] = []

    /// Notes `value`.
    func append(_ value: Value) { lock.withLock { values.append(value) } }

    /// Everything noted, in order.
    var all: [Value] { lock.withLock { values } }
}
