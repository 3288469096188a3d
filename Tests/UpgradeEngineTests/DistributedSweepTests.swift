import Formats
import Reports
import UpgradeEngine
import XCTest

/// Parts that carry their question, adjacent blocks, the sequential gate's looks, and the race of
/// `tune` replayed from runs told by other processes: typed values, worked out by hand.
final class DistributedSweepTests: XCTestCase {
    /// A run of `seed` that faulted or completed.
    func digest(_ seed: UInt64, faulted: Bool = false) -> RunDigest {
        RunDigest(seed: seed, code: faulted ? .faulted : .completed, errorCode: nil, timeToFinish: 240 + Double(seed % 7), lowestHealthy: 1,
                  unavailable: 30, hitTimeLimit: false, held: [], failed: [], leftBehind: [])
    }

    func part(_ seeds: SeedRange, _ shard: Shard, faultEvery: UInt64 = 0) -> SweepPart {
        let runs = seeds.seeds(shard: shard).map { digest($0, faulted: faultEvery > 0 && $0 % faultEvery == 0) }
        return SweepPart(report: SweepReport(scenario: "x.lua", seeds: seeds, overrides: [], runs: runs, expectations: [], deadline: nil),
                         shard: shard)
    }

    func testAPartKeepsItsRequirementsConfidenceAndGateThroughJSON() throws {
        var written = part(SeedRange(0, 9), Shard(index: 1, count: 2))
        written.question = RiskQuestion(requirements: [Requirement(.code(.faulted), .atMost, 0.005), Requirement(.deadline, .atLeast, 0.95)],
                                        confidence: 0.99, deadline: 3_600_000)
        written.report.deadline = 3_600_000
        written.untilDecided = true
        written.binary = "0.6.0"
        let read = try SweepPart.read(try JSON.parse(SweepJSON.part(written).serialized()))
        XCTAssertEqual(read, written)
        XCTAssertEqual(read.question?.requirements.map(\.description), ["Faulted <= 0.5%", "deadline >= 95%"])
        // A part without a question reads back without one, as before.
        let plain = part(SeedRange(0, 9), Shard(index: 2, count: 2))
        XCTAssertEqual(try SweepPart.read(try JSON.parse(SweepJSON.part(plain).serialized())), plain)
    }

    func testAdjacentBlocksMergeIntoTheWholeRangeAndAGapIsRefused() throws {
        let merged = try SweepPart.merge([("b", part(SeedRange(100, 149), Shard(index: 1, count: 1))),
                                          ("a2", part(SeedRange(0, 99), Shard(index: 2, count: 2))),
                                          ("a1", part(SeedRange(0, 99), Shard(index: 1, count: 2)))])
        XCTAssertEqual(merged.seeds, SeedRange(0, 149))
        XCTAssertEqual(merged.runs.map(\.seed), Array(0...149))
        XCTAssertThrowsError(try SweepPart.merge([("a", part(SeedRange(0, 99), Shard(index: 1, count: 1))),
                                                  ("c", part(SeedRange(101, 149), Shard(index: 1, count: 1)))])) { error in
            XCTAssertEqual((error as? SweepPart.Failure)?.place, .file("c"))
        }
        // A block missing a shard names the block.
        XCTAssertThrowsError(try SweepPart.merge([("a1", part(SeedRange(0, 99), Shard(index: 1, count: 2))),
                                                  ("b", part(SeedRange(100, 149), Shard(index: 1, count: 1)))])) { error in
            XCTAssertEqual((error as? SweepPart.Failure)?.conflict, .missing(Shard(index: 2, count: 2), seeds: SeedRange(0, 99)), "\(error)")
        }
        // Parts asked different questions are not one sweep.
        var asked = part(SeedRange(100, 149), Shard(index: 1, count: 1))
        asked.question = RiskQuestion(requirements: [Requirement(.code(.faulted), .atMost, 0.01)])
        XCTAssertThrowsError(try SweepPart.merge([("a", part(SeedRange(0, 99), Shard(index: 1, count: 1))), ("q", asked)]))
    }

    func testTheGateStopsAtTheFirstLookThatDecides() {
        // Every 50th seed faults (2%) against `Faulted <= 5%` at 95%: the prior is Beta(1, 19)
        // and, with k of n faulted, log M_n(5%) = log B(1 + k, 19 + n − k) − log B(1, 19)
        // − k log 0.05 − (n − k) log 0.95: 0.34, 1.26, 2.29 and 3.37 at n = 100, 200, 300 and
        // 400 (k = 2, 4, 6, 8). The limit is excluded once it reaches log 20 = 3.00: at 400.
        let question = RiskQuestion(requirements: [Requirement(.code(.faulted), .atMost, 0.05)])
        let runs = (0..<1000).map { digest(UInt64($0), faulted: $0 % 50 == 0) }
        for (n, decided) in [(100, false), (200, false), (300, false), (400, true)] {
            XCTAssertEqual(SequentialGate.decided(question.judge(Array(runs[..<n]), keys: [])), decided, "\(n)")
        }
        let gate = SequentialGate.judge(runs, question: question, keys: [])
        XCTAssertEqual(gate.count, 400)
        XCTAssertEqual(gate.results.map(\.verdict), [.held])
        XCTAssertEqual(gate.results.first?.share, Share(8, of: 400))
        // Fewer runs than the first deciding look: all of them, undecided, as at the budget's end.
        let short = SequentialGate.judge(Array(runs[..<350]), question: question, keys: [])
        XCTAssertEqual(short.count, 350)
        XCTAssertEqual(short.results.map(\.verdict), [.undecided])
        XCTAssertEqual(SequentialGate.nextLook(after: 150, total: 1000), 200)
        XCTAssertEqual(SequentialGate.nextLook(after: 900, total: 950), 950)
    }

    func testTheRaceReplayedFromToldRunsIsTheOneProcessRace() throws {
        // Candidate 0 faults every 5th seed (20%, infeasible against 5%), candidate 1 every 50th
        // (2%: held after 400 runs, as the gate's test works out).
        let labels = [["a=1"], ["a=2"]]
        let question = RiskQuestion(requirements: [Requirement(.code(.faulted), .atMost, 0.05)])
        func run(_ candidate: Int, _ seed: UInt64) -> RunDigest { digest(seed, faulted: seed % (candidate == 0 ? 5 : 50) == 0) }
        let seeds = SeedRange(0, 999)
        let one = Tune.run(labels: labels, keys: [[], []], seeds: seeds, question: question, objective: .finishPercentile(95)) { (i, list, _) in
            list.map { run(i, $0) }
        }
        var state = TuneState(scenario: "x.lua", seeds: seeds, candidates: labels, identities: [SweepIdentity(), SweepIdentity()], binary: "test")
        var rounds: [[Tune.Work]] = []
        while true {
            do throws(TuneState.Pending) {
                _ = try Tune.run(labels: labels, keys: [[], []], seeds: seeds, question: question, objective: .finishPercentile(95)) {
                    (work, _) throws(TuneState.Pending) in try state.replay(work)
                }
                break
            } catch {
                rounds.append(error.work)
                for item in error.work {
                    let runs = item.seeds.seeds().map { run(item.candidate, $0) }
                    let told = SweepPart(report: SweepReport(scenario: "x.lua", seeds: item.seeds, overrides: labels[item.candidate], runs: runs,
                                                             expectations: [], deadline: nil), shard: Shard(index: 1, count: 1), binary: "test")
                    try state.record(told, name: "part", keys: [[], []])
                }
            }
        }
        let replayed = Tune.run(labels: labels, keys: [[], []], seeds: seeds, question: question, objective: .finishPercentile(95)) { (work, _) in
            (try? state.replay(work)) ?? []
        }
        XCTAssertEqual(rounds.first, [Tune.Work(candidate: 0, seeds: SeedRange(0, 99)), Tune.Work(candidate: 1, seeds: SeedRange(0, 99))])
        XCTAssertEqual(replayed.best, one.best)
        XCTAssertEqual(replayed.best, 1)
        XCTAssertEqual(replayed.runsSpent, one.runsSpent)
        XCTAssertEqual(replayed.candidates.map(\.standing), one.candidates.map(\.standing))
        XCTAssertEqual(replayed.candidates.map(\.runs), one.candidates.map(\.runs))
        XCTAssertEqual(one.candidates.map(\.runs.count), [100, 400])
        XCTAssertEqual(rounds.count, 4, "one round asked per 100 seeds of the longest race")
        XCTAssertEqual(rounds[1], [Tune.Work(candidate: 1, seeds: SeedRange(100, 199))], "the infeasible candidate stopped after one round")
        // A seed told twice with another result is refused.
        let conflicting = SweepPart(report: SweepReport(scenario: "x.lua", seeds: SeedRange(1, 1), overrides: ["a=2"], runs: [digest(1, faulted: true)],
                                                        expectations: [], deadline: nil), shard: Shard(index: 1, count: 1), binary: "test")
        XCTAssertThrowsError(try state.record(conflicting, name: "late.json", keys: [[], []]))
    }
}
