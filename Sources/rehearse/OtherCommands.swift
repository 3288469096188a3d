import ArgumentParser
import AzureWire
import Foundation
import LuaHost
import Scenario
import UpgradeEngine

/// `rehearse plan`: the batches of the scenario's first rolling upgrade, without running it.
struct PlanCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "plan",
        abstract: "Show the batches of the scenario's first rolling upgrade without running it."
    )

    @OptionGroup var scenario: ScenarioArguments
    @Flag(help: "Print the plan as JSON.") var json = false

    func run() throws {
        let loaded = try loadScenario(scenario, print: { printError("print: \($0)") })
        let plan: UpgradePlan
        do {
            plan = try Rehearsal.plan(loaded, seed: scenario.seed, print: { printError("print: \($0)") }) { event in
                warnIfWire(event)
            }
        } catch {
            throw fail(error.error)
        }
        if json {
            print(plan.json.serialized(pretty: false))
            return
        }
        for (i, batch) in plan.batches.enumerated() {
            let members = batch.instances.map { vm in
                "\(vm.id)" + (vm.zone.map { " z\($0)" } ?? "") + " fd\(vm.faultDomain) ud\(vm.updateDomain)"
            }
            print("batch \(i + 1) (\(batch.phase.map { "phase \($0)" } ?? "unphased")): \(members.joined(separator: ", "))")
        }
        if plan.batches.isEmpty { print("no batches: no instance needs an upgrade") }
        if !plan.withoutMetrics.isEmpty { print("without metrics (latest answer not Healthy): \(plan.withoutMetrics)") }
        print("skipped: \(plan.skipped)")
        print("protected: \(plan.protected)")
    }
}

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
            do { data = try BoundedFile.read(file, maxBytes: BoundedFile.maxSourceBytes) } catch { throw fail(Message("\(file): \(error)")) }
            do {
                let policy = try UpgradePolicy.parse(json: String(decoding: data, as: UTF8.self))
                print("\(file): ok (mode \(policy.mode.rawValue), batches of \(policy.rolling.maxBatchInstancePercent)%)")
            } catch {
                throw fail(Message("\(file): \(error)"))
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

/// `rehearse api generate`: the editor and lint files, from the API described in the code.
struct APICommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "api",
        abstract: "Generate the LuaLS definitions, scripts/.luarc.json and .luacheckrc from the scripting API.",
        subcommands: [Generate.self]
    )

    struct Generate: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Write scripts/types/*.lua, scripts/.luarc.json and .luacheckrc under --root, with a definition file for every bundle in ROOT/plugins.")
        @Option(help: "The project root.") var root = "."

        func run() throws {
            let catalog = PluginCatalog(searchPath: [root + "/plugins"])
            do {
                for path in try ScriptingAPI.write(root: root, bundles: catalog.bundles.map(\.manifest)) { print(path) }
            } catch {
                throw fail(Message("cannot write the generated files: \(error)"))
            }
        }
    }
}
