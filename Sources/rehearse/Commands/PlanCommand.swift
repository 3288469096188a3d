import ArgumentParser
import AzureWire
import Formats
import Foundation
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
    @OptionGroup var seeded: SeedOption
    @OptionGroup var policy: PolicySetOption
    @OptionGroup var format: JSONOutputOptions

    /// `--json` or `--output json`.
    var json: Bool { format.json }
    /// The seed of the plan and of the run that measures the boot.
    var seed: UInt64 { seeded.seed }

    func run() throws {
        let overrides = try policy.overrides()
        let (loaded, inputs) = try scenario.load(seed: seed, overrides: overrides, print: { printError("print: \($0)") })
        _ = try Rehearsal.scaleSet(loaded, overrides: overrides)
        let plan: UpgradePlan
        do {
            plan = try Rehearsal.plan(loaded, inputs, print: { printError("print: \($0)") }) { event in
                warnIfWire(event)
            }
        } catch {
            throw error.error
        }
        var scaleSet = try Rehearsal.scaleSet(loaded, overrides: overrides)
        // The policy in numbers is the one the upgrade used (an automatic OS upgrade may use the default).
        if let used = plan.policy { scaleSet.policy.rolling = used }
        let arithmetic = PolicyArithmetic(definition: scaleSet, plan: plan)
        let mode = scaleSet.policy.mode
        // Manual and Automatic scale sets whose scenario starts no rolling upgrade are planned as
        // what they do, for the fleet they start with: no batches.
        let modeOnly = plan.assumed && mode != .rolling
        let startIDs = scaleSet.fleet.map { $0.map(\.id) } ?? Array(0..<scaleSet.capacity)
        let protectedAtStart = scaleSet.protected.union(scaleSet.fleet.map { $0.filter(\.protectFromScaleSetActions).map(\.id) } ?? [])
        let atOnce = startIDs.filter { !protectedAtStart.contains($0) }.sorted()
        // One run of the same seed says how long the application takes to be Healthy after an
        // upgrade, which the shortest duration otherwise leaves out.
        var boot: MeasuredBoot?
        if !modeOnly && !plan.batches.isEmpty {
            var measured = inputs
            measured.recordEvents = true
            boot = (try? Rehearsal.run(loaded, measured)).flatMap { MeasuredBoot($0.events) }
        }
        let withBoot = boot.map { $0.shortest(batches: plan.batches.count, pause: scaleSet.policy.rolling.pauseTimeBetweenBatches) }
        if json {
            // The plan's fields, with the policy in numbers after the batches.
            var plan = plan
            if modeOnly { plan.batches = [] }
            guard case .ordered(var fields) = plan.json else { return print(plan.json.serialized(pretty: false)) }
            var policy = arithmetic.json
            if case .ordered(var numbers) = policy {
                numbers.append(JSONField("shortestWithBootSeconds", withBoot.map { .int($0 / 1000) } ?? .null))
                numbers.append(JSONField("measuredBoot", boot.map {
                    .ordered([JSONField("operationSeconds", .double(Double($0.operation) / 1000)), JSONField("toHealthySeconds", .double(Double($0.toHealthy) / 1000)),
                              JSONField("upgrades", .int($0.upgrades)), JSONField("seed", .string(String(seed)))])
                } ?? .null))
                policy = .ordered(numbers)
            }
            fields.insert(JSONField("mode", .string(mode.rawValue)), at: 1)
            fields.insert(JSONField("policy", modeOnly ? .null : policy), at: 2)
            if modeOnly {
                fields = fields.map { $0.key == "protected" ? JSONField("protected", .array(protectedAtStart.sorted().map(JSON.int))) : $0 }
                fields.append(JSONField("atOnce", .array((mode == .automatic ? atOnce : []).map(JSON.int))))
                fields.append(JSONField("waitsForManualUpgrade", .array((mode == .manual ? atOnce : []).map(JSON.int))))
            }
            print(JSON.ordered(fields).serialized(pretty: false))
            return
        }
        if format.output == .table {
            for line in Tables.plan(plan) { printText(line) }
            return
        }
        if modeOnly {
            for line in RunText.modePlan(mode, outdated: atOnce, protected: protectedAtStart.sorted()) { printText(line) }
            return
        }
        for line in RunText.arithmetic(arithmetic, policy: scaleSet.policy.rolling) { printText(line) }
        if let boot, let withBoot {
            printText("  with the boot         \(ISODuration.format(withBoot)) (median \(ISODuration.format(boot.toHealthy)) from the end of an upgrade to Healthy, \(boot.upgrades) upgrades of a run with seed \(seed))")
        } else {
            printText("  (the shortest duration excludes the application's boot: no upgraded instance became Healthy in a run with seed \(seed))")
        }
        printText("")
        for line in RunText.plan(plan) { printText(line) }
        for fragile in arithmetic.fragilities { warn(fragile.message, location: .document(path: nil, field: fragile.field)) }
    }
}
