import ArgumentParser
import AzureWire
import Foundation
import Formats
import Reports
import Scenario
import UpgradeEngine

/// `tune --state FILE --ask / --tell / --result`: the race run by other processes, one round at a time.
extension TuneCommand {
    /// The state in `path`, or a new one for this search when the file does not exist yet; exit
    /// 2 when it is unreadable or belongs to another search.
    func loadState(_ path: String, scenario: String, seeds: SeedRange, labels: [[String]], keys: [[SweepReport.ExpectationKey]]) throws -> TuneState {
        guard FileManager.default.fileExists(atPath: path) else { return TuneState(scenario: scenario, seeds: seeds, candidates: labels) }
        let state: TuneState
        do { state = try TuneState.read(try readJSONDocument(path, maxBytes: SweepPart.maxBytes), keys: keys) } catch let error as SweepPart.Failure {
            throw InputError(.file(path), problem: "\(error)")
        }
        guard state.scenario == scenario, state.seeds == seeds, state.candidates == labels else {
            throw InputError(option: "--state", path, problem: "is the state of another search (scenario \(state.scenario), seeds \(state.seeds), \(state.candidates.count) candidates)",
                             allowed: "the state written by this scenario, --seeds and --vary, or a new file")
        }
        return state
    }

    /// Whether the state file `path` exists (the first `--ask` writes it).
    func stateExists(_ path: String) -> Bool { FileManager.default.fileExists(atPath: path) }

    /// Writes `state` to `path` as JSON (every run as `sweep --runs` writes it).
    func saveState(_ state: TuneState, to path: String) throws {
        let runs = state.runs.map { told in JSON.array(told.values.sorted { $0.seed < $1.seed }.map(SweepJSON.run)) }
        let document = JSON.ordered([JSONField("rehearseTuneState", .int(1)), JSONField("scenario", .string(state.scenario)),
                                     JSONField("seeds", .string(state.seeds.description)),
                                     JSONField("candidates", .array(state.candidates.map { .array($0.map(JSON.string)) })),
                                     JSONField("runs", .array(runs))])
        let file = try openOutput(path, option: "--state", role: "the tune's state")
        try finishOutput(file, option: "--state", writing: document.serialized(pretty: false) + "\n")
    }

    /// `--ask`: the next round's work as JSON, each candidate's block split in `parts` shards;
    /// `done` once the race needs nothing more (then `--result`).
    func workJSON(_ pending: [Tune.Work], labels: [[String]], parts: Int) -> JSON {
        let work = pending.flatMap { item in
            (1...parts).map { index in
                JSON.ordered([JSONField("candidate", .int(item.candidate)), JSONField("overrides", .array(labels[item.candidate].map(JSON.string))),
                              JSONField("seeds", .string(item.seeds.description)), JSONField("shard", .string(Shard(index: index, count: parts).description))])
            }
        }
        return .ordered([JSONField("rehearseTuneWork", .int(1)), JSONField("done", .bool(pending.isEmpty)), JSONField("work", .array(work))])
    }
}

/// The parts of every combination for one shard of the seeds (`compare --shard`, `tune --shard`):
/// a JSON list of sweep parts, one per combination in order, each carrying its overrides as
/// written and the question, for `merge` (compare) or `tune --tell`.
func candidateParts(_ loaded: ScenarioDefinition, _ candidates: [PolicyGrid.Candidate], scenario: String, seeds: SeedRange, shard: Shard,
                    jobs: Int, deadline: Millis?, question: (ScenarioDefinition) throws -> RiskQuestion?) throws -> JSON {
    var parts: [JSON] = []
    for candidate in candidates {
        let keys = ExpectationText.keys(of: candidate.definition.expectations)
        let asked = try question(candidate.definition)
        let digests = try runSweep(loaded, candidate.inputs, seeds: seeds.seeds(shard: shard), jobs: jobs)
        let report = SweepReport(scenario: scenario, seeds: seeds, overrides: candidate.combination.map(\.description), runs: digests,
                                 expectations: keys, deadline: asked?.deadline ?? deadline)
        parts.append(SweepJSON.part(SweepPart(report: report, shard: shard, question: asked, binary: rehearseVersion)))
    }
    return .array(parts)
}

/// `--shard I/N` read; exit 2 naming the option otherwise.
func parseShard(_ text: String?) throws -> Shard? {
    guard let text else { return nil }
    guard let shard = Shard(parsing: text) else { throw InputError(option: "--shard", text, allowed: "I/N with 1 ≤ I ≤ N, such as 2/4") }
    return shard
}
