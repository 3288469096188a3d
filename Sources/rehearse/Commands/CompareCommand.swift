import ArgumentParser
import AzureWire
import Formats
import Foundation
import Reports
import Scenario
import UpgradeEngine

/// `rehearse compare`: the same sweep for every combination of policy values, in one table.
struct CompareCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "compare",
        abstract: "Sweep a scenario for every combination of policy values and print one row per combination.",
        discussion: """
            Example: --set rollingUpgradePolicy.maxBatchInstancePercent=10,20,33 \
            --set rollingUpgradePolicy.pauseTimeBetweenBatches=PT0S,PT30S runs six sweeps. Every \
            combination is checked before anything runs; at most 1,000 combinations and 1,000,000 runs \
            (combinations × seeds). The row marked * has the lowest P(Faulted) \
            (ties: the lower p95 time to finish).
            """
    )

    /// The most combinations one comparison runs.
    static let mostCombinations = 1_000

    @OptionGroup var scenario: ScenarioArguments
    @OptionGroup var sweep: SweepArguments
    @Option(name: .customLong("set"), help: "A policy field and its values, PATH=V1,V2,…, or a script parameter, param.NAME=V1,V2,…; repeatable (every combination runs).")
    var set: [String] = []
    @Flag(name: .customLong("json"), help: "Print every combination's report as JSON.") var jsonFlag = false
    @OptionGroup var format: OutputOption

    func validate() throws { try format.refuseTable(with: jsonFlag) }
    /// `--json` or `--output json`.
    var json: Bool { jsonFlag || format.output == .json }
    @Option(name: .customLong("report"), help: "Write a self-contained HTML page of the comparison to this file.") var reportFile: String?

    func run() throws {
        let (range, jobs, deadline) = try sweep.checked()
        guard !set.isEmpty else { throw fail(InputError("compare", problem: "needs at least one --set", allowed: "--set PATH=V1,V2,…")) }
        var axes: [(path: String, values: [String])] = []
        for text in set {
            guard let change = PolicyOverride(parsing: text) else {
                throw fail(InputError("--set", text, allowed: "PATH=V1,V2,…, such as rollingUpgradePolicy.maxBatchInstancePercent=10,20"))
            }
            axes.append((change.path, change.value.split(separator: ",", omittingEmptySubsequences: false).map(String.init)))
        }
        // Counted before any is made: at most `mostCombinations`, and at most `SeedRange.mostSeeds`
        // runs in all (every combination's report keeps a digest per run).
        var count = 1
        for axis in axes {
            let (product, overflow) = count.multipliedReportingOverflow(by: axis.values.count)
            guard !overflow, product <= Self.mostCombinations, product * range.count <= SeedRange.mostSeeds else {
                throw fail(InputError("--set", problem: "lists of \(axes.map { String($0.values.count) }.joined(separator: " × ")) values make more than \(Self.mostCombinations) combinations or more than \(SeedRange.mostSeeds) runs with --seeds \(range)",
                                      allowed: "at most \(Self.mostCombinations) combinations (the product of the lists' lengths) and \(SeedRange.mostSeeds) runs (combinations × seeds)"))
            }
            count = product
        }
        // Each combination, made when it is needed (the last axis varies fastest): its policy
        // overrides, and its script parameters (`param.NAME`).
        let combinations = (0..<count).lazy.map { index in
            var rest = index
            var combination: [PolicyOverride] = []
            for axis in axes.reversed() {
                combination.append(PolicyOverride(path: axis.path, value: axis.values[rest % axis.values.count]))
                rest /= axis.values.count
            }
            return Array(combination.reversed())
        }
        let given = try parameterValues(scenario.parameters)
        func split(_ combination: [PolicyOverride]) -> (overrides: [PolicyOverride], parameters: [String: String]) {
            var parameters = given
            for change in combination where change.path.hasPrefix("param.") { parameters[String(change.path.dropFirst(6))] = change.value }
            return (combination.filter { !$0.path.hasPrefix("param.") }, parameters)
        }
        // Every combination is checked before the first run: its parameters by loading the
        // script with them (once per distinct set), its policy fields by applying them.
        var definitions: [[String: String]: ScenarioDefinition] = [:]
        var problems: [Diagnostic] = []
        for combination in combinations {
            let (overrides, parameters) = split(combination)
            if definitions[parameters] == nil {
                do {
                    var options = try scenario.options(seed: range.first, print: { printError("print: \($0)") })
                    options.parameters = parameters
                    let loaded = try ScenarioDefinition(path: scenario.scenario, options: options)
                    if definitions.isEmpty { for warning in loaded.warnings { warn(warning) } }
                    definitions[parameters] = loaded
                } catch {
                    problems += Diagnostic.of(error)
                    continue
                }
            }
            do { _ = try Rehearsal.scaleSet(definitions[parameters]!, overrides: overrides) } catch { problems += Diagnostic.of(error) }
        }
        var seen = Set<String>()
        problems = problems.filter { seen.insert("\($0.location ?? "") \($0.message)").inserted }
        guard problems.isEmpty else {
            report(problems)
            throw ExitCode(2)
        }
        let seeds = range.seeds()
        var rows: [CompareText.Row] = []
        for combination in combinations {
            let (overrides, parameters) = split(combination)
            let definition = definitions[parameters]!
            let digests = try runSweep(definition, seeds: seeds, overrides: overrides, jobs: jobs)
            let report = SweepReport(scenario: scenario.scenario, seeds: range, overrides: combination.map(\.description), runs: digests,
                                     expectations: SweepReport.keys(of: definition.expectations), deadline: deadline)
            rows.append(CompareText.Row(report: report))
        }
        if let reportFile { try writePage(reportFile) { try SweepReportPage.html(rows.map(\.report), best: CompareText.best(rows)) } }
        if json {
            print(JSON.array(rows.map { SweepJSON.report($0.report) }).serialized())
        } else if format.output == .table {
            for line in CompareText.table(rows) { print(line) }
        } else {
            print("Compare \(scenario.scenario), seeds \(range) (\(range.count) runs per combination)")
            print("")
            for line in CompareText.table(rows) { print(line) }
        }
    }
}
