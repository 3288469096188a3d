import Scenario
import XCTest

/// `plan`'s measuring runs are bounded in total, not only each run: a thousand boot runs spend
/// no more script instructions together than twenty do.
final class PlanBoundsTests: XCTestCase {
    func testMoreBootRunsShareOneInstructionBudget() {
        XCTAssertEqual(PlanRangeBounds().instructionsPerRun, 50_000_000, "20 runs × 50,000,000 is the whole budget")
        XCTAssertEqual(PlanRangeBounds(runs: 1_000).instructionsPerRun, 1_000_000)
        XCTAssertEqual(PlanRangeBounds(runs: 1_000).instructionsPerRun * 1_000, PlanRangeBounds().totalInstructions)
        XCTAssertEqual(PlanRangeBounds(runs: 0).instructionsPerRun, 50_000_000)
        for runs in [1, 20, 21, 333, 1_000] {
            let bounds = PlanRangeBounds(runs: runs)
            XCTAssertLessThanOrEqual(bounds.instructionsPerRun * runs, bounds.totalInstructions, "\(runs) runs")
        }
    }
}
