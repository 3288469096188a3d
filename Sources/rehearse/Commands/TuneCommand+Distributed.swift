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
    /// 2 when it is unreadable or belongs to another search (scenario, seeds, candidates, run
    /// identities, version of rehearse).
    func loadState(_ path: String, fresh: TuneState, keys: [[SweepReport.ExpectationKey]]) throws -> TuneState {
        guard FileManager.default.fileExists(atPath: path) else { return fresh }
        let bytes: [UInt8]
        do { bytes = try BoundedFile.read(path, maxBytes: TuneState.maxBytes) } catch { throw InputError(.file(path), problem: error.problem) }
        var state: TuneState?
        var line = 0
        for text in bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: true) {
            line += 1
            guard text.count <= TuneState.maxLineBytes else {
                throw InputError(.file(path), problem: "line \(line) holds \(text.count) bytes; allowed at most \(TuneState.maxLineBytes) a line")
            }
            let value: JSON
            do { value = try JSON.parse(String(decoding: text, as: UTF8.self), maxBytes: TuneState.maxLineBytes) } catch {
                throw InputError(.file(path), problem: "line \(line): \(error)")
            }
            do throws(SweepPart.Failure) {
                if state == nil { state = try TuneState.read(header: value) } else { try state!.read(run: value, line: line, keys: keys) }
            } catch {
                throw InputError(.file(path), problem: "\(error)")
            }
        }
        guard let state else { throw InputError(.file(path), problem: "is empty", allowed: "a state written by tune --state, or a file that does not exist yet") }
        let differs = [("scenario", state.scenario != fresh.scenario), ("seeds", state.seeds != fresh.seeds),
                       ("candidates", state.candidates != fresh.candidates), ("run identities", state.identities != fresh.identities),
                       ("version of rehearse", state.binary != fresh.binary)].filter(\.1).map(\.0)
        guard differs.isEmpty else {
            throw InputError(option: "--state", path, problem: "is the state of another search: its \(differs.joined(separator: ", ")) differ "
                                 + "(scenario \(state.scenario), seeds \(state.seeds), \(state.candidates.count) candidates, rehearse \(state.binary))",
                             allowed: "the state written by this scenario, --seeds, --vary and run options, or a new file")
        }
        return state
    }

    /// Whether the state file `path` exists (the first `--ask` writes it).
    func stateExists(_ path: String) -> Bool { FileManager.default.fileExists(atPath: path) }

    /// Writes `state` to `path` as JSON Lines: the header, then every run told as `sweep --runs`
    /// writes it with its candidate's index. Exit 2, the file left as it was, when the state
    /// would be more than its reader takes (`TuneState.maxBytes`, `maxLineBytes` a line).
    func saveState(_ state: TuneState, to path: String) throws {
        var text = state.header.serialized(pretty: false) + "\n"
        for (i, told) in state.runs.enumerated() {
            for run in told.values.sorted(by: { $0.seed < $1.seed }) {
                guard case .ordered(let fields) = SweepJSON.run(run) else { continue }
                let line = JSON.ordered([JSONField("candidate", .int(i))] + fields).serialized(pretty: false)
                guard line.utf8.count <= TuneState.maxLineBytes else {
                    throw InputError(option: "--state", path, problem: "seed \(run.seed)'s run would take \(line.utf8.count) bytes, more than its reader takes",
                                     allowed: "runs of at most \(TuneState.maxLineBytes) bytes (fewer instances failed or left behind)")
                }
                text += line + "\n"
            }
        }
        guard text.utf8.count <= TuneState.maxBytes else {
            throw InputError(option: "--state", path, problem: "would be \(text.utf8.count) bytes, more than its reader takes",
                             allowed: "a state of at most \(TuneState.maxBytes) bytes: fewer seeds or candidates")
        }
        let file = try openOutput(path, option: "--state", role: "the tune's state")
        try finishOutput(file, option: "--state", writing: text)
    }

    /// Runs `body` holding an exclusive lock on `path`.lock (made when missing, never removed),
    /// so two `--tell`s at once record both parts: the second waits for the first to save.
    /// Exit 2 naming the lock file when it cannot be opened or locked.
    func withStateLock<T>(_ path: String, _ body: () throws -> T) throws -> T {
        let lockPath = path + ".lock"
        let fd = open(lockPath, O_CREAT | O_RDWR | O_NOFOLLOW | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw InputError(option: "--state", lockPath, problem: "cannot be opened as the state's lock: \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        while flock(fd, LOCK_EX) != 0 {
            guard errno == EINTR else { throw InputError(option: "--state", lockPath, problem: "cannot be locked: \(String(cString: strerror(errno)))") }
        }
        defer { flock(fd, LOCK_UN) }
        return try body()
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
func candidateParts(_ loaded: ScenarioDefinition, _ candidates: [PolicyGrid.Candidate], scenario arguments: ScenarioArguments, seeds: SeedRange,
                    shard: Shard, jobs: Int, deadline: Millis?, question: (ScenarioDefinition) throws -> RiskQuestion?) throws -> JSON {
    var parts: [JSON] = []
    let scenario = arguments.scenario
    // The whole grid is in every part's identity: the parts of two different grids never merge.
    let grid = candidates.map { $0.combination.map(\.description) }
    for candidate in candidates {
        let keys = ExpectationText.keys(of: candidate.definition.expectations)
        let asked = try question(candidate.definition)
        let digests = try runSweep(loaded, candidate.inputs, seeds: seeds.seeds(shard: shard), jobs: jobs)
        let report = SweepReport(scenario: scenario, seeds: seeds, overrides: candidate.combination.map(\.description), runs: digests,
                                 expectations: keys, deadline: asked?.deadline ?? deadline)
        let identity = try arguments.identity(candidate.definition, candidate.inputs, grid: grid)
        parts.append(SweepJSON.part(SweepPart(report: report, shard: shard, question: asked, binary: rehearseVersion, identity: identity)))
    }
    return .array(parts)
}

/// `--shard I/N` read; exit 2 naming the option otherwise.
func parseShard(_ text: String?) throws -> Shard? {
    guard let text else { return nil }
    guard let shard = Shard(parsing: text) else { throw InputError(option: "--shard", text, allowed: "I/N with 1 ≤ I ≤ N, such as 2/4") }
    return shard
}
