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
    @Option(help: "Run every candidate for part I of N of the seeds (interleaved), no racing, and print the parts as JSON for --tell.")
    var shard: String?
    @Option(help: "The file that keeps a search run by other processes: what was asked and every run told (made when missing).")
    var state: String?
    @Flag(help: "With --state: print the next round's work as JSON (candidate, overrides, seeds, shard); done: true when none is left.")
    var ask = false
    @Option(parsing: .upToNextOption, help: "With --state: record these parts (sweep, compare or tune --shard --json) into the state.")
    var tell: [String] = []
    @Flag(help: "With --state: print the search from the runs told, the same bytes as one process; exit 2 while work is left.")
    var result = false
    @Option(help: "With --ask: split each candidate's block of seeds into this many shards, 1 to 1000 (default 1).") var parts = 1

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
        let labels = candidates.map { $0.combination.map(\.description) }
        let keys = candidates.map { ExpectationText.keys(of: $0.definition.expectations) }
        let distributed = state != nil || ask || result || !tell.isEmpty
        if let part = try parseShard(shard) {
            guard !distributed else { throw InputError(option: "--shard", problem: "goes with none of --state, --ask, --tell, --result", allowed: "--shard alone, its parts told later") }
            let document = try candidateParts(loaded, candidates, scenario: scenario, seeds: range, shard: part, jobs: jobs, deadline: deadline) {
                try risk.question(script: $0.risk, deadline: deadline, expectations: ExpectationText.keys(of: $0.expectations))
            }
            let text = document.serialized()
            try checkPartSize(text, shard: part)
            print(text)
            return
        }
        var told: TuneState?
        if distributed {
            guard let state else { throw InputError(option: "--state", problem: "is needed by --ask, --tell and --result", allowed: "--state FILE") }
            guard [ask, result, !tell.isEmpty].count(where: { $0 }) == 1 else {
                throw InputError(option: "--state", problem: "needs one of --ask, --tell PARTS…, --result", allowed: "exactly one of them")
            }
            guard (1...1_000).contains(parts) else { throw InputError(option: "--parts", String(parts), allowed: "a whole number from 1 to 1000") }
            let fresh = TuneState(scenario: scenario.scenario, seeds: range, candidates: labels,
                                  identities: try candidates.map { try scenario.identity($0.definition, $0.inputs) }, binary: rehearseVersion)
            if !tell.isEmpty {
                let given = try readParts(tell)
                try withStateLock(state) {
                    var loadedState = try loadState(state, fresh: fresh, keys: keys)
                    for (name, part, _) in given {
                        do throws(SweepPart.Failure) { try loadedState.record(part, name: name, keys: keys) } catch { throw InputError(.file(name), problem: error.problem) }
                    }
                    try saveState(loadedState, to: state)
                }
                return
            }
            told = try withStateLock(state) { try loadState(state, fresh: fresh, keys: keys) }
        }
        let pageFile = try page.reportFile.map { try openOutput($0, option: "--report", role: "the report") }
        let outcome: Tune.Outcome
        if let told {
            do throws(TuneState.Pending) {
                outcome = try Tune.run(labels: labels, keys: keys, seeds: range, question: question, objective: objective) { (work, _) throws(TuneState.Pending) in
                    try told.replay(work)
                }
            } catch {
                guard ask else {
                    throw InputError(option: "--result", problem: "the search needs \(error.work.count) more blocks of runs", allowed: "their parts told first: --ask lists them")
                }
                try withStateLock(state!) { if !stateExists(state!) { try saveState(told, to: state!) } }
                print(workJSON(error.work, labels: labels, parts: parts).serialized())
                return
            }
            if ask {
                print(workJSON([], labels: labels, parts: parts).serialized())
                return
            }
        } else {
            let bar = ProgressBar(total: candidates.count.multipliedReportingOverflow(by: range.count).partialValue)
            defer { bar.finish() }
            do {
                outcome = try Tune.run(labels: labels, keys: keys, seeds: range, question: question, objective: objective) { (i, seeds, done) throws(any Error) in
                    try Sweep.run(loaded, candidates[i].inputs, seeds: seeds, jobs: jobs,
                                  progress: { bar.update(done + $0) })
                }
            } catch {
                bar.finish()
                throw error
            }
            bar.finish()
        }
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
