/// The looks of a sequential gate (`sweep --until-decided`): the requirements are judged after
/// every `Tune.lookEvery` seeds counted from the first (100, 200, …) and after the last seed, and
/// the gate stops at the first look where every requirement is decided. The looks are fixed seed
/// counts, so one process, and `merge` over parts that cover the seeds, look at the same runs and
/// reach the same verdict after the same runs.
public enum SequentialGate {
    /// Whether every requirement is decided (held or failed): the gate stops.
    public static func decided(_ results: [RequirementResult]) -> Bool {
        results.allSatisfy { $0.verdict != .undecided }
    }

    /// The end (exclusive) of the look after `done` runs, within `total` runs: the next multiple
    /// of `Tune.lookEvery`, or `total`.
    public static func nextLook(after done: Int, total: Int) -> Int {
        min(total, (done / Tune.lookEvery + 1) * Tune.lookEvery)
    }

    /// The gate over `runs` already made, in seed order from the sweep's first seed: how many of
    /// them one process would have made (up to the first look that decides, or all of them) and
    /// the judgement there. `after`: the looks up to that many runs were judged before and
    /// decided nothing (a gate that runs on judges only its new looks).
    public static func judge(_ runs: [RunDigest], question: RiskQuestion, keys: [SweepReport.ExpectationKey],
                             after: Int = 0) -> (count: Int, results: [RequirementResult]) {
        var done = min(after, runs.count)
        // Counted as the looks come (linear in the runs, whatever the number of looks).
        var tally = RiskTally(question, keys: keys)
        tally.add(runs[..<done])
        var results = tally.results
        repeat {
            let look = nextLook(after: done, total: runs.count)
            tally.add(runs[done..<look])
            done = look
            results = tally.results
        } while done < runs.count && !decided(results)
        return (done, results)
    }
}
