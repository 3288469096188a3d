public import AzureWire
import Formats
public import UpgradeEngine

extension Sweep {
    /// The seeds between two looks at the requirements. Looks are taken at fixed seed counts (100,
    /// 200, …), so the same seeds give the same verdict after the same number of runs whatever
    /// the number of jobs.
    public static var lookEvery: Int { Tune.lookEvery }

    /// The fewest runs each thread gets between two joins of the gate's threads: with 16 jobs a
    /// join every 100 seeds left each thread 6 or 7 runs, and every thread waited for the slowest
    /// at each join. Seeds run past the deciding look are dropped, so the result is the same.
    static let runsPerThreadBetweenJoins = 25

    /// Runs `definition` with `inputs` over `seeds`, judging `question` at every `lookEvery`
    /// seeds (`SequentialGate`), and stops as soon as every requirement is decided (held or
    /// failed) or the seeds run out. Returns the digests of the runs up to the deciding look, in
    /// seed order, and the judgement there: the same whatever `jobs` is. The runs are made in
    /// blocks of a whole number of looks, at least `runsPerThreadBetweenJoins` per thread; runs
    /// past the deciding look are dropped. The confidence sequence keeps each verdict's error at
    /// most 1 − confidence however many looks.
    public static func runUntilDecided(_ definition: ScenarioDefinition, _ inputs: RunInputs, seeds: SeedRange,
                                       question: RiskQuestion, jobs: Int,
                                       progress: (@Sendable (Int) -> Void)? = nil) throws -> (runs: [RunDigest], results: [RequirementResult]) {
        // Judging reads the keys' names and order only, not their labels.
        let keys = SweepReport.keys(of: definition.expectations, label: { _ in "" })
        let threads = SweepCapacity.threads(jobs: jobs, seeds: seeds.count)
        let looksPerBlock = max(1, (threads * runsPerThreadBetweenJoins + lookEvery - 1) / lookEvery)
        var runs: [RunDigest] = []
        var next = seeds.first
        while true {
            let last = next.addingReportingOverflow(UInt64(looksPerBlock * lookEvery - 1))
            let end = last.overflow ? seeds.last : min(last.partialValue, seeds.last)
            let done = runs.count
            runs += try run(definition, inputs, seeds: Array(next...end), jobs: jobs,
                            progress: progress.map { report in { @Sendable in report(done + $0) } })
            let gate = SequentialGate.judge(runs, question: question, keys: keys, after: done)
            if gate.count < runs.count || SequentialGate.decided(gate.results) || end == seeds.last {
                runs.removeLast(runs.count - gate.count)
                return (runs, gate.results)
            }
            next = end &+ 1
        }
    }

    /// `runUntilDecided` with the default inputs and `overrides`.
    public static func runUntilDecided(_ definition: ScenarioDefinition, seeds: SeedRange, overrides: [PolicyOverride] = [],
                                       question: RiskQuestion, jobs: Int,
                                       progress: (@Sendable (Int) -> Void)? = nil) throws -> (runs: [RunDigest], results: [RequirementResult]) {
        try runUntilDecided(definition, RunInputs(overrides: overrides), seeds: seeds, question: question, jobs: jobs, progress: progress)
    }
}
