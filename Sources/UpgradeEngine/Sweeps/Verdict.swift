public import Formats

/// The risk gate's one verdict: what every command that judges requirements (`sweep`, a shard
/// of it, `merge`, `compare`, `tune`, `test`) decides from the requirements it judged, and the
/// exit status that follows. Nothing else turns requirement results into an exit status.
public struct RiskVerdict: Equatable, Sendable {
    /// What the requirements say together.
    public enum Outcome: String, Equatable, Sendable {
        /// Every requirement held.
        case passed
        /// A requirement failed.
        case failed
        /// None failed, but one is still undecided.
        case undecided
    }

    /// What the requirements say together.
    public var outcome: Outcome
    /// Whether the runs judged are the whole sweep, or one part of it (`--shard I/N` with N > 1)
    /// whose undecided requirements `merge` decides.
    public var partial: Bool

    /// The verdict on `results`: passed when every one held, failed when one failed, otherwise
    /// undecided. `partial`: the runs are one part of a sweep split over several.
    public init(_ results: [RequirementResult], partial: Bool = false) {
        outcome = Self.together(results.map { $0.verdict == .held ? .passed : $0.verdict == .failed ? .failed : .undecided })
        self.partial = partial
    }

    /// Outcomes together: failed when one failed, passed when every one passed, otherwise undecided.
    static func together(_ outcomes: [Outcome]) -> Outcome {
        outcomes.contains(.failed) ? .failed : outcomes.allSatisfy { $0 == .passed } ? .passed : .undecided
    }

    /// Whether the gate lets the command pass: every requirement held. A part of a sweep also
    /// passes while undecided (the merged runs decide), never when a requirement failed on it:
    /// its runs are a sample of the sweep's seeds, and the confidence sequence's verdict on them
    /// holds for the sweep.
    public var passed: Bool { outcome == .passed || (partial && outcome == .undecided) }

    /// 0 when the gate passes, 1 otherwise (a requirement failed or is undecided).
    public var exitCode: Int32 { passed ? 0 : 1 }

    /// The verdict on several sets of requirements judged side by side (`compare`'s
    /// combinations, `test`'s scenarios): passed only when every set passed; failed when one
    /// failed, undecided otherwise. An empty set (no requirement) is not judged.
    public init(each sets: [[RequirementResult]]) {
        outcome = Self.together(sets.filter { !$0.isEmpty }.map { RiskVerdict($0).outcome })
        partial = false
    }
}

/// A question's requirements judged over runs as they come: each requirement's count grows by
/// the runs added, so judging after every look of a sequential sweep costs the new runs only
/// (linear in the seeds, whatever the number of looks), and a look's verdicts are those of
/// `RiskQuestion.judge` over every run so far.
public struct RiskTally: Sendable {
    /// What is judged.
    public let question: RiskQuestion
    /// The expectation keys the digests' `held` refers to.
    public let keys: [SweepReport.ExpectationKey]
    /// For each requirement, how many runs so far showed its measure.
    public private(set) var counts: [Int]
    /// Runs so far.
    public private(set) var total = 0

    /// A tally of `question` with no run yet.
    public init(_ question: RiskQuestion, keys: [SweepReport.ExpectationKey]) {
        self.question = question
        self.keys = keys
        counts = Array(repeating: 0, count: question.requirements.count)
    }

    /// Counts `runs` in.
    public mutating func add(_ runs: some Collection<RunDigest>) {
        for (r, requirement) in question.requirements.enumerated() {
            var n = 0
            for run in runs where requirement.shows(run, keys: keys, deadline: question.deadline) { n += 1 }
            counts[r] += n
        }
        total += runs.count
    }

    /// Every requirement judged over the runs counted so far.
    public var results: [RequirementResult] {
        question.requirements.indices.map {
            RequirementResult(question.requirements[$0], share: Share(counts[$0], of: total), confidence: question.confidence)
        }
    }
}

extension RunDigest {
    /// Whether the run's upgrade ended within `deadline` (ms): not cut off by the run's time
    /// limit, not left running (an upgrade still rolling forward or back when the run stopped,
    /// for instance waiting for a deferral's approval, never ended), and finished by then. A
    /// run without upgrade activity has nothing that could be late.
    public func endedWithin(_ deadline: Millis) -> Bool {
        guard !hitTimeLimit, code != .rollingForward, code != .rollingBack else { return false }
        return (timeToFinish ?? 0) * 1000 <= Double(deadline)
    }
}
