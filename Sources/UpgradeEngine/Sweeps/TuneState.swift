public import Formats

/// A `tune` run by other processes (`tune --state FILE --ask`, `--tell PARTS…`, `--result`): the
/// search's candidates and every run told so far. The race is replayed over the runs told: where
/// a round needs runs not told yet, the replay stops and names that round's work; once every
/// round's runs are there, the replay is the one-process `tune`, byte for byte, because the race
/// depends on the digests only.
public struct TuneState: Equatable, Sendable {
    /// The scenario's path, as the command line gave it.
    public var scenario: String
    /// The seeds of the search (its budget).
    public var seeds: SeedRange
    /// Every candidate's overrides as written, in the search's order.
    public var candidates: [[String]]
    /// Every candidate's runs told so far, by seed.
    public var runs: [[UInt64: RunDigest]]

    /// A search of `candidates` over `seeds` with no run told yet.
    public init(scenario: String, seeds: SeedRange, candidates: [[String]]) {
        self.scenario = scenario
        self.seeds = seeds
        self.candidates = candidates
        self.runs = candidates.map { _ in [:] }
    }

    /// The work a round needs that was not told yet.
    public struct Pending: Error, Equatable, Sendable {
        /// Each candidate's block of seeds still to run, in the race's order.
        public var work: [Tune.Work]
    }

    /// The digests of `work` from the runs told, or the work not told yet (every item of the
    /// round that lacks a run).
    public func replay(_ work: [Tune.Work]) throws(Pending) -> [[RunDigest]] {
        var made: [[RunDigest]] = []
        var missing: [Tune.Work] = []
        for item in work {
            let told = runs[item.candidate]
            let digests = item.seeds.seeds().compactMap { told[$0] }
            if digests.count == item.seeds.count { made.append(digests) } else { missing.append(item) }
        }
        guard missing.isEmpty else { throw Pending(work: missing) }
        return made
    }

    /// Records the runs of `part` (from the file `name`), a sweep of one candidate whose digests
    /// refer to `keys`. Refused, naming the file: another scenario, overrides that are no
    /// candidate, other expectations, a seed outside the search's, a seed told before with
    /// another result.
    public mutating func record(_ part: SweepPart, name: String, keys: [[SweepReport.ExpectationKey]]) throws(SweepPart.Failure) {
        let report = part.report
        guard report.scenario == scenario else {
            throw SweepPart.Failure(.file(name), "a part of \(report.scenario), not of \(scenario); allowed parts of this search's scenario")
        }
        guard let i = candidates.firstIndex(of: report.overrides) else {
            throw SweepPart.Failure(.file(name), "its overrides [\(report.overrides.joined(separator: ", "))] are no candidate of this search; "
                                        + "allowed the overrides of one candidate, as --ask lists them")
        }
        guard report.expectations == keys[i] else {
            throw SweepPart.Failure(.file(name), "its expectations differ from those of the candidate's scenario; allowed a part of this search's scenario")
        }
        for (n, run) in report.runs.enumerated() {
            guard seeds.contains(run.seed), report.seeds.contains(run.seed) else {
                throw SweepPart.Failure(.file(name), "runs[\(n)].seed: seed \(run.seed) is not one of the search's seeds \(seeds)")
            }
            if let earlier = runs[i][run.seed], earlier != run {
                throw SweepPart.Failure(.file(name), "runs[\(n)]: seed \(run.seed) was told before with another result; allowed one result per seed")
            }
            runs[i][run.seed] = run
        }
    }

    /// Reads a state `TuneState` JSON holds (`rehearseTuneState`, scenario, seeds, candidates,
    /// runs per candidate), every run checked as a part's is.
    public static func read(_ value: JSON, keys: [[SweepReport.ExpectationKey]]) throws(SweepPart.Failure) -> TuneState {
        func fail<T>(_ field: String, _ problem: String) throws(SweepPart.Failure) -> T { throw SweepPart.Failure(field: field, problem) }
        guard value.field("rehearseTuneState") == .int(1) else { return try fail("rehearseTuneState", "missing: this is not the state of a tune") }
        guard case .string(let scenario)? = value.field("scenario") else { return try fail("scenario", "expected a string") }
        guard case .string(let seedText)? = value.field("seeds"), let seeds = SeedRange(parsing: seedText),
              seeds.last - seeds.first < UInt64(SeedRange.mostSeeds) else {
            return try fail("seeds", "expected a seed range such as 0..999 of at most \(SeedRange.mostSeeds) seeds")
        }
        guard case .array(let candidateItems)? = value.field("candidates") else { return try fail("candidates", "expected a list") }
        var candidates: [[String]] = []
        for (i, item) in candidateItems.enumerated() {
            guard case .array(let labels) = item else { return try fail("candidates[\(i)]", "expected a list of overrides") }
            candidates.append(try labels.enumerated().map { (j, label) throws(SweepPart.Failure) in
                guard case .string(let text) = label else { return try fail("candidates[\(i)][\(j)]", "expected a string") }
                return text
            })
        }
        guard case .array(let runLists)? = value.field("runs"), runLists.count == candidates.count else {
            return try fail("runs", "expected one list of runs per candidate")
        }
        guard keys.count == candidates.count else { return try fail("candidates", "expected \(keys.count) candidates, as the scenario's --vary gives") }
        var state = TuneState(scenario: scenario, seeds: seeds, candidates: candidates)
        for (i, list) in runLists.enumerated() {
            guard case .array(let items) = list else { return try fail("runs[\(i)]", "expected a list of runs") }
            for (j, item) in items.enumerated() {
                let run: RunDigest
                do throws(NumberOutOfRange) { run = try SweepPart.digest(item, keys: keys[i]) } catch { return try fail("runs[\(i)][\(j)].\(error.field)", error.problem.message) }
                guard seeds.contains(run.seed), state.runs[i][run.seed] == nil else {
                    return try fail("runs[\(i)][\(j)].seed", "seed \(run.seed) is outside \(seeds) or given twice")
                }
                state.runs[i][run.seed] = run
            }
        }
        return state
    }
}
