import Formats
import UpgradeEngine
import XCTest

/// The risk gate's one verdict and its incremental tally: the attacks of issue 37 on the gate
/// (a shard that failed and passed, an upgrade that never ended counted as on time, a share of
/// an expectation the scenario does not have, a cost of seeds² × requirements) and the capacity
/// requirement `lowestHealthy.C`.
final class VerdictTests: XCTestCase {
    static func digest(_ seed: UInt64, code: RunningCode?, time: Double?, lowest: Int? = 16, capacity: Int? = 20, hit: Bool = false,
                       held: [HeldKey] = []) -> RunDigest {
        RunDigest(seed: seed, code: code, errorCode: code == .faulted ? .unhealthyUpgraded : nil, timeToFinish: time, lowestHealthy: lowest,
                  unavailable: 10, hitTimeLimit: hit, held: held, failed: [], leftBehind: [], capacity: capacity)
    }

    func result(_ verdict: Requirement.Verdict) -> RequirementResult {
        // 0 of 1,000 against "Faulted <= 1%" holds; 1,000 of 1,000 fails; 0 of 10 is undecided.
        let requirement = Requirement(.code(.faulted), .atMost, 0.01)
        let share = verdict == .held ? Share(0, of: 1000) : verdict == .failed ? Share(1000, of: 1000) : Share(0, of: 10)
        let judged = RequirementResult(requirement, share: share, confidence: 0.95)
        XCTAssertEqual(judged.verdict, verdict)
        return judged
    }

    func testOneVerdictForEveryCommand() {
        let (held, failed, undecided) = (result(.held), result(.failed), result(.undecided))
        XCTAssertEqual(RiskVerdict([held, held]).outcome, .passed)
        XCTAssertEqual(RiskVerdict([held, held]).exitCode, 0)
        XCTAssertEqual(RiskVerdict([held, failed, undecided]).outcome, .failed)
        XCTAssertEqual(RiskVerdict([held, failed]).exitCode, 1)
        XCTAssertEqual(RiskVerdict([held, undecided]).outcome, .undecided)
        XCTAssertEqual(RiskVerdict([held, undecided]).exitCode, 1)
        // A part of several (--shard 2/4) leaves undecided requirements to the merge, never a failed one.
        XCTAssertEqual(RiskVerdict([held, undecided], partial: true).exitCode, 0)
        XCTAssertEqual(RiskVerdict([failed], partial: true).exitCode, 1)
        // compare's rows, test's scenarios: every judged set must pass; one without requirements is not judged.
        XCTAssertEqual(RiskVerdict(each: [[held], [], [held]]).exitCode, 0)
        XCTAssertEqual(RiskVerdict(each: [[held], [failed]]).outcome, .failed)
        XCTAssertEqual(RiskVerdict(each: [[held], [undecided]]).outcome, .undecided)
    }

    func testAnUpgradeThatNeverEndsIsNotWithinTheDeadline() throws {
        // Two completed in 10 and 50 minutes, one waiting for a deferral's approval when the run
        // stopped (RollingForward, not at the time limit), one cut off by the time limit.
        let runs = [Self.digest(0, code: .completed, time: 600), Self.digest(1, code: .completed, time: 3000),
                    Self.digest(2, code: .rollingForward, time: 120), Self.digest(3, code: .rollingForward, time: nil, hit: true)]
        let hour: Millis = 3_600_000
        XCTAssertEqual(runs.map { $0.endedWithin(hour) }, [true, true, false, false])
        let report = SweepReport(scenario: "s.lua", seeds: SeedRange(0, 3), overrides: [], runs: runs, expectations: [], deadline: hour)
        XCTAssertEqual(report.pastDeadline, Share(2, of: 4))
        let question = RiskQuestion(requirements: [try Requirement.parse("deadline >= 95%").get()], deadline: hour)
        XCTAssertEqual(question.judge(runs, keys: [])[0].share, Share(2, of: 4))
        // 200 runs that never end: none within the deadline, the requirement fails.
        let waiting = (0..<200).map { Self.digest(UInt64($0), code: .rollingForward, time: 60) }
        let judged = question.judge(waiting, keys: [])[0]
        XCTAssertEqual(judged.share, Share(0, of: 200))
        XCTAssertEqual(judged.verdict, .failed)
    }

    func testAShareOfAnExpectationKeyTheRunsDoNotHaveIsNeverHeld() throws {
        let requirement = try Requirement.parse("expect.code >= 95%").get()
        let runs = (0..<300).map { Self.digest(UInt64($0), code: .faulted, time: 60) }
        // No expectation keys at all: nothing is held (it used to be 100%).
        let judged = RiskQuestion(requirements: [requirement]).judge(runs, keys: [])[0]
        XCTAssertEqual(judged.share, Share(0, of: 300))
        XCTAssertEqual(judged.verdict, .failed)
        // With the key, the runs' own results count.
        let keys = [SweepReport.ExpectationKey(location: "s.lua:9", key: .code, expected: "Completed")]
        let some = (0..<4).map { Self.digest(UInt64($0), code: .completed, time: 60, held: [HeldKey(.code, $0 != 2)]) }
        XCTAssertEqual(RiskQuestion(requirements: [requirement]).judge(some, keys: keys)[0].share, Share(3, of: 4))
    }

    func testTheTallyCountsEachRunOnceAndAgreesWithJudgingEveryRun() throws {
        let keys = [SweepReport.ExpectationKey(location: "s.lua:9", key: .code, expected: "Completed"),
                    SweepReport.ExpectationKey(location: "s.lua:9", key: .minHealthy, expected: "at least 15")]
        var requirements: [Requirement] = []
        for text in ["Faulted <= 1%", "Completed >= 90%", "deadline >= 95%", "expect >= 90%", "expect.minHealthy >= 80%", "lowestHealthy.80 >= 95%"] {
            requirements.append(try Requirement.parse(text).get())
        }
        let question = RiskQuestion(requirements: requirements, deadline: 1_800_000)
        // Seed s: faults when s % 7 == 0, takes s % 40 minutes, keeps 16 - s % 3 of 20.
        let runs = (0..<1000).map { s in
            Self.digest(UInt64(s), code: s % 7 == 0 ? .faulted : .completed, time: Double(s % 40 * 60), lowest: 16 - s % 3,
                        held: [HeldKey(.code, s % 7 != 0), HeldKey(.minHealthy, s % 3 == 0)])
        }
        var tally = RiskTally(question, keys: keys)
        for start in stride(from: 0, to: 1000, by: 100) { tally.add(runs[start..<(start + 100)]) }
        XCTAssertEqual(tally.total, 1000)
        let all = question.judge(runs, keys: keys)
        XCTAssertEqual(tally.results, all)
        // Counted by hand: 143 of 1,000 seeds are multiples of 7; 775 take 30 minutes or less
        // (s % 40 ≤ 30: 31 of every 40, 25 times); 334 are multiples of 3 (and keep 16), 48 of
        // them multiples of 21, so 286 hold both expectation keys.
        XCTAssertEqual(tally.counts, [143, 857, 775, 286, 334, 334])
    }

    func testLowestHealthyAsAShareOfCapacity() throws {
        let requirement = try Requirement.parse("lowestHealthy.80 >= 95%").get()
        XCTAssertEqual(requirement.measure, .lowestHealthy(0.8))
        XCTAssertEqual(requirement.description, "lowestHealthy.80 >= 95%")
        XCTAssertEqual(try Requirement.parse("lowestHealthy.62.5 <= 10%").get().measure, .lowestHealthy(0.625))
        for bad in ["lowestHealthy >= 80%", "lowestHealthy.101 >= 95%", "lowestHealthy.-1 >= 95%", "lowestHealthy.8e1 >= 95%", "lowestHealthy. >= 95%"] {
            XCTAssertThrowsError(try Requirement.parse(bad).get(), bad)
        }
        // 80% of 20 is 16: 16 keeps it, 15 does not; 80% of 5 is 4.
        XCTAssertTrue(Self.digest(0, code: .completed, time: 60, lowest: 16, capacity: 20).keptServing(0.8))
        XCTAssertFalse(Self.digest(0, code: .completed, time: 60, lowest: 15, capacity: 20).keptServing(0.8))
        XCTAssertTrue(Self.digest(0, code: .completed, time: 60, lowest: 4, capacity: 5).keptServing(0.8))
        // No upgrade activity took nothing down; a capacity not known keeps nothing.
        XCTAssertTrue(Self.digest(0, code: nil, time: nil, lowest: nil, capacity: 20).keptServing(0.8))
        XCTAssertFalse(Self.digest(0, code: .completed, time: 60, lowest: 16, capacity: nil).keptServing(0.8))
    }

    func testTuneWarnsWhenItsBestKeepsFewerServingThanTheCurrentPolicy() {
        // 20 instances: batches of 20% keep 16 serving, batches of 50% keep 10.
        let current = (0..<100).map { Self.digest(UInt64($0), code: .completed, time: 900, lowest: 16) }
        let halves = (0..<100).map { Self.digest(UInt64($0), code: .completed, time: 400, lowest: 10) }
        XCTAssertEqual(Tune.capacityWarning(best: halves, current: current), Tune.CapacityWarning(bestP5: 10, currentP5: 16, runs: 100))
        XCTAssertNil(Tune.capacityWarning(best: current, current: current))
    }

    func testTheClockStopsAtTheLatestInstantInsteadOfOverflowing() {
        // P11574074DT1H46M40S is 10^12 seconds, the longest duration: one advance reaches it, none goes past.
        let step = try? ISODuration.parse("P11574074DT1H46M40S").get()
        XCTAssertEqual(step, ISODuration.longest)
        XCTAssertEqual(ISODuration.later(0, by: ISODuration.longest), ISODuration.longest)
        XCTAssertNil(ISODuration.later(ISODuration.longest, by: 1))
        XCTAssertNil(ISODuration.later(ISODuration.longest, by: Int.max))
        XCTAssertNil(ISODuration.later(Int.max - 1, by: Int.max))
        XCTAssertNil(ISODuration.later(0, by: -1))
        XCTAssertEqual(ISODuration.later(60_000, by: 120_000), 180_000)
    }
}
