import Formats
import Foundation
import LuaHost
import Plugins
import Scenario
import UpgradeEngine

/// The identity written into every part and tune state (`SweepIdentity`): the scenario's bytes,
/// the plugin lock's bytes, every parameter value, every limit, the time limit, wire strictness
/// and, for a comparison or a search, the whole grid. `--jobs` and the seeds are not in it: they
/// never change a run's result.
extension ScenarioArguments {
    /// The identity of runs of `definition` with `inputs`; `grid`, every combination of a
    /// comparison or a search as written (each a list of `PATH=VALUE`), when there is one.
    func identity(_ definition: ScenarioDefinition, _ inputs: RunInputs, grid: [[String]]? = nil) throws -> SweepIdentity {
        var entries: [(String, String)] = [
            ("scenarioSha256", try Self.fileDigest(scenario, option: "scenario")),
            ("lockSha256", try lockPath.map { try Self.fileDigest($0, option: "--lock") } ?? "none"),
            ("timeLimit", ISODuration.format(inputs.timeLimit)), ("strictWire", String(inputs.strictWire)),
            ("maxActions", String(inputs.runLimits.actions)), ("maxEvents", String(inputs.runLimits.events)),
            ("maxInstances", String(inputs.runLimits.instances)), ("maxModelVersions", String(inputs.runLimits.modelVersions)),
            ("maxProbes", String(inputs.runLimits.probes)), ("maxScriptInstructions", String(inputs.limits.runInstructions)),
            ("maxScriptMilliseconds", String(inputs.limits.runWallClockMilliseconds)),
        ]
        let parameters = inputs.parameterValues ?? definition.parameterValues
        guard parameters.count <= SweepIdentity.maxParameters else {
            throw InputError(.file(scenario), problem: "declares \(parameters.count) parameters, too many to shard",
                             allowed: "at most \(SweepIdentity.maxParameters) parameters in a sharded sweep")
        }
        entries += parameters.map { ("param.\($0.key)", $0.value) }
        if let grid { entries.append(("grid", grid.map { "[" + $0.joined(separator: ", ") + "]" }.joined(separator: " "))) }
        return SweepIdentity(entries)
    }

    /// The lock file the runs are bound by: `--lock`, else `./rehearse.lock` when it exists.
    var lockPath: String? {
        loading.lock ?? (FileManager.default.fileExists(atPath: PluginLock.fileName) ? PluginLock.fileName : nil)
    }

    /// SHA-256 of the file at `path` (a scenario or a lock: at most 16 MiB), hex; exit 2 naming
    /// `option` when it cannot be read.
    static func fileDigest(_ path: String, option: String) throws -> String {
        do {
            return PluginArchive.sha256(try BoundedFile.read(path, maxBytes: 16 << 20))
        } catch {
            throw InputError(.file(path), problem: "cannot be read for the run identity (\(option)): \(error)")
        }
    }
}
