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

    @OptionGroup var scenario: ScenarioArguments
    @OptionGroup var sweep: SweepArguments
    @OptionGroup var risk: RiskArguments
    @Option(name: .customLong("set"), help: "A policy field and its values, PATH=V1,V2,… (or A..B:STEP), or a script parameter, param.NAME=V1,V2,…; repeatable (every combination runs).")
    var set: [String] = []
    @OptionGroup var format: JSONOutputOptions
    @OptionGroup var page: ReportOption
    @Option(help: "Run only part I of N of the seeds (interleaved) of every combination, and print the parts as JSON for rehearse merge.")
    var shard: String?

    /// `--json` or `--output json`.
    var json: Bool { format.json }

    func run() throws {
        let (range, jobs, deadline) = try sweep.checked()
        guard !set.isEmpty else { throw InputError(.command("compare"), problem: "needs at least one --set", allowed: "--set PATH=V1,V2,…") }
        let (loaded, candidates) = try PolicyGrid(set, option: "--set", seedsEach: range.count).candidates(scenario, seed: range.first)
        if let part = try parseShard(shard) {
            let document = try candidateParts(loaded, candidates, scenario: scenario, seeds: range, shard: part, jobs: jobs, deadline: deadline) {
                try risk.question(script: $0.risk, deadline: deadline, expectations: ExpectationText.keys(of: $0.expectations))
            }
            let text = document.serialized()
            try checkPartSize(text, shard: part)
            print(text)
            return
        }
        let seeds = range.seeds()
        var rows: [CompareText.Row] = []
        // Every combination's requirements are read before anything runs (a missing expect key is refused at load).
        let questions = try candidates.map { candidate in
            try risk.question(script: candidate.definition.risk, deadline: deadline, expectations: ExpectationText.keys(of: candidate.definition.expectations),
                              candidate: candidate.combination.map(\.description).joined(separator: ", "))
        }
        for (candidate, question) in zip(candidates, questions) {
            let (combination, definition, overrides) = (candidate.combination, candidate.definition, candidate.inputs.overrides)
            let digests = try runSweep(loaded, candidate.inputs, seeds: seeds, jobs: jobs)
            let keys = ExpectationText.keys(of: definition.expectations)
            let report = SweepReport(scenario: scenario.scenario, seeds: range, overrides: combination.map(\.description), runs: digests,
                                     expectations: keys, deadline: question?.deadline ?? deadline)
            let scaleSet = try? Rehearsal.scaleSet(definition, overrides: overrides)
            let rolling = scaleSet?.policy.rolling
            rows.append(CompareText.Row(report: report, requirements: question?.judge(digests, keys: keys) ?? [],
                                        batchSize: scaleSet.map { Planner.batchSize(capacity: $0.capacity, percent: rolling!.maxBatchInstancePercent) },
                                        unhealthyBudget: scaleSet.map { Planner.unhealthyAllowance(capacity: $0.capacity, percent: rolling!.maxUnhealthyInstancePercent) }))
        }
        if let reportFile = page.reportFile { try writePage(try openOutput(reportFile, option: "--report", role: "the report")) { try SweepReportPage.html(entries: rows.map { SweepReportPage.Entry(report: $0.report, requirements: $0.requirements) },
                                                                                                                                     best: CompareText.best(rows), title: "compare", notes: CompareText.notes(rows)) } }
        if json {
            print(compareJSON(rows).serialized())
        } else if format.output == .table {
            for line in CompareText.table(rows) { printText(line) }
        } else {
            printText("Compare \(scenario.scenario), seeds \(range) (\(range.count) runs per combination)")
            printText("")
            for line in CompareText.table(rows) { printText(line) }
        }
        if compareFailed(rows) { throw CommandFailure.shown(exitCode: 1) }
    }
}

/// The rows of a comparison as JSON: each combination's report, with its requirements and
/// whether it passed when it has requirements (`compare --json`, `merge --json` of its parts).
func compareJSON(_ rows: [CompareText.Row]) -> JSON {
    JSON.array(rows.map { row in
        guard !row.requirements.isEmpty, case .ordered(let fields) = SweepJSON.report(row.report) else { return SweepJSON.report(row.report) }
        return .ordered(fields + [JSONField("requirements", RiskText.json(row.requirements, confidence: row.requirements[0].confidence)),
                                  JSONField("passed", .bool(RiskVerdict(row.requirements).passed))])
    })
}

/// With requirements, a comparison is a gate: it failed (exit 1) when no combination met every one.
func compareFailed(_ rows: [CompareText.Row]) -> Bool {
    rows.contains(where: { !$0.requirements.isEmpty }) && !rows.contains(where: { RiskVerdict($0.requirements).passed })
}
