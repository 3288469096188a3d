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
            combination is checked before anything runs. The row marked * has the lowest P(Faulted) \
            (ties: the lower p95 time to finish).
            """
    )

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
        // Each combination: its policy overrides, and its script parameters (`param.NAME`).
        var combinations: [[PolicyOverride]] = [[]]
        for axis in axes {
            combinations = combinations.flatMap { prefix in axis.values.map { prefix + [PolicyOverride(path: axis.path, value: $0)] } }
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
        if let reportFile { try writePage(try openOutput(reportFile, option: "--report", role: "the report")) { try SweepReportPage.html(rows.map(\.report), best: CompareText.best(rows)) } }
        if json {
            print(JSON.array(rows.map { SweepJSON.report($0.report) }).serialized())
        } else if format.output == .table {
            for line in CompareText.table(rows) { printText(line) }
        } else {
            printText("Compare \(scenario.scenario), seeds \(range) (\(range.count) runs per combination)")
            printText("")
            for line in CompareText.table(rows) { printText(line) }
        }
    }
}
