import ArgumentParser
import AzureWire
import Foundation
import Scenario
import UpgradeEngine

/// `rehearse-bench risk`.
struct RiskBenchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "risk",
        abstract: "Runs and seconds to a decision with --until-decided against a fixed-N sweep of the same question.",
        discussion: """
            scripts/risk-gate.lua at maxUnhealthyUpgradedInstancePercent 10 (P(Faulted) = 7.55%): \
            "Faulted <= 5%" (fails) and "Faulted <= 15%" (holds) decided sequentially from seed 0, \
            against a fixed sweep of --fixed seeds judged once at the same confidence. runs_ratio is \
            the sequential runs over the fixed runs, seconds_ratio likewise.
            """
    )

    @Option(help: "The scenario (run from the repository root).") var scenario = "scripts/risk-gate.lua"
    @Option(help: "Seeds of the fixed sweep.") var fixed = 10_000
    @Option(help: "Runs at once.") var jobs = ProcessInfo.processInfo.activeProcessorCount

    func run() throws {
        var options = ScenarioOptions()
        options.environment = [:]
        options.print = { _ in }
        let definition = try ScenarioDefinition(luaScript: scenario, options: options)
        let overrides = [PolicyOverride(path: "rollingUpgradePolicy.maxUnhealthyUpgradedInstancePercent", value: "10")]
        var start = nowNanoseconds()
        let all = try Sweep.run(definition, seeds: Array(0..<UInt64(fixed)), overrides: overrides, jobs: jobs)
        let fixedSeconds = Double(nowNanoseconds() - start) / 1e9
        report("fixed_runs", Double(fixed), decimals: 0)
        report("fixed_s", fixedSeconds, decimals: 2)
        for (key, text) in [("strict", "Faulted <= 5%"), ("loose", "Faulted <= 15%")] {
            let question = RiskQuestion(requirements: [try Requirement.parse(text).get()])
            start = nowNanoseconds()
            let (runs, results) = try Sweep.runUntilDecided(definition, seeds: SeedRange(0, UInt64(fixed - 1)), overrides: overrides,
                                                            question: question, jobs: jobs)
            let seconds = Double(nowNanoseconds() - start) / 1e9
            let once = question.judge(all, keys: SweepReport.keys(of: definition.expectations, label: { _ in "" }))[0]
            print("\(key)_verdict=\(results[0].verdict.rawValue)")
            print("\(key)_fixed_verdict=\(once.verdict.rawValue)")
            report("\(key)_runs", Double(runs.count), decimals: 0)
            report("\(key)_s", seconds, decimals: 2)
            report("\(key)_runs_ratio", Double(runs.count) / Double(fixed), decimals: 3)
            report("\(key)_seconds_ratio", seconds / fixedSeconds, decimals: 3)
        }
    }
}
