import Formats

/// `rehearse tune`: a search over policies for the best one that meets the requirements, racing
/// the candidates so that clearly infeasible or clearly worse ones stop early.
///
/// Every candidate runs the same seeds in the same order (common random numbers), in rounds of
/// `lookEvery` seeds. After each round a candidate is
/// - **infeasible**, and stops, once any requirement failed (the confidence sequence of §`Requirement`);
/// - **feasible**, and pauses, once every requirement held;
/// - **dominated**, and stops, once its objective is provably worse than a feasible candidate's
///   (percentile objectives only: their bounds come from the same sequence);
/// - otherwise it runs another round, until the seeds run out (it ends **undecided**).
/// Then the finalists (feasible, not dominated) are confirmed: each is topped up to as many runs
/// as the finalist that took the most to decide, so they are ranked on equal runs. The best is the
/// finalist with the best objective (ties: the earlier candidate). Deterministic whatever the jobs.
public enum Tune {
    /// The seeds in one round of the race, the same as a sequential sweep's looks.
    public static let lookEvery = 100

    /// What to optimise.
    public enum Objective: Equatable, Sendable, CustomStringConvertible {
        /// A percentile (0–100) of the time to finish, to minimise.
        case finishPercentile(Double)
        /// The mean time to finish, to minimise.
        case finishMean
        /// The mean instance-seconds unavailable, to minimise.
        case unavailableMean
        /// The 5th percentile of the fewest serving instances, to maximise.
        case lowestHealthyP5

        /// Reads `p50`, `p95`, `mean`, `unavailable` (to minimise) or `lowestHealthy.p5` (to maximise).
        public init?(minimize text: String) {
            switch text {
            case "mean": self = .finishMean
            case "unavailable": self = .unavailableMean
            default:
                guard text.hasPrefix("p"), text.dropFirst().allSatisfy({ $0.isASCII && $0.isNumber }), let p = Int(text.dropFirst()), (1...99).contains(p) else {
                    return nil
                }
                self = .finishPercentile(Double(p))
            }
        }

        /// Whether a larger value is better.
        public var maximises: Bool { self == .lowestHealthyP5 }

        public var description: String {
            switch self {
            case .finishPercentile(let p): return "time to finish p\(Requirement.percentText(p / 100))"
            case .finishMean: return "mean time to finish"
            case .unavailableMean: return "mean instance-seconds unavailable"
            case .lowestHealthyP5: return "lowest healthy p5"
            }
        }

        /// The objective's estimate over `runs`, with provable bounds where it has them.
        public func measure(_ runs: [RunDigest], confidence: Double) -> QuantileBounds {
            switch self {
            case .finishPercentile(let p): return QuantileBounds(runs.timeToFinish, percentile: p, confidence: confidence)
            case .lowestHealthyP5: return QuantileBounds(runs.lowestHealthy, percentile: 5, confidence: confidence)
            case .finishMean: return QuantileBounds(estimate: Self.mean(runs.timeToFinish.sorted))
            case .unavailableMean: return QuantileBounds(estimate: Self.mean(runs.unavailable.sorted))
            }
        }

        static func mean(_ values: [Double]) -> Double? { values.isEmpty ? nil : values.reduce(0, +) / Double(values.count) }
    }

    /// Where a candidate ended.
    public enum Standing: String, Equatable, Sendable {
        /// Every requirement held.
        case feasible
        /// A requirement failed.
        case infeasible
        /// Provably worse on the objective than a feasible candidate.
        case dominated
        /// Still undecided when the seeds ran out.
        case undecided
    }

    /// One candidate's result.
    public struct Result: Sendable {
        /// Its overrides as written.
        public var label: [String]
        /// Its standing.
        public var standing: Standing
        /// The runs it made, in seed order.
        public var runs: [RunDigest]
        /// Runs made when its standing was decided (nil: never).
        public var decidedAfter: Int?
        /// Each requirement over its runs.
        public var requirements: [RequirementResult]
        /// The objective over its runs.
        public var objective: QuantileBounds
        /// The expectation keys its digests refer to.
        public var keys: [SweepReport.ExpectationKey]
    }

    /// The search's outcome.
    public struct Outcome: Sendable {
        /// Every candidate, in the order given.
        public var candidates: [Result]
        /// The best feasible candidate's index; nil when none is feasible.
        public var best: Int?
        /// Runs made in all.
        public var runsSpent: Int
        /// Runs a fixed grid at the same confidence would make: every candidate run as many times
        /// as the candidate that took the most runs to decide (the seeds' count if one never did).
        public var gridRuns: Int
        /// The candidates on the Pareto front of P(Faulted) × time to finish p95 × lowest healthy
        /// p5 (lower, lower, higher), among those not infeasible.
        public var front: [Int]
    }

    /// One candidate's runs for a block of seeds: what a round of the race asks for.
    public struct Work: Equatable, Sendable {
        /// The candidate's index.
        public var candidate: Int
        /// The seeds, a block that follows the candidate's earlier runs.
        public var seeds: SeedRange

        /// `candidate`'s runs of `seeds`.
        public init(candidate: Int, seeds: SeedRange) {
            self.candidate = candidate
            self.seeds = seeds
        }
    }

    /// Races the candidates named by `labels` (each with the expectation keys its digests refer
    /// to) over `seeds` for `question` and `objective`. `runSeeds(candidate, seeds, done)` runs
    /// one candidate for the given seeds and returns their digests in seed order; `done` is how
    /// many runs the race has made before these.
    public static func run<Failure: Error>(labels: [[String]], keys: [[SweepReport.ExpectationKey]], seeds: SeedRange, question: RiskQuestion,
                                           objective: Objective,
                                           runSeeds: (Int, [UInt64], Int) throws(Failure) -> [RunDigest]) throws(Failure) -> Outcome {
        try run(labels: labels, keys: keys, seeds: seeds, question: question, objective: objective) { (work, done) throws(Failure) in
            var made: [[RunDigest]] = []
            var done = done
            for item in work {
                made.append(try runSeeds(item.candidate, item.seeds.seeds(), done))
                done += item.seeds.count
            }
            return made
        }
    }

    /// The race with every round's work asked for at once: `runRound(work, done)` returns the
    /// digests of each work item, in seed order, in the order asked; `done` is how many runs the
    /// race has made before them. The outcome depends on the digests only, never on how or where
    /// a round ran, so a round may be run by other processes (`tune --ask`, `--tell`).
    public static func run<Failure: Error>(labels: [[String]], keys: [[SweepReport.ExpectationKey]], seeds: SeedRange, question: RiskQuestion,
                                           objective: Objective,
                                           runRound: ([Work], Int) throws(Failure) -> [[RunDigest]]) throws(Failure) -> Outcome {
        var results = labels.indices.map { i in
            Result(label: labels[i], standing: .undecided, runs: [], decidedAfter: nil, requirements: [],
                   objective: QuantileBounds(estimate: nil), keys: keys[i])
        }
        var active = Array(labels.indices)
        var spent = 0
        // Each candidate's requirements counted as its runs come (linear in the seeds).
        var tallies = labels.indices.map { RiskTally(question, keys: keys[$0]) }
        func extend(_ candidates: [Int], to count: Int) throws(Failure) {
            let work = candidates.compactMap { i -> Work? in
                guard results[i].runs.count < count, results[i].runs.count < seeds.count else { return nil }
                return Work(candidate: i, seeds: SeedRange(seeds.first &+ UInt64(results[i].runs.count), seeds.first &+ UInt64(min(count, seeds.count) - 1)))
            }
            guard !work.isEmpty else { return }
            let made = try runRound(work, spent)
            for (item, runs) in zip(work, made) {
                let i = item.candidate
                results[i].runs += runs
                spent += item.seeds.count
                tallies[i].add(runs)
                results[i].requirements = tallies[i].results
                results[i].objective = objective.measure(results[i].runs, confidence: question.confidence)
            }
        }
        var round = 0
        while !active.isEmpty {
            round += 1
            try extend(active, to: round * lookEvery)
            for i in active {
                switch RiskVerdict(results[i].requirements).outcome {
                case .failed: results[i].standing = .infeasible
                case .passed: results[i].standing = .feasible
                case .undecided: break
                }
                if results[i].standing != .undecided { results[i].decidedAfter = results[i].runs.count }
            }
            // Undecided candidates provably worse than a feasible one need not run on.
            let feasible = results.indices.filter { results[$0].standing == .feasible }
            for i in active where results[i].standing == .undecided {
                if feasible.contains(where: { provablyWorse(results[i].objective, than: results[$0].objective, objective) }) {
                    results[i].standing = .dominated
                    results[i].decidedAfter = results[i].runs.count
                }
            }
            active = active.filter { results[$0].standing == .undecided && results[$0].runs.count < seeds.count }
        }
        // Feasible candidates provably worse than another feasible one are dominated; the rest are
        // the finalists, confirmed on equal runs.
        let feasible = results.indices.filter { results[$0].standing == .feasible }
        for i in feasible where feasible.contains(where: { $0 != i && provablyWorse(results[i].objective, than: results[$0].objective, objective) }) {
            results[i].standing = .dominated
        }
        let finalists = results.indices.filter { results[$0].standing == .feasible }
        let confirmTo = finalists.map { results[$0].runs.count }.max() ?? 0
        try extend(finalists, to: confirmTo)
        // A finalist without a value of the objective (no run had upgrade activity) cannot be best.
        let best = finalists.filter { results[$0].objective.estimate != nil }.min { a, b in
            let x = results[a].objective.estimate!, y = results[b].objective.estimate!
            return objective.maximises ? (-x, a) < (-y, b) : (x, a) < (y, b)
        }
        let hardest = results.map { $0.decidedAfter ?? seeds.count }.max() ?? 0
        return Outcome(candidates: results, best: best, runsSpent: spent,
                       gridRuns: labels.count.multipliedReportingOverflow(by: hardest).partialValue, front: paretoFront(results))
    }

    /// Whether `a` is provably worse than `b`: `a`'s provable bound lies beyond `b`'s on the wrong side.
    static func provablyWorse(_ a: QuantileBounds, than b: QuantileBounds, _ objective: Objective) -> Bool {
        if objective.maximises {
            guard let aUpper = a.upper, let bLower = b.lower else { return false }
            return aUpper < bLower
        }
        guard let aLower = a.lower, let bUpper = b.upper else { return false }
        return aLower > bUpper
    }

    /// The candidates no other candidate beats on all of P(Faulted), p95 and lowest healthy p5
    /// while being strictly better on one; infeasible candidates left out.
    static func paretoFront(_ results: [Result]) -> [Int] {
        let eligible = results.indices.filter { results[$0].standing != .infeasible && !results[$0].runs.isEmpty }
        let front = Pareto.front(eligible.map { Pareto.Point(results[$0].runs) })
        return front.map { eligible[$0] }
    }
}

/// The Pareto front of policies over risk, time and capacity: P(Faulted), the time to finish
/// p95 (both lower is better) and the lowest healthy p5 (higher is better).
public enum Pareto {
    /// One policy's figures.
    public struct Point: Equatable, Sendable {
        /// P(Faulted), 0...1.
        public var faulted: Double
        /// Time to finish p95, seconds (+∞ without upgrade activity).
        public var finishP95: Double
        /// Lowest healthy p5 (−∞ without upgrade activity).
        public var lowestP5: Double

        /// The figures of `runs`.
        public init(_ runs: [RunDigest]) {
            faulted = runs.faulted.fraction
            finishP95 = runs.timeToFinish.percentile(95) ?? .infinity
            lowestP5 = runs.lowestHealthy.percentile(5) ?? -.infinity
        }
    }

    /// The indexes of the points no other point dominates (as good on all three, better on one).
    public static func front(_ points: [Point]) -> [Int] {
        points.indices.filter { i in
            let p = points[i]
            return !points.indices.contains { j in
                let q = points[j]
                return j != i && q.faulted <= p.faulted && q.finishP95 <= p.finishP95 && q.lowestP5 >= p.lowestP5
                    && (q.faulted < p.faulted || q.finishP95 < p.finishP95 || q.lowestP5 > p.lowestP5)
            }
        }
    }
}

extension Tune {
    /// The best candidate keeps fewer instances serving than the scenario's current policy: its
    /// lowest healthy p5 is below the current policy's over the same seeds.
    public struct CapacityWarning: Equatable, Sendable {
        /// The best candidate's lowest healthy p5.
        public var bestP5: Double
        /// The current policy's lowest healthy p5 over the same seeds.
        public var currentP5: Double
        /// Runs each figure is over.
        public var runs: Int

        /// A warning of `bestP5` against `currentP5`, each over `runs` runs.
        public init(bestP5: Double, currentP5: Double, runs: Int) {
            self.bestP5 = bestP5
            self.currentP5 = currentP5
            self.runs = runs
        }

        /// What `tune` says on standard error and under `warnings` in its JSON.
        public var message: String {
            "the best candidate lowers lowest healthy p5 from \(Self.text(currentP5)) (the scenario's current policy) to \(Self.text(bestP5)) over the same \(runs) seeds; "
                + "add a capacity requirement such as --require \"lowestHealthy.80 >= 95%\" to keep it"
        }

        static func text(_ value: Double) -> String { value == value.rounded() ? String(Int(value)) : String(value) }
    }

    /// The warning when `best`'s runs have a lower lowest healthy p5 than `current`'s (the
    /// scenario run with its current policy over the same seeds); nil when it keeps as many or
    /// either has no upgrade activity.
    public static func capacityWarning(best: [RunDigest], current: [RunDigest]) -> CapacityWarning? {
        guard let bestP5 = best.lowestHealthy.percentile(5), let currentP5 = current.lowestHealthy.percentile(5), bestP5 < currentP5 else { return nil }
        return CapacityWarning(bestP5: bestP5, currentP5: currentP5, runs: best.count)
    }
}
