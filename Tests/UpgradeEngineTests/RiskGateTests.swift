import Formats
import Foundation
import UpgradeEngine
import XCTest

/// The risk gate's statistics on their own: requirements read as written, the confidence
/// sequence's error rate under repeated looks, percentile bounds, and the race of `tune` on
/// candidates whose fault probabilities are known in closed form.
final class RiskGateTests: XCTestCase {
    /// P(Bin(n, p) ≥ k), summed exactly.
    static func binomialTail(n: Int, p: Double, atLeast k: Int) -> Double {
        var total = 0.0, term = pow(1 - p, Double(n))  // P(X = 0)
        for x in 0...n {
            if x >= k { total += term }
            term *= Double(n - x) / Double(x + 1) * p / (1 - p)
        }
        return total
    }

    /// A small deterministic generator (SplitMix64) for simulated runs.
    struct Mix {
        var state: UInt64
        mutating func next() -> Double {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return Double((z ^ (z >> 31)) >> 11) / Double(1 << 53)
        }
    }

    /// A digest that faulted or completed.
    static func digest(seed: UInt64, faulted: Bool, time: Double = 600) -> RunDigest {
        RunDigest(seed: seed, code: faulted ? .faulted : .completed, errorCode: faulted ? .unhealthyUpgraded : nil,
                  timeToFinish: time, lowestHealthy: 16, unavailable: 2400, hitTimeLimit: false, held: [HeldKey(.code, !faulted)], failed: [], leftBehind: [])
    }

    func testClosedFormTailsOfTheIssuesScaleSet() {
        // 20 instances, each upgrade failing with probability 0.05: the thresholds of 5, 10, 15, 20
        // and 30% tolerate 1, 2, 3, 4 and 6 failed instances.
        XCTAssertEqual(Self.binomialTail(n: 20, p: 0.05, atLeast: 2), 0.2642, accuracy: 0.0001)
        XCTAssertEqual(Self.binomialTail(n: 20, p: 0.05, atLeast: 3), 0.0755, accuracy: 0.0001)
        XCTAssertEqual(Self.binomialTail(n: 20, p: 0.05, atLeast: 4), 0.0159, accuracy: 0.0001)
        XCTAssertEqual(Self.binomialTail(n: 20, p: 0.05, atLeast: 5), 0.0026, accuracy: 0.0001)
        XCTAssertEqual(Self.binomialTail(n: 20, p: 0.05, atLeast: 7), 0.00003, accuracy: 0.00001)
    }

    func testRequirementsAreReadAsWritten() throws {
        let faulted = try Requirement.parse("Faulted <= 1%").get()
        XCTAssertEqual(faulted.measure, .code(.faulted))
        XCTAssertEqual(faulted.comparison, .atMost)
        XCTAssertEqual(faulted.limit, 0.01, accuracy: 1e-12)
        let deadline = try Requirement.parse("  deadline>=95 %").get()
        XCTAssertEqual(deadline.measure, .deadline)
        XCTAssertEqual(deadline.comparison, .atLeast)
        XCTAssertEqual(deadline.limit, 0.95, accuracy: 1e-12)
        XCTAssertEqual(try Requirement.parse("expect.minHealthy >= 99.5%").get().measure, .expectation(.minHealthy))
        XCTAssertEqual(try Requirement.parse("expect >= 90%").get().measure, .expectations)
        XCTAssertEqual(try Requirement.parse("MaxUnhealthyInstancePercentExceededBeforeRollingUpgrade <= 0.5%").get().measure,
                       .errorCode(.unhealthyBeforeUpgrade))
        XCTAssertEqual(try Requirement.parse("Faulted <= 0.5%").get().description, "Faulted <= 0.5%")
        for bad in ["Faulted < 1%", "Faulted <= 1", "Faulted <= 101%", "Faulted <= nan%", "Faulted <= inf%", "faulted <= 1%",
                    "expect.nothing >= 1%", "Faulted <= 1% <= 2%", "<= 1%", "Faulted <= -1%", "Fau\u{1B}lted <= 1%",
                    "Faulte <= 2%", "Bogus <= 1%", "Faulted <= 0x10%", "Faulted <= 1e-400%", "Faulted <= 1e1%"] {
            XCTAssertThrowsError(try Requirement.parse(bad).get(), bad)
        }
    }

    func testSharesCountWhatEachMeasureNames() {
        let keys = [SweepReport.ExpectationKey(location: "a.lua:9", key: .code, expected: "Completed"),
                    SweepReport.ExpectationKey(location: "a.lua:9", key: .minHealthy, expected: "at least 15")]
        let runs = [
            RunDigest(seed: 0, code: RunningCode(rawValue: "Completed"), errorCode: nil, timeToFinish: 3000, lowestHealthy: 16, unavailable: 1, hitTimeLimit: false,
                      held: [HeldKey(.code, true), HeldKey(.minHealthy, true)], failed: [], leftBehind: []),
            RunDigest(seed: 1, code: RunningCode(rawValue: "Completed"), errorCode: nil, timeToFinish: 4000, lowestHealthy: 14, unavailable: 1, hitTimeLimit: false,
                      held: [HeldKey(.code, true), HeldKey(.minHealthy, false)], failed: [], leftBehind: []),
            RunDigest(seed: 2, code: RunningCode(rawValue: "Faulted"), errorCode: .unhealthyDuringUpgrade, timeToFinish: 1000, lowestHealthy: 16, unavailable: 1, hitTimeLimit: false,
                      held: [HeldKey(.code, false), HeldKey(.minHealthy, true)], failed: [], leftBehind: []),
            RunDigest(seed: 3, code: RunningCode(rawValue: "RollingForward"), errorCode: nil, timeToFinish: nil, lowestHealthy: 16, unavailable: 1, hitTimeLimit: true,
                      held: [HeldKey(.code, false), HeldKey(.minHealthy, true)], failed: [], leftBehind: []),
        ]
        func count(_ text: String, deadline: Millis? = 3_600_000) -> Int {
            (try? Requirement.parse(text).get())!.share(of: runs, keys: keys, deadline: deadline).count
        }
        XCTAssertEqual(count("Faulted <= 1%"), 1)
        XCTAssertEqual(count("Completed >= 1%"), 2)
        XCTAssertEqual(count("MaxUnhealthyInstancePercentExceededInRollingUpgrade <= 1%"), 1)
        XCTAssertEqual(count("MaxUnhealthyInstancePercentExceededBeforeRollingUpgrade <= 1%"), 0)
        XCTAssertEqual(count("deadline >= 95%"), 2)  // 3000 s and 1000 s; 4000 s is late, seed 3 hit the time limit
        XCTAssertEqual(count("expect >= 95%"), 1)
        XCTAssertEqual(count("expect.minHealthy >= 95%"), 3)
    }

    /// A digest says which key each of its results is: `expect.KEY` counts the runs in which every
    /// entry with that key held, read from the digest itself, whatever the order of its entries.
    func testADigestsHeldEntriesAreKeyed() throws {
        func run(_ held: [HeldKey]) -> RunDigest {
            RunDigest(seed: 0, code: .completed, errorCode: nil, timeToFinish: 60, lowestHealthy: 4, unavailable: 0, hitTimeLimit: false,
                      held: held, failed: [], leftBehind: [])
        }
        let runs = [run([HeldKey(.minHealthy, false), HeldKey(.code, true)]), run([HeldKey(.code, true), HeldKey(.minHealthy, true)]),
                    run([HeldKey(.code, false), HeldKey(.minHealthy, true), HeldKey(.minHealthy, false)])]
        func count(_ text: String) throws -> Int { try Requirement.parse(text).get().share(of: runs, keys: [], deadline: nil).count }
        XCTAssertEqual(try count("expect.minHealthy >= 1%"), 1)
        XCTAssertEqual(try count("expect.code >= 1%"), 2)
        XCTAssertEqual(try count("expect >= 1%"), 1)
        XCTAssertEqual(try count("expect.upgrades >= 1%"), 0)  // no entry with the key: nothing held it (and it is refused at load)
    }

    func testAWideIntervalIsUndecidedAndANarrowOneDecides() {
        let atMost5 = try! Requirement.parse("Faulted <= 5%").get()
        XCTAssertEqual(atMost5.judge(Share(8, of: 100), confidence: 0.95).verdict, .undecided)
        XCTAssertEqual(atMost5.judge(Share(755, of: 10_000), confidence: 0.95).verdict, .failed)
        XCTAssertEqual(atMost5.judge(Share(100, of: 10_000), confidence: 0.95).verdict, .held)
        let atLeast95 = try! Requirement.parse("deadline >= 95%").get()
        XCTAssertEqual(atLeast95.judge(Share(9_900, of: 10_000), confidence: 0.95).verdict, .held)
        XCTAssertEqual(atLeast95.judge(Share(9_000, of: 10_000), confidence: 0.95).verdict, .failed)
        // The sequence is wider than the fixed-N Wilson interval at the same confidence: the price
        // of looking after every batch.
        let (lower, upper) = ConfidenceSequence(centredOn: 0.05, confidence: 0.95).interval(count: 77, total: 1000)
        let wilson = Share(77, of: 1000).interval
        XCTAssertLessThan(lower, wilson.lower)
        XCTAssertGreaterThan(upper, wilson.upper)
        XCTAssertLessThan(lower, 0.077)
        XCTAssertGreaterThan(upper, 0.077)
    }

    /// Simulates a sequential sweep of Bernoulli(p) runs judged every 100 runs until decided or
    /// `budget` runs: the verdict and the runs it took.
    static func sequential(p: Double, _ requirement: Requirement, budget: Int, seed: UInt64) -> (Requirement.Verdict, Int) {
        var mix = Mix(state: seed), count = 0
        for n in 1...budget {
            if mix.next() < p { count += 1 }
            if n % 100 == 0 {
                let verdict = requirement.judge(Share(count, of: n), confidence: 0.95).verdict
                if verdict != .undecided { return (verdict, n) }
            }
        }
        return (.undecided, budget)
    }

    func testATrueRequirementIsFailedAtMostFivePercentOfTheTimeWhateverTheLooks() {
        // The hardest true case: the share exactly at the limit, looked at after every 100 runs
        // up to 5,000, over 500 repetitions with different seeds.
        let requirement = try! Requirement.parse("Faulted <= 5%").get()
        var wrong = 0
        for repetition in 0..<500 {
            if Self.sequential(p: 0.05, requirement, budget: 5_000, seed: UInt64(repetition) &* 7919).0 == .failed { wrong += 1 }
        }
        XCTAssertLessThanOrEqual(wrong, 25, "failed \(wrong) of 500 times")
        // A fixed-N interval checked at every look would be wrong far more often; the same loop
        // with Wilson's interval shows it.
        var naive = 0
        for repetition in 0..<500 {
            var mix = Mix(state: UInt64(repetition) &* 7919), count = 0
            for n in 1...5_000 {
                if mix.next() < 0.05 { count += 1 }
                if n % 100 == 0, Share(count, of: n).interval.lower > 0.05 { naive += 1; break }
            }
        }
        XCTAssertGreaterThan(naive, wrong)
    }

    func testTheIssuesRequirementsAreDecidedInFewerRunsThanAFixedTenThousand() {
        let p = Self.binomialTail(n: 20, p: 0.05, atLeast: 3)  // 7.55%
        var strictRuns = 0, looseRuns = 0
        for seed in UInt64(1)...20 {
            let strict = Self.sequential(p: p, try! Requirement.parse("Faulted <= 5%").get(), budget: 10_000, seed: seed)
            XCTAssertEqual(strict.0, .failed)
            XCTAssertLessThan(strict.1, 10_000)
            let loose = Self.sequential(p: p, try! Requirement.parse("Faulted <= 15%").get(), budget: 10_000, seed: seed)
            XCTAssertEqual(loose.0, .held)
            strictRuns += strict.1
            looseRuns += loose.1
        }
        // On average 7.55% against 5% takes about a thousand runs, against 15% a few hundred.
        XCTAssertLessThan(strictRuns / 20, 2_500)
        XCTAssertLessThan(looseRuns / 20, strictRuns / 20)
    }

    func testPercentileBoundsBracketTheTruePercentile() {
        // 1..1000 shuffled: the true 95th percentile is 950.
        var mix = Mix(state: 3)
        let values = (1...1000).map(Double.init).sorted { _, _ in mix.next() < 0.5 }
        let bounds = QuantileBounds(Distribution(values), percentile: 95, confidence: 0.95)
        XCTAssertEqual(bounds.estimate, 950)
        let lower = try! XCTUnwrap(bounds.lower), upper = try! XCTUnwrap(bounds.upper)
        XCTAssertLessThan(lower, 950)
        XCTAssertGreaterThanOrEqual(upper, 950)
        XCTAssertGreaterThan(lower, 900)
        XCTAssertLessThan(upper, 1000)
        // Ties: every value the same, the bounds are that value or absent, never another.
        let flat = QuantileBounds(Distribution(Array(repeating: 600, count: 400)), percentile: 95, confidence: 0.95)
        XCTAssertEqual(flat.upper, 600)
        XCTAssertNil(flat.lower)
    }

    func testTuneFindsTheFeasibleThresholdsWithFewerRunsThanTheGrid() throws {
        // maxUnhealthyUpgradedInstancePercent 5/10/15/20/30 over 20 instances failing with
        // probability 0.05: P(Faulted) = 26.4%, 7.55%, 1.59%, 0.26%, 0.003%.
        let tails = [2, 3, 4, 5, 7].map { Self.binomialTail(n: 20, p: 0.05, atLeast: $0) }
        let question = RiskQuestion(requirements: [try Requirement.parse("Faulted <= 1%").get()])
        for jobsLike in [1, 2] {
            let outcome = Tune.run(labels: [5, 10, 15, 20, 30].map { ["maxUnhealthyUpgradedInstancePercent=\($0)"] },
                                   keys: Array(repeating: [], count: 5), seeds: SeedRange(0, 29_999), question: question,
                                   objective: .finishPercentile(95)) { (i: Int, seeds: [UInt64], _: Int) -> [RunDigest] in
                // Each seed's outcome depends on the candidate and the seed only, as a run does;
                // `jobsLike` only changes the order the closure computes them in.
                let ordered = jobsLike == 1 ? seeds : seeds.reversed()
                let digests = ordered.map { seed -> RunDigest in
                    var mix = Mix(state: seed &* 0x2545_F491_4F6C_DD1D &+ UInt64(i))
                    return Self.digest(seed: seed, faulted: mix.next() < tails[i])
                }
                return digests.sorted { $0.seed < $1.seed }
            }
            XCTAssertEqual(outcome.candidates.map(\.standing), [.infeasible, .infeasible, .infeasible, .feasible, .feasible])
            XCTAssertTrue([3, 4].contains(try XCTUnwrap(outcome.best)))
            XCTAssertLessThan(outcome.runsSpent, outcome.gridRuns)
            XCTAssertEqual(outcome.runsSpent, outcome.candidates.map(\.runs.count).reduce(0, +))
            // The finalists were confirmed on equal runs.
            XCTAssertEqual(outcome.candidates[3].runs.count, outcome.candidates[4].runs.count)
            XCTAssertFalse(outcome.front.contains(0))
        }
    }

    func testTuneDropsACandidateProvablySlowerThanAFeasibleOne() {
        // Both meet "Faulted <= 50%"; the second takes twice as long at p95 and stops early.
        let question = RiskQuestion(requirements: [try! Requirement.parse("Faulted <= 50%").get()])
        let outcome = Tune.run(labels: [["fast"], ["slow"], ["unsafe-and-slow"]], keys: [[], [], []], seeds: SeedRange(0, 9_999),
                               question: question, objective: .finishPercentile(95)) { (i: Int, seeds: [UInt64], _: Int) -> [RunDigest] in
            seeds.map { seed in
                var mix = Mix(state: seed)
                let time = 500 + 100 * mix.next()
                return Self.digest(seed: seed, faulted: i == 2 ? mix.next() < 0.5 : mix.next() < 0.05, time: i == 0 ? time : 2 * time)
            }
        }
        XCTAssertEqual(outcome.best, 0)
        XCTAssertEqual(outcome.candidates[1].standing, .dominated)
        XCTAssertEqual(outcome.candidates[2].standing, .dominated)
        XCTAssertLessThan(outcome.candidates[2].runs.count, 10_000)
    }
}
