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
    /// Every candidate's run identity (its parameters, limits, …; no grid: the candidates are
    /// the grid): a part told must carry exactly its candidate's.
    public var identities: [SweepIdentity]
    /// The version of rehearse the search runs on: parts of another version are not told.
    public var binary: String
    /// Every candidate's runs told so far, by seed.
    public var runs: [[UInt64: RunDigest]]

    /// A search of `candidates` (with `identities`, one each) over `seeds` run by `binary`, with
    /// no run told yet.
    public init(scenario: String, seeds: SeedRange, candidates: [[String]], identities: [SweepIdentity], binary: String) {
        self.scenario = scenario
        self.seeds = seeds
        self.candidates = candidates
        self.identities = identities
        self.binary = binary
        self.runs = candidates.map { _ in [:] }
    }

    /// The format of the state file: 2 is JSON Lines, a header line then one line per run told,
    /// so that its reader holds one run's tree at a time (format 1 was one document, whose
    /// reader refused it past 32 MiB: a legal search stopped at about 160,000 told runs).
    public static let format = 2
    /// The largest state file read or written, in bytes: a million told runs (the most a
    /// search runs) of some 500 bytes each.
    public static let maxBytes = 512 << 20
    /// The longest line of a state file, in bytes (a run whose instance lists are long).
    public static let maxLineBytes = 4 << 20

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
    /// candidate, another version of rehearse, other run inputs (the identity), other
    /// expectations, a seed outside the search's, a seed told before with another result.
    public mutating func record(_ part: SweepPart, name: String, keys: [[SweepReport.ExpectationKey]]) throws(SweepPart.Failure) {
        let report = part.report
        guard report.scenario == scenario else {
            throw SweepPart.Failure(.file(name), "a part of \(report.scenario), not of \(scenario); allowed parts of this search's scenario")
        }
        guard let i = candidates.firstIndex(of: report.overrides) else {
            throw SweepPart.Failure(.file(name), "its overrides [\(report.overrides.joined(separator: ", "))] are no candidate of this search; "
                                        + "allowed the overrides of one candidate, as --ask lists them")
        }
        guard part.binary == binary else {
            throw SweepPart.Failure(.file(name), "was run by rehearse \(part.binary ?? "of unknown version"), this search by \(binary); "
                                        + "allowed parts of the same version")
        }
        // The candidates are the search's grid: a part is told by its candidate's run inputs.
        let inputs = part.identity.removing("grid")
        guard inputs == identities[i] else {
            throw SweepPart.Failure(.file(name), "its run inputs differ from this search's: "
                                        + inputs.describeDifferences(from: identities[i], here: name, there: "the search"))
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

    /// The header line of a state: what the search is.
    public var header: JSON {
        .ordered([JSONField("rehearseTuneState", .int(Self.format)), JSONField("scenario", .string(scenario)),
                  JSONField("seeds", .string(seeds.description)), JSONField("binary", .string(binary)),
                  JSONField("candidates", .array(candidates.map { .array($0.map(JSON.string)) })),
                  JSONField("identities", .array(identities.map(\.json)))])
    }

    /// Reads the header line of a state (`header`), every run list empty.
    public static func read(header value: JSON) throws(SweepPart.Failure) -> TuneState {
        func fail<T>(_ field: String, _ problem: String) throws(SweepPart.Failure) -> T { throw SweepPart.Failure(field: field, problem) }
        switch value.field("rehearseTuneState") {
        case .int(format)?: break
        case .int(1)?: return try fail("rehearseTuneState", "is format 1, written by an older rehearse; allowed format \(format): start the search again with a new file")
        default: return try fail("rehearseTuneState", "missing: this is not the state of a tune")
        }
        guard case .string(let scenario)? = value.field("scenario") else { return try fail("scenario", "expected a string") }
        guard case .string(let binary)? = value.field("binary") else { return try fail("binary", "expected the version of rehearse as a string") }
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
        guard case .array(let identityItems)? = value.field("identities"), identityItems.count == candidates.count else {
            return try fail("identities", "expected one run identity per candidate")
        }
        var identities: [SweepIdentity] = []
        for (i, item) in identityItems.enumerated() {
            switch SweepIdentity.read(item) {
            case .success(let identity): identities.append(identity)
            case .failure(let failure): return try fail("identities[\(i)]", failure.description)
            }
        }
        return TuneState(scenario: scenario, seeds: seeds, candidates: candidates, identities: identities, binary: binary)
    }

    /// A run line of a state: the candidate's index and the run as `sweep --runs` writes it.
    /// Refused: a candidate out of range, a seed outside the search or told twice.
    public mutating func read(run value: JSON, line: Int, keys: [[SweepReport.ExpectationKey]]) throws(SweepPart.Failure) {
        func fail(_ field: String, _ problem: String) throws(SweepPart.Failure) { throw SweepPart.Failure(field: "line \(line): \(field)", problem) }
        guard keys.count == candidates.count else { return try fail("candidates", "expected \(keys.count) candidates, as the scenario's --vary gives") }
        guard case .int(let i)? = value.member("candidate"), candidates.indices.contains(i) else {
            return try fail("candidate", "expected a candidate's index from 0 to \(candidates.count - 1)")
        }
        let run: RunDigest
        do throws(NumberOutOfRange) { run = try SweepPart.digest(value, keys: keys[i]) } catch { return try fail(error.field, error.problem.message) }
        guard seeds.contains(run.seed), runs[i][run.seed] == nil else { return try fail("seed", "seed \(run.seed) is outside \(seeds) or given twice") }
        runs[i][run.seed] = run
    }
}
