import ArgumentParser
import AzureWire
import Formats
import Foundation
import LuaHost
import Reports
import Scenario
import UpgradeEngine

/// `rehearse plan`: the batches of the scenario's first rolling upgrade, without running it.
struct PlanCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "plan",
        abstract: "Show the batches of the scenario's first rolling upgrade without running it."
    )

    @OptionGroup var scenario: ScenarioArguments
    @Option(help: "Seed of math.random and every seeded failure injector.") var seed: UInt64 = 0
    @Option(name: .customLong("set"), help: "A policy field, PATH=VALUE (e.g. rollingUpgradePolicy.maxBatchInstancePercent=10); repeatable.")
    var set: [String] = []
    @Flag(name: .customLong("json"), help: "Print the plan as JSON.") var jsonFlag = false
    @OptionGroup var format: OutputOption

    func validate() throws { try format.refuseTable(with: jsonFlag) }
    /// `--json` or `--output json`.
    var json: Bool { jsonFlag || format.output == .json }

    func run() throws {
        let overrides = try parseOverrides(set)
        let loaded = try loadScenario(scenario, seed: seed, print: { printError("print: \($0)") })
        do { _ = try Rehearsal.scaleSet(loaded, overrides: overrides) } catch { throw fail(error) }
        let plan: UpgradePlan
        do {
            plan = try Rehearsal.plan(loaded, seed: seed, overrides: overrides, print: { printError("print: \($0)") }) { event in
                warnIfWire(event)
            }
        } catch {
            throw fail(error.error)
        }
        let scaleSet = try Rehearsal.scaleSet(loaded, overrides: overrides)
        let arithmetic = PolicyArithmetic(definition: scaleSet, plan: plan)
        if json {
            // The plan's fields, with the policy in numbers after the batches.
            guard case .ordered(var fields) = plan.json else { return print(plan.json.serialized(pretty: false)) }
            fields.insert(JSONField("policy", arithmetic.json), at: 1)
            print(JSON.ordered(fields).serialized(pretty: false))
            return
        }
        if format.output == .table {
            for line in Tables.plan(plan) { printText(line) }
            return
        }
        for line in RunText.arithmetic(arithmetic, policy: scaleSet.policy.rolling) { printText(line) }
        printText("")
        for line in RunText.plan(plan) { printText(line) }
        for fragile in arithmetic.fragilities { warn(fragile.message, location: fragile.field) }
    }
}
