import Formats
@testable import Reports
import UpgradeEngine
import XCTest

/// The figures the pages print keep what a decision needs (issue 60): a duration over an hour
/// keeps its seconds, each percentile column is headed by the percentile it holds, and a sweep
/// of a scenario with lifecycle hooks carries the hook waits to its page.
final class PageFiguresIssue60Tests: XCTestCase {
    func string(_ json: JSON?) -> String? { if case .string(let s)? = json { return s } else { return nil } }
    func items(_ json: JSON?) -> [JSON] { if case .array(let items)? = json { return items } else { return [] } }
    func strings(_ json: JSON?) -> [String] { items(json).compactMap { string($0) } }

    /// 5,450 s = 1 h + 30 min + 50 s; 90,061 s = 1 d + 1 h + 1 min + 1 s; 7,205 s = 2 h + 5 s.
    func testADurationOverAnHourKeepsItsSeconds() {
        XCTAssertEqual(Figures.human(seconds: 5_450), "1 h 30 min 50 s")
        XCTAssertEqual(Figures.human(seconds: 5_400), "1 h 30 min")
        XCTAssertEqual(Figures.human(seconds: 7_205), "2 h 5 s")
        XCTAssertEqual(Figures.human(seconds: 90_061), "1 d 1 h 1 min 1 s")
        XCTAssertEqual(Figures.human(seconds: -5_450), "-1 h 30 min 50 s")
        XCTAssertEqual(Figures.human(seconds: 270), "4 min 30 s")
        XCTAssertEqual(Figures.human(seconds: 0.5), "0.5 s")
        XCTAssertEqual(Figures.both(5_450_000), "PT1H30M50S (1 h 30 min 50 s)")
        // Far beyond a run's length it is no trap, only an order of magnitude.
        XCTAssertEqual(Figures.human(seconds: 1e300), "1e+300 s")
    }

    /// 100 runs that each took 5,450 s beside a PT1H30M deadline: the page's p50 and the text's
    /// both read 1 h 30 min 50 s, and none ended within the deadline.
    func testTheSweepPageSaysTheSecondsThatMissTheDeadline() throws {
        let runs = (0..<100).map { seed in
            RunDigest(seed: UInt64(seed), code: .completed, errorCode: nil, timeToFinish: 5_450, lowestHealthy: seed,
                      unavailable: 300, hitTimeLimit: false, held: [], failed: [], leftBehind: [])
        }
        let r = SweepReport(scenario: "slow.lua", seeds: SeedRange(0, 99), overrides: [], runs: runs, expectations: [], deadline: 5_400_000)
        let figures = SweepReportPage.figures(r)
        XCTAssertEqual(string(figures.member("finishP50")?.member("human")), "1 h 30 min 50 s")
        XCTAssertEqual(string(figures.member("deadline")), "PT1H30M (1 h 30 min)")
        XCTAssertEqual(string(figures.member("withinDeadline")), "0.0%")
        let text = SweepText.report(r).first { $0.hasPrefix("Time to finish ") && !$0.contains("(s)") }
        XCTAssertEqual(text?.contains("1 h 30 min 50 s"), true, text ?? "no row")
    }

    /// The lowest healthy row holds p50, p10, p5, p1 and the minimum (its bad tail is low) and is
    /// headed so; the time rows hold p50 … max and are headed so. Lowest healthy of runs 0…99 is
    /// the seed: each value the page prints is the distribution's percentile under its head.
    func testEachPercentileColumnIsHeadedByWhatItHolds() throws {
        let runs = (0..<100).map { seed in
            RunDigest(seed: UInt64(seed), code: .completed, errorCode: nil, timeToFinish: Double(600 + seed), lowestHealthy: seed,
                      unavailable: 300, hitTimeLimit: false, held: [], failed: [], leftBehind: [])
        }
        let r = SweepReport(scenario: "spread.lua", seeds: SeedRange(0, 99), overrides: [], runs: runs, expectations: [], deadline: nil)
        let figures = SweepReportPage.figures(r)
        XCTAssertEqual(strings(figures.member("highHeads")), ["p50", "p90", "p95", "p99", "max"])
        XCTAssertEqual(strings(figures.member("lowHeads")), ["p50", "p10", "p5", "p1", "min"])
        let lowest = strings(figures.member("lowestHealthy"))
        XCTAssertEqual(lowest, [50.0, 10, 5, 1, 0].map { SweepText.figure(r.lowestHealthy.percentile($0)) })
        XCTAssertEqual(lowest.last, "0", "min of seeds 0…99")
        XCTAssertEqual(string(items(figures.member("timeToFinish")).last?.member("seconds")), "699", "max of 600…699")
    }

    /// A sweep whose runs waited on lifecycle hooks shows the waits per upgrade (p50 900 s = 15 min)
    /// and the share of runs whose default action fired (40 of 100); one without hooks shows neither.
    func testASweepWithHooksCarriesItsWaitsToThePage() throws {
        let runs = (0..<100).map { seed in
            var d = RunDigest(seed: UInt64(seed), code: .completed, errorCode: nil, timeToFinish: 4_000, lowestHealthy: 8,
                              unavailable: 300, hitTimeLimit: false, held: [], failed: [], leftBehind: [])
            d.hooksRaised = true
            d.defaultActionFired = seed < 40
            d.hookWait = 900
            return d
        }
        let r = SweepReport(scenario: "hooks.lua", seeds: SeedRange(0, 99), overrides: [], runs: runs, expectations: [], deadline: nil)
        let figures = SweepReportPage.figures(r)
        XCTAssertEqual(string(items(figures.member("hookWait")).first?.member("human")), "15 min")
        XCTAssertEqual(figures.member("hookDefaulted")?.member("runs"), .int(40))
        let plain = SweepReport(scenario: "plain.lua", seeds: SeedRange(0, 0), overrides: [],
                                runs: [RunDigest(seed: 0, code: .completed, errorCode: nil, timeToFinish: 60, lowestHealthy: 8, unavailable: 0,
                                                 hitTimeLimit: false, held: [], failed: [], leftBehind: [])],
                                expectations: [], deadline: nil)
        XCTAssertEqual(SweepReportPage.figures(plain).member("hookWait"), .null)
    }
}
