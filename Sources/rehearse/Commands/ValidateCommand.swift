import ArgumentParser
import AzureWire
import Formats
import Foundation
import LuaHost
import Scenario
import UpgradeEngine

/// `rehearse validate`: check a scenario or an upgrade policy, reporting every problem.
struct ValidateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "validate",
        abstract: "Check a scenario (.lua) or an upgradePolicy (.json) and report every problem at once; exit 0 or 2."
    )

    @Argument(help: "A Lua scenario script or a JSON upgradePolicy.") var file: String
    @Option(name: .customLong("plugin-path"), help: "A folder of plugin bundles (repeatable).") var pluginPath: [String] = []

    func run() throws {
        if file.lowercased().hasSuffix(".json") {
            // Sized before it is read: a policy document is small, and a huge file is refused
            // without being loaded.
            let data: [UInt8]
            do { data = try BoundedFile.read(file, maxBytes: BoundedFile.maxSourceBytes) } catch { throw fail(InputError(file, problem: "\(error)")) }
            do {
                let policy = try UpgradePolicy.parse(json: String(decoding: data, as: UTF8.self))
                print("\(file): ok (mode \(policy.mode.rawValue), batches of \(policy.rolling.maxBatchInstancePercent)%)")
            } catch {
                throw fail(InputError(file, problem: "\(error)"))
            }
            return
        }
        var options = ScenarioOptions()
        try checkPluginPaths(pluginPath)
        options.pluginPath = pluginPath
        options.print = { _ in }
        do {
            let scenario = try ScenarioDefinition(path: file, options: options)
            for warning in scenario.warnings { warn(warning) }
            let d = scenario.scaleSet
            print("\(file): ok (\(d.name), \(d.capacity) instances, \(d.policy.mode.rawValue) mode\(d.zones.isEmpty ? "" : ", zones \(d.zones.joined(separator: ","))"))")
        } catch {
            throw fail(error)
        }
    }
}
