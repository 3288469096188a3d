import Formats
@testable import Reports
import UpgradeEngine
import XCTest

/// The sweep page draws; Swift counts. The runs of a comparison's policies (fewest, most, in all)
/// are figures of the reports, handed to the page rather than summed in its script.
final class SweepPageDataTests: XCTestCase {
    func report(runs: Int, overrides: [String]) -> SweepReport {
        let digests = (0..<runs).map { seed in
            RunDigest(seed: UInt64(seed), code: .completed, errorCode: nil, timeToFinish: 600, lowestHealthy: 8, unavailable: 0,
                      hitTimeLimit: false, held: [], failed: [], leftBehind: [])
        }
        return SweepReport(scenario: "web.lua", seeds: SeedRange(0, UInt64(runs - 1)), overrides: overrides, runs: digests, expectations: [],
                           deadline: nil)
    }

    func testTheRunsOfEveryPolicyAreCountedInSwift() {
        // A comparison whose second policy stopped early (a requirement decided it): 40 and 200 runs.
        let entries = [report(runs: 200, overrides: ["a=1"]), report(runs: 40, overrides: ["a=2"])].map { SweepReportPage.Entry(report: $0) }
        let runs = SweepReportPage.data(entries, best: nil, title: nil).member("runs")
        XCTAssertEqual(runs?.member("fewest"), .int(40))
        XCTAssertEqual(runs?.member("most"), .int(200))
        XCTAssertEqual(runs?.member("total"), .int(240))
    }
}
