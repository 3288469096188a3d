@testable import UpgradeEngine
import XCTest

/// The figures a sweep reports: shares with Wilson's 95% interval, nearest-rank percentiles.
final class SweepStatisticsTests: XCTestCase {
    func testThreeFaultsInTwoHundredRunsIsNotAnExactOnePointFivePercent() {
        let share = Share(3, of: 200)
        XCTAssertEqual(share.fraction, 0.015)
        XCTAssertEqual(share.interval.lower, 0.005114, accuracy: 1e-6)
        XCTAssertEqual(share.interval.upper, 0.043166, accuracy: 1e-6)
        // None in 50 still leaves up to 7.1%; 119 of 200 is 52.6–66.1%.
        XCTAssertEqual(Share(0, of: 50).interval.lower, 0, accuracy: 1e-12)
        XCTAssertEqual(Share(0, of: 50).interval.upper, 0.071348, accuracy: 1e-6)
        XCTAssertEqual(Share(119, of: 200).interval.lower, 0.525797, accuracy: 1e-6)
        XCTAssertEqual(Share(119, of: 200).interval.upper, 0.660622, accuracy: 1e-6)
    }

    func testPercentilesAreNearestRankAndAlwaysAValueARunShowed() {
        let hundred = Distribution((1...100).reversed().map(Double.init))
        XCTAssertEqual(hundred.percentile(50), 50)
        XCTAssertEqual(hundred.percentile(95), 95)
        XCTAssertEqual(hundred.percentile(99), 99)
        XCTAssertEqual(hundred.percentile(0), 1)
        XCTAssertEqual(hundred.percentile(100), 100)
        let three = Distribution([30, 10, 20])
        XCTAssertEqual(three.percentile(50), 20)
        XCTAssertEqual(three.percentile(90), 30)
        XCTAssertEqual(three.percentile(5), 10)
        XCTAssertNil(Distribution([]).percentile(50))
    }

    func testSeedRangesAndShardsCoverEverySeedOnce() {
        XCTAssertEqual(SeedRange(parsing: "0..9"), SeedRange(0, 9))
        XCTAssertEqual(SeedRange(parsing: "7"), SeedRange(7, 7))
        XCTAssertNil(SeedRange(parsing: "9..3"))
        XCTAssertNil(SeedRange(parsing: "0...3"))
        XCTAssertNil(SeedRange(parsing: "a..b"))
        XCTAssertNil(Shard(parsing: "0/4"))
        XCTAssertNil(Shard(parsing: "5/4"))
        let range = SeedRange(0, 9)
        let parts = (1...4).map { range.seeds(shard: Shard(index: $0, count: 4)) }
        XCTAssertEqual(parts[0], [0, 4, 8])
        XCTAssertEqual(parts[3], [3, 7])
        XCTAssertEqual(parts.flatMap { $0 }.sorted(), range.seeds())
    }

    func testTheReportCountsOutcomesErrorsDeadlinesAndInstances() {
        func run(_ seed: UInt64, _ code: String?, _ time: Double?, failed: [Int] = [], hit: Bool = false) -> RunDigest {
            RunDigest(seed: seed, code: code.flatMap(RunningCode.init(rawValue:)), errorCode: code == "Faulted" ? .unhealthyUpgraded : nil,
                      timeToFinish: time, lowestHealthy: time == nil ? nil : 8, unavailable: time, hitTimeLimit: hit,
                      held: [HeldKey(.code, code == "Completed")], failed: failed, leftBehind: failed)
        }
        let report = SweepReport(scenario: "x.lua", seeds: SeedRange(0, 4), overrides: [],
                                 runs: [run(0, "Completed", 1200), run(1, "Faulted", 900, failed: [3]), run(2, "Completed", 4000),
                                        run(3, "Faulted", 600, failed: [3, 5]), run(4, nil, nil, hit: true)],
                                 expectations: [SweepReport.ExpectationKey(location: "x.lua:9", key: .code, expected: "Completed")],
                                 deadline: 3_600_000)
        XCTAssertEqual(report.outcomes.map(\.code), ["Completed", "Faulted", "none"])
        XCTAssertEqual(report.outcomes.map(\.share.count), [2, 2, 1])
        XCTAssertEqual(report.errorCodes.map(\.share.count), [2])
        XCTAssertEqual(report.held.map(\.share.count), [2])
        // Past PT60M: the 4,000 s run, and the run stopped at its time limit.
        XCTAssertEqual(report.pastDeadline?.count, 2)
        XCTAssertEqual(report.failedMostOften().map(\.id), [3, 5])
        XCTAssertEqual(report.failedMostOften().map(\.share.count), [2, 1])
        XCTAssertEqual(report.timeToFinish.count, 4)
        XCTAssertEqual(report.timeToFinish.percentile(50), 900)
    }
}
