import ArgumentParser
import AzureWire
import Formats
import Foundation
import Reports
import Scenario
import UpgradeEngine

/// Options every command that sweeps seeds shares.
struct SweepArguments: ParsableArguments {
    @Option(help: "The seeds: A..B, both included (e.g. 0..999), at most 1,000,000.") var seeds = "0..99"
    @Option(help: "Runs at once (default and most: the machine's cores; fewer when there are fewer seeds or memory holds fewer).") var jobs = ProcessInfo.processInfo.activeProcessorCount
    @Option(help: "Also report the share of runs whose upgrade had not ended by this virtual time (ISO 8601, e.g. PT60M).")
    var deadline: String?

    /// The seed range, the jobs and the deadline, checked: exit 2 naming the option otherwise.
    func checked() throws -> (SeedRange, Int, Millis?) { try Self.checked(seeds: seeds, jobs: jobs, deadline: deadline) }

    /// `--seeds`, `--jobs` and `--deadline` as given, checked: exit 2 naming the option otherwise
    /// (`test` takes the same options with its own defaults).
    static func checked(seeds: String, jobs: Int, deadline: String?) throws -> (SeedRange, Int, Millis?) {
        guard let parsed = SeedRange(parsing: seeds) else {
            throw InputError(option: "--seeds", seeds, allowed: "a range A..B of whole numbers with A ≤ B, such as 0..999, or one seed")
        }
        let range: SeedRange
        range = try parsed.checked(field: "--seeds")
        guard jobs >= 1 else { throw InputError(option: "--jobs", String(jobs), allowed: "a whole number of at least 1") }
        var limit: Millis?
        if let deadline {
            guard case .success(let ms) = ISODuration.parse(deadline) else {
                throw InputError(option: "--deadline", deadline, allowed: "an ISO 8601 duration such as PT60M")
            }
            limit = ms
        }
        return (range, jobs, limit)
    }
}

/// `rehearse sweep`: one scenario for many seeds, the distribution of what happened.
struct SweepCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sweep",
        abstract: "Run a scenario once per seed, in parallel, and report how often each outcome happened and the distributions.",
        discussion: """
            Every share comes with its 95% confidence interval (Wilson). The same seeds give the same \
            report, byte for byte, whatever --jobs is. A script error in one seed stops the sweep, \
            naming the seed (exit 2). Without requirements the exit status is then 0: the sweep measures. \
            With requirements (--require, or a risk { } in the script) it is a gate: 0 when every \
            requirement held, 1 when one failed or is undecided. A part of a sweep split by --shard I/N \
            is judged on its own runs: 1 when a requirement failed on them (undecided ones are left \
            to the merged runs); --shard 1/1 is the whole sweep.
            """
    )

    @OptionGroup var scenario: ScenarioArguments
    @OptionGroup var sweep: SweepArguments
    @OptionGroup var risk: RiskArguments
    @Flag(name: .customLong("until-decided"),
          help: "Stop as soon as every requirement is held or failed (looks every 100 seeds; --seeds is the budget). With --shard, the part runs all its seeds and merge stops where one process would.")
    var untilDecided = false
    @OptionGroup var policy: PolicySetOption
    @Option(help: "Run only part I of N of the seeds (interleaved), e.g. 2/4; with --json, print the part for rehearse merge.")
    var shard: String?
    @OptionGroup var format: JSONOutputOptions

    /// `--json` or `--output json` (with `--shard`, the part for `merge`).
    var json: Bool { format.json }
    @Option(help: "Write one JSON line per run to this file (seed, code, error code, figures).") var runs: String?
    @Flag(help: "Explain the failing seeds: every single policy change rehearse explain tries, run on each of them (at most --explain-seeds), and how many each would have passed.")
    var explain = false
    @Option(name: .customLong("explain-seeds"), help: "With --explain: the most failing seeds explained, the lowest first (1 to 1000).") var explainSeeds = 20
    @Flag(name: .customLong("shadow-gate"), help: "Score the script's gate (its on_hook, or a bundle that reads fleet().gate such as alarm-rollback): every seed run again without it; false stops and false passes, requirable as falseStop and falsePass.")
    var shadowGate = false
    @Flag(name: .customLong("no-gate"), help: "Run without the script's gate: on_hook answers nothing, every lifecycle hook event waits for its defaultAction.")
    var noGate = false
    @OptionGroup var page: ReportOption

    func run() throws {
        let (range, jobs, deadline) = try sweep.checked()
        let part = try parseShard(shard)
        if explain {
            guard part == nil else { throw InputError(option: "--explain", problem: "does not go with --shard", allowed: "--explain on a whole sweep") }
            guard (1...1_000).contains(explainSeeds) else { throw InputError(option: "--explain-seeds", String(explainSeeds), allowed: "a whole number from 1 to 1000") }
        } else if explainSeeds != 20 {
            throw InputError(option: "--explain-seeds", problem: "goes with --explain", allowed: "--explain --explain-seeds N")
        }
        let overrides = try policy.overrides()
        let runsFile = try runs.map { try openOutput($0, option: "--runs", role: "the runs file") }
        let pageFile = try page.reportFile.map { try openOutput($0, option: "--report", role: "the report") }
        var (definition, inputs) = try scenario.load(seed: range.first, overrides: overrides, print: { printError("print: \($0)") })
        if noGate {
            guard !shadowGate else { throw InputError(option: "--no-gate", problem: "does not go with --shadow-gate", allowed: "one of them") }
            inputs.gateActs = false
        }
        _ = try Rehearsal.scaleSet(definition, overrides: overrides)
        // The expectation keys, computed once: what every digest's `held` refers to.
        let keys = ExpectationText.keys(of: definition.expectations)
        let question = try risk.question(script: definition.risk, deadline: deadline, expectations: keys, shadow: shadowGate)
        if shadowGate {
            guard part == nil, !untilDecided else {
                throw InputError(option: "--shadow-gate", problem: "does not go with --shard or --until-decided", allowed: "--shadow-gate on a whole sweep")
            }
        }
        if untilDecided {
            guard question != nil else {
                throw InputError(option: "--until-decided", problem: "there is no requirement to decide", allowed: "--require \"Faulted <= 1%\" or a risk { } in the script")
            }
        }
        var digests: [RunDigest]
        var judged: [RequirementResult]?
        // A shard of a sequential gate runs its seeds whole: `merge` looks where one process would.
        if untilDecided, part == nil, let question {
            let bar = ProgressBar(total: range.count)
            defer { bar.finish() }
            do {
                (digests, judged) = try Sweep.runUntilDecided(definition, inputs, seeds: range, question: question, jobs: jobs,
                                                              progress: { bar.update($0) })
            } catch {
                bar.finish()
                throw error
            }
        } else {
            digests = try runSweep(definition, inputs, seeds: range.seeds(shard: part), jobs: jobs)
            if shadowGate { digests = try scoreShadow(definition, inputs, gated: digests, jobs: jobs) }
            judged = question?.judge(digests, keys: keys)
        }
        // A part (any --shard, 1/1 included: adjacent seed blocks merge) is judged on its own runs:
        // a requirement failed there fails it, an undecided one is left to the merge. A part of a
        // distributed sequential gate is not judged at all: the merge's looks decide (SequentialGate).
        let partial = part != nil
        if part != nil, untilDecided { judged = nil }
        let ran = digests.isEmpty ? range : SeedRange(digests.first!.seed, digests.last!.seed)
        let report = SweepReport(scenario: scenario.scenario, seeds: part == nil ? ran : range, overrides: overrides.map(\.description), runs: digests,
                                 expectations: keys, deadline: question?.deadline ?? deadline)
        if let runsFile {
            for digest in digests { runsFile.writeLine(SweepJSON.run(digest).serialized(pretty: false)) }
            try finishOutput(runsFile, option: "--runs")
        }
        let explained = try explain ? explainFailures(definition, inputs, digests: digests, overrides: overrides) : nil
        if let pageFile { try writePage(pageFile) { try SweepReportPage.html(entries: [SweepReportPage.Entry(report: report, requirements: judged ?? [])]) } }
        if format.output == .table && !format.jsonFlag {
            for line in Tables.runs(digests) { printText(line) }
        } else if json {
            var document = try part.map {
                SweepJSON.part(SweepPart(report: report, shard: $0, question: question, untilDecided: untilDecided, binary: rehearseVersion,
                                         identity: try scenario.identity(definition, inputs)))
            } ?? SweepJSON.report(report)
            if let judged, let question, case .ordered(var fields) = document {
                // A part's `requirements` are its question (what merge judges); its own judgement is `verdicts`.
                fields.append(JSONField(part == nil ? "requirements" : "verdicts", RiskText.json(judged, confidence: question.confidence)))
                fields.append(JSONField("passed", .bool(RiskVerdict(judged, partial: partial).passed)))
                document = .ordered(fields)
            }
            if shadowGate, case .ordered(var fields) = document {
                fields.append(JSONField("shadowGate", ShadowText.json(digests)))
                document = .ordered(fields)
            }
            if let explained, case .ordered(var fields) = document {
                fields.append(JSONField("explain", ExplainText.json(explained)))
                document = .ordered(fields)
            }
            let text = document.serialized()
            if let part { try checkPartSize(text, shard: part) }
            print(text)
        } else {
            if let part { printText("Part \(part) of the seeds") }
            for line in SweepText.report(report) { printText(line) }
            if let judged, let question {
                printText("")
                for line in RiskText.requirements(judged, confidence: question.confidence) { printText(line) }
                if untilDecided { printText("Stopped after \(digests.count) of \(range.count) seeds.") }
            }
            if shadowGate {
                printText("")
                for line in ShadowText.lines(digests) { printText(line) }
            }
            if let explained {
                printText("")
                for line in ExplainText.lines(explained) { printText(line) }
            }
        }
        // A gate: every requirement held, or exit 1. A part fails when a requirement failed on its
        // runs; undecided ones are decided when the parts are merged.
        if let judged, case let verdict = RiskVerdict(judged, partial: partial), !verdict.passed { throw CommandFailure.shown(exitCode: verdict.exitCode) }
    }
}

extension SweepCommand {
    /// `--shadow-gate`: every seed of `gated` run again with the gate off (no `on_hook` answer:
    /// each event waits for its defaultAction), and each gated digest marked with how the gate did.
    func scoreShadow(_ definition: ScenarioDefinition, _ inputs: RunInputs, gated: [RunDigest], jobs: Int) throws -> [RunDigest] {
        var off = inputs
        off.gateActs = false
        let ungated = try runSweep(definition, off, seeds: gated.map(\.seed), jobs: jobs)
        // A script without on_hook whose gate never acted (nothing read fleet().gate) has no gate to score.
        guard hasHookGate(definition) || zip(gated, ungated).contains(where: { $0 != $1 }) else {
            throw InputError(option: "--shadow-gate", problem: "\(scenario.scenario) has no gate to score: every run is the same without it",
                             allowed: "a script with an on_hook(...) function, or a gate that reads fleet().gate (the alarm-rollback bundle)")
        }
        return zip(gated, ungated).map { gated, ungated in
            var scored = gated
            // Stopped: the gate rejected an instance, or started a rollout of its own (a rollback).
            let stopped = !gated.hookRejected.isEmpty || gated.upgrades > ungated.upgrades
            // Bad: the rollout faulted or did not end; the script's expectations describe the gated
            // world, so they are not the measure of the other one.
            let bad = stopped ? ungated : gated
            scored.shadow = ShadowOutcome(stopped: stopped, bad: bad.code == .faulted || bad.hitTimeLimit)
            scored.shadowTimeAdded = gated.timeToFinish.flatMap { g in ungated.timeToFinish.map { g - $0 } }
            return scored
        }
    }

    /// Whether the script has an `on_hook` gate.
    func hasHookGate(_ definition: ScenarioDefinition) -> Bool {
        if case .lua(let program) = definition.behaviour { return program.hooks.onHook != nil }
        return false
    }

    /// `--explain`: the failing seeds among `digests` (the lowest `explainSeeds` of them) and
    /// every single change `explain` tries, run on each.
    func explainFailures(_ definition: ScenarioDefinition, _ inputs: RunInputs, digests: [RunDigest],
                         overrides: [PolicyOverride]) throws -> SweepExplanation {
        let failing = digests.filter { !Rehearsal.passed($0) }.map(\.seed)
        let seeds = Array(failing.prefix(explainSeeds))
        let rolling = try Rehearsal.scaleSet(definition, overrides: overrides).policy.rolling
        do {
            let scores = try Rehearsal.scores(definition, inputs, seeds: seeds, fields: ExplainCandidates.fields(rolling))
            return SweepExplanation(failing: failing.count, explained: seeds, scores: scores)
        } catch {
            throw error.error
        }
    }
}

/// Runs the sweep with a progress line on a terminal; a failed run is exit 2 naming its seed.
func runSweep(_ definition: ScenarioDefinition, _ inputs: RunInputs, seeds: [UInt64], jobs: Int) throws -> [RunDigest] {
    let bar = ProgressBar(total: seeds.count)
    defer { bar.finish() }
    do {
        return try Sweep.run(definition, inputs, seeds: seeds, jobs: jobs, progress: { bar.update($0) })
    } catch {
        bar.finish()
        throw error
    }
}

/// `--set PATH=VALUE` options as overrides; a malformed one is exit 2.
func parseOverrides(_ texts: [String]) throws -> [PolicyOverride] {
    try texts.map { text in
        guard let change = PolicyOverride(parsing: text) else {
            throw InputError(option: "--set", text, allowed: "PATH=VALUE, such as rollingUpgradePolicy.maxBatchInstancePercent=10")
        }
        return change
    }
}

/// Writes an HTML page made by `make` into `file` (`--report`); exit 2 naming the file when it
/// cannot be made or written.
func writePage(_ file: OutputFile, _ make: () throws -> String) throws {
    let page: String
    do { page = try make() } catch { throw InputError(option: "--report", file.path, problem: "cannot be made: \(error)") }
    try finishOutput(file, option: "--report", writing: page)
}

/// A part (or a file of parts) as `merge` and `tune --tell` read it: no larger than their reader
/// takes (`SweepPart.maxBytes`), or exit 2 saying how many shards would do, nothing printed.
func checkPartSize(_ text: String, shard: Shard) throws {
    let size = text.utf8.count
    guard size > SweepPart.maxBytes else { return }
    let needed = (size / SweepPart.maxBytes + 1).multipliedReportingOverflow(by: shard.count).partialValue
    throw InputError(option: "--shard", shard.description, problem: "this part would be \(size) bytes, more than merge reads (\(SweepPart.maxBytes))",
                     allowed: "more shards, about \(needed) or more")
}
