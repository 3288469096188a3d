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
        abstract: "Check a scenario (.lua), a scale set document (az vmss show, ARM template, compiled Bicep, Terraform plan) or an upgradePolicy (.json); report every problem at once; exit 0 or 2."
    )

    @Argument(help: "A Lua scenario script, a scale set document or a JSON upgradePolicy.") var file: String
    @Option(help: "With a template or plan holding several scale sets: the one to check (name, symbolic name or address).")
    var resource: String?
    @Option(help: "With an ARM template: its parameters file.") var parameters: String?
    @Option(name: .customLong("plugin-path"), help: "A folder of plugin bundles (repeatable).") var pluginPath: [String] = []

    func run() throws {
        if file.lowercased().hasSuffix(".json") {
            // Sized before it is read: a policy document is small, and a huge file is refused
            // without being loaded.
            let data: [UInt8]
            do { data = try BoundedFile.read(file, maxBytes: BoundedFile.maxSourceBytes) } catch { throw fail(InputError(file, problem: "\(error)")) }
            if let document = try? JSON.parse(String(decoding: data, as: UTF8.self)), let format = ScaleSetImport.format(of: document) {
                let imported = try importScaleSet(file, resource: resource, parameters: parameters)
                let d = imported.definition
                print("\(file): ok (\(format.rawValue): \(d.name), \(d.capacity) instances, \(d.orchestration.rawValue), \(d.policy.mode.rawValue) mode\(d.zones.isEmpty ? "" : ", zones \(d.zones.joined(separator: ","))"))")
                return
            }
            if let document = try? JSON.parse(String(decoding: data, as: UTF8.self)), case .array = document, InstanceList.matches(document) {
                let fleet = try importFleet(file)
                print("\(file): ok (an instance list: \(fleet.count) instances, \(fleet.count { !$0.latestModelApplied }) not on the latest model)")
                return
            }
            if case .string(let schema)? = (try? JSON.parse(String(decoding: data, as: UTF8.self)))?.member("$schema"), schema.contains("deploymentParameters") {
                throw fail(InputError(file, problem: "is an ARM parameters file", allowed: "the template, with --parameters \(file)"))
            }
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
