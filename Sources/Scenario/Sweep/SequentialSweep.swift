public import AzureWire
import Formats
public import UpgradeEngine

extension Sweep {
    /// The seeds between two looks at the requirements. Looks are taken at fixed seed counts (100,
    /// 200, …), so the same seeds give the same verdict after the same number of runs whatever
    /// the number of jobs.
    public static var lookEvery: Int { Tune.lookEvery }

    /// Runs `definition` with `inputs` over `seeds` in steps of `lookEvery`, judging `question`
    /// after each step, and stops as soon as every requirement is decided (held or failed) or the
    /// seeds run out. Returns the digests of the runs made, in seed order, and the last judgement.
    /// The confidence sequence keeps each verdict's error at most 1 − confidence however many looks.
    public static func runUntilDecided(_ definition: ScenarioDefinition, _ inputs: RunInputs, seeds: SeedRange,
                                       question: RiskQuestion, jobs: Int,
                                       progress: (@Sendable (Int) -> Void)? = nil) throws -> (runs: [RunDigest], results: [RequirementResult]) {
        // Judging reads the keys' names and order only, not their labels.
        let keys = SweepReport.keys(of: definition.expectations, label: { _ in "" })
        var runs: [RunDigest] = []
        // Counted as the runs come: each look costs its new runs only.
        var tally = RiskTally(question, keys: keys)
        var results = tally.results
        var next = seeds.first
        var finished = false
        while !finished {
            let last = next.addingReportingOverflow(UInt64(lookEvery - 1))
            let end = last.overflow ? seeds.last : min(last.partialValue, seeds.last)
            let done = runs.count
            let chunk = try run(definition, inputs, seeds: Array(next...end), jobs: jobs,
                                progress: progress.map { report in { @Sendable in report(done + $0) } })
            runs += chunk
            tally.add(chunk)
            results = tally.results
            finished = results.allSatisfy { $0.verdict != .undecided } || end == seeds.last
            next = end &+ 1
        }
        return (runs, results)
    }

    /// `runUntilDecided` with the default inputs and `overrides`.
    public static func runUntilDecided(_ definition: ScenarioDefinition, seeds: SeedRange, overrides: [PolicyOverride] = [],
                                       question: RiskQuestion, jobs: Int,
                                       progress: (@Sendable (Int) -> Void)? = nil) throws -> (runs: [RunDigest], results: [RequirementResult]) {
        try runUntilDecided(definition, RunInputs(overrides: overrides), seeds: seeds, question: question, jobs: jobs, progress: progress)
    }
}
