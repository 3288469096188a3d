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
    /// The seed of the plan and of the first run that measures the boot.
    var seed: UInt64 { seeded.seed }

    @Option(name: .customLong("boot-runs"), help: ArgumentHelp("Runs (seeds from --seed on) that measure the scenario's own boot for the duration's range; 0: the arithmetic alone.", discussion: "Each run stops when its first rolling upgrade ends, 24 h of virtual time after it started, or after 50,000,000 script instructions (all runs together at most 1,000,000,000: past 20 runs each gets its share); no run starts once 600 upgraded instances are measured."))
    var bootRuns: Int = 20

    func validate() throws {
        guard (0...1_000).contains(bootRuns) else { throw ValidationError("--boot-runs \(bootRuns) is not allowed; allowed 0 to 1000") }
    }

    func run() throws {
        let overrides = try policy.overrides()
        let (loaded, inputs) = try scenario.load(seed: seed, overrides: overrides, print: { printError("print: \($0)") })
        _ = try Rehearsal.scaleSet(loaded, overrides: overrides)
        let plan: UpgradePlan
        do {
            // A print of the planned run carries its virtual time, as `run` writes it.
            plan = try Rehearsal.plan(loaded, inputs, printAt: { printError("print \(ISODuration.format($0)): \($1)") }) { event in
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
        // Bounded runs from the same seed on say how long the upgrade takes with the application's
        // own boot, which the arithmetic leaves out: each batch waits for its slowest instance.
        var range: PlanRange?
        if !modeOnly && !plan.assumed && !plan.batches.isEmpty && bootRuns > 0 {
            range = Rehearsal.range(of: plan, pause: scaleSet.policy.rolling.pauseTimeBetweenBatches, loaded, inputs,
                                    bounds: PlanRangeBounds(runs: bootRuns))
        }
        let boot = range?.boot
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
                numbers.append(JSONField("withBootRange", range.map(Self.json) ?? .null))
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
        if let range { printText(Self.text(range)) }
        printText("")
        for line in RunText.plan(plan) { printText(line) }
        for fragile in arithmetic.fragilities { warn(fragile.message, location: .document(path: nil, field: fragile.field)) }
    }

    /// The range as `policy.withBootRange`: the percentiles in seconds and what was measured.
    static func json(_ range: PlanRange) -> JSON {
        let b = range.bounds
        return .ordered([
            JSONField("p50Seconds", range.p50.map { .int($0 / 1000) } ?? .null), JSONField("p95Seconds", range.p95.map { .int($0 / 1000) } ?? .null),
            JSONField("runs", .int(range.runs)), JSONField("upgradesEnded", .int(range.upgradesEnded)), JSONField("instances", .int(range.instances)),
            JSONField("trials", .int(range.trials)), JSONField("firstSeed", .string(String(range.seed))), JSONField("stopped", .string(range.stopped.rawValue)),
            JSONField("failure", range.failure.map(JSON.string) ?? .null),
            JSONField("bounds", .ordered([JSONField("runs", .int(b.runs)), JSONField("instances", .int(b.instances)),
                                          JSONField("virtualTimeSeconds", .int(b.virtualTime / 1000)), JSONField("instructions", .int(b.instructions))])),
        ])
    }

    /// The range in one line: the percentiles, what they were drawn from and why the runs stopped.
    static func text(_ range: PlanRange) -> String {
        guard let p50 = range.p50, let p95 = range.p95 else {
            return "  with the boot, range  unknown: no upgraded instance was measured in \(range.runs) run(s) from seed \(range.seed) (\(why(range)))"
        }
        let seeds = range.runs == 1 ? "seed \(range.seed)" : "seeds \(range.seed)–\(range.seed &+ UInt64(range.runs - 1))"
        return "  with the boot, range  p50 \(ISODuration.format(p50)), p95 \(ISODuration.format(p95)) (\(range.trials) upgrades drawn from \(range.instances) instances measured in \(range.runs) run(s), \(seeds), \(range.upgradesEnded) upgrade(s) ended; \(why(range)))"
    }

    static func why(_ range: PlanRange) -> String {
        switch range.stopped {
        case .allRuns: return "every run's upgrade ended"
        case .instances: return "stopped: \(range.bounds.instances) instances were enough"
        case .virtualTime: return "stopped: a run's upgrade had not ended \(ISODuration.format(range.bounds.virtualTime)) after it started, or by the run's time limit"
        case .instructions: return "stopped: a run spent its \(range.bounds.instructions) script instructions"
        case .noUpgrade: return "stopped: a run started no rolling upgrade"
        case .failed: return "stopped: \(range.failure ?? "a run failed")"
        }
    }
}
