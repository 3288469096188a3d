import ArgumentParser
import AzureWire
import Formats
import Reports
import Scenario
import UpgradeEngine

/// `rehearse tune`: the best policy of a space that meets the requirements, found by racing.
struct TuneCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tune",
        abstract: "Search a space of policies for the best one that meets the requirements, with as few runs as the statistics allow.",
        discussion: """
            Example: --vary rollingUpgradePolicy.maxUnhealthyUpgradedInstancePercent=5,10,15,20,30 \
            --require "Faulted <= 1%" --minimize p95. Every candidate runs the same seeds in rounds \
            of 100; a candidate stops once a requirement failed (infeasible), once every requirement \
            held (feasible), or once it is provably worse than a feasible one (dominated). The \
            feasible finalists are topped up to equal runs and ranked by the objective. Exit 0 when \
            a best policy was found, 1 when none was shown to meet every requirement. When the best \
            policy keeps a lower lowest healthy p5 than the scenario's current policy over the same \
            seeds, a warning says so (and --json lists it under warnings); require capacity with \
            --require "lowestHealthy.80 >= 95%".
            """
    )

    @OptionGroup var scenario: ScenarioArguments
    @OptionGroup var sweep: SweepArguments
    @OptionGroup var risk: RiskArguments
    @Option(name: .customLong("vary"), help: "A policy field or param.NAME and its values: PATH=V1,V2,… or PATH=A..B:STEP; repeatable.")
    var vary: [String] = []
    @Option(help: "What to make smallest: p50, p95 (or any pNN) or mean of the time to finish, or unavailable (mean instance-seconds).")
    var minimize: String?
    @Option(help: "What to make largest: lowestHealthy.p5.") var maximize: String?
    @Flag(name: .customLong("json"), help: "Print the search as JSON.") var jsonFlag = false
    @OptionGroup var page: ReportOption

    func run() throws {
        let (range, jobs, deadline) = try sweep.checked()
        guard !vary.isEmpty else { throw InputError(.command("tune"), problem: "needs at least one --vary", allowed: "--vary PATH=V1,V2,…") }
        let objective = try chosenObjective()
        let (loaded, candidates) = try PolicyGrid(vary, option: "--vary", seedsEach: range.count).candidates(scenario, seed: range.first)
        guard let question = try risk.question(script: candidates[0].definition.risk, deadline: deadline, expectations: ExpectationText.keys(of: candidates[0].definition.expectations)) else {
            throw InputError(.command("tune"), problem: "needs at least one requirement", allowed: "--require \"Faulted <= 1%\" or a risk { } in the script")
        }
        // Every candidate must have what the requirements count (an expect key one lacks is refused, not held).
        for candidate in candidates.dropFirst() {
            _ = try risk.question(script: candidate.definition.risk, deadline: deadline, expectations: ExpectationText.keys(of: candidate.definition.expectations),
                                  candidate: candidate.combination.map(\.description).joined(separator: ", "))
        }
        let pageFile = try page.reportFile.map { try openOutput($0, option: "--report", role: "the report") }
        let bar = ProgressBar(total: candidates.count.multipliedReportingOverflow(by: range.count).partialValue)
        defer { bar.finish() }
        let outcome: Tune.Outcome
        do {
            outcome = try Tune.run(labels: candidates.map { $0.combination.map(\.description) },
                                   keys: candidates.map { ExpectationText.keys(of: $0.definition.expectations) },
                                   seeds: range, question: question, objective: objective) { (i, seeds, done) throws(any Error) in
                try Sweep.run(loaded, candidates[i].inputs, seeds: seeds, jobs: jobs,
                              progress: { bar.update(done + $0) })
            }
        } catch {
            bar.finish()
            throw error
        }
        bar.finish()
        // The best policy against the scenario's own (no --vary change) over the same seeds: a
        // faster policy that keeps fewer instances serving is said, not hidden.
        var warning: Tune.CapacityWarning?
        if let best = outcome.best {
            var current = candidates[0].inputs
            current.overrides = []
            current.parameterValues = try parameterValues(scenario.loading.parameters)
            let runs = outcome.candidates[best].runs
            let seeds = runs.map(\.seed)
            warning = Tune.capacityWarning(best: runs, current: try Sweep.run(loaded, current, seeds: seeds, jobs: jobs))
            if let warning { warn(warning.message) }
        }
        if let pageFile {
            let entries = outcome.candidates.enumerated().map { i, c in
                SweepReportPage.Entry(report: SweepReport(scenario: scenario.scenario, seeds: SeedRange(range.first, range.first &+ UInt64(max(c.runs.count, 1) - 1)),
                                                          overrides: c.label, runs: c.runs, expectations: c.keys, deadline: question.deadline),
                                      requirements: c.requirements, standing: c.standing.rawValue, decidedBy: RiskText.decidedBy(c))
            }
            try writePage(pageFile) { try SweepReportPage.html(entries: entries, best: outcome.best, title: "tune") }
        }
        if jsonFlag {
            var document = RiskText.tuneJSON(outcome, objective: objective, confidence: question.confidence)
            if case .ordered(let fields) = document {
                document = .ordered(fields + [JSONField("warnings", .array(warning.map { [JSON.ordered([
                    JSONField("kind", .string("lowestHealthyLowered")), JSONField("message", .string($0.message)),
                    JSONField("bestP5", .double($0.bestP5)), JSONField("currentP5", .double($0.currentP5)), JSONField("runs", .int($0.runs)),
                ])] } ?? []))])
            }
            print(document.serialized())
        } else {
            printText("Tune \(scenario.scenario): \(candidates.count) candidates, seeds \(range), \(question.requirements.map(\.description).joined(separator: ", ")), \(objective.maximises ? "maximise" : "minimise") \(objective)")
            printText("")
            for line in RiskText.tune(outcome, objective: objective) { printText(line) }
        }
        if outcome.best == nil { throw CommandFailure.shown(exitCode: 1) }
    }

    /// The objective from --minimize or --maximize (p95 of the time to finish by default).
    func chosenObjective() throws -> Tune.Objective {
        switch (minimize, maximize) {
        case (nil, nil): return .finishPercentile(95)
        case (let text?, nil):
            guard let objective = Tune.Objective(minimize: text) else {
                throw InputError(option: "--minimize", text, allowed: "p50, p95 (any pNN from p1 to p99), mean or unavailable")
            }
            return objective
        case (nil, let text?):
            guard text == "lowestHealthy.p5" else { throw InputError(option: "--maximize", text, allowed: "lowestHealthy.p5") }
            return .lowestHealthyP5
        default: throw InputError(option: "--minimize", problem: "goes with --maximize", allowed: "one of the two")
        }
    }
}
