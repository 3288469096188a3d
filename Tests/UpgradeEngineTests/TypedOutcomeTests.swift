import Formats
import Reports
import UpgradeEngine
import XCTest

/// Events, digests and expectation results carry typed reasons, codes and values; Azure's own
/// strings and the printed text are made only by the renderers.
final class TypedOutcomeTests: XCTestCase {
    func testThresholdBreachesFaultWithAzuresTypedCode() throws {
        let first = Thresholds.beforeBatch(unhealthy: [1, 2, 3], capacity: 10, thresholdPercent: 20, firstBatch: true, scaleSet: "web")
        XCTAssertEqual(first.error?.code, .unhealthyBeforeUpgrade)
        let later = Thresholds.beforeBatch(unhealthy: [1, 2, 3], capacity: 10, thresholdPercent: 20, firstBatch: false, scaleSet: "web")
        XCTAssertEqual(later.error?.code, .unhealthyDuringUpgrade)
        let after = Thresholds.afterBatch(counted: [4, 5], failedToUpgrade: InstanceIDSet(), lastBatch: InstanceIDSet(), capacity: 10,
                                          thresholdPercent: 10, scaleSet: "web")
        XCTAssertEqual(after.error?.code, .unhealthyUpgraded)
        // The codes a requirement may name are exactly the typed ones, as Azure spells them.
        XCTAssertEqual(Thresholds.errorCodes, UpgradeErrorCode.allCases.map(\.rawValue))
    }

    func testEventsCarryTypedReasonsAndCodesAndPrintAzuresStrings() throws {
        let faulted = Event(time: 60_000, .upgradeFaulted(code: .unhealthyUpgraded, message: "too many"))
        let line = try XCTUnwrap(JSON.parse(faulted.jsonLine).field("code"))
        XCTAssertEqual(line, .string("MaxUnhealthyUpgradedInstancePercentExceededInRollingUpgrade"))
        let left = Event(time: 60_000, instance: 3, .servingChanged(serving: false, count: 9, reason: .health(.initializing)))
        XCTAssertEqual(try JSON.parse(left.jsonLine).field("reason"), .string("Initializing"))
        let deleted = Event(time: 60_000, instance: 3, .servingChanged(serving: false, count: 8, reason: .lifecycle(.deleting)))
        XCTAssertEqual(try JSON.parse(deleted.jsonLine).field("reason"), .string("deleting"))
    }

    func testExpectationResultsAreTypedAndRenderedAsTheStatusPrintsThem() {
        var expectation = Expectation(location: "x.lua:9")
        expectation.code = .faulted
        expectation.minHealthy = 8
        expectation.finishedWithin = 2_700_000
        expectation.skipped = [3, 7]
        let summary = RunSummary(endTime: 0, status: nil, skipped: [], protected: [], availability: nil, hitTimeLimit: false, probes: 0,
                                 capacity: 0)
        let results = expectation.results(summary: summary, upgrades: 0)
        XCTAssertEqual(results.map(\.key), [.code, .finishedWithin, .minHealthy, .skipped])
        XCTAssertEqual(results.map(\.expected), [.equal(.text("Faulted")), .within(2_700_000), .atLeast(8), .equal(.ids([3, 7]))])
        XCTAssertEqual(results.map(\.actual), [.none, .noUpgradeActivity, .none, .ids([])])
        XCTAssertEqual(results.map { ExpectationText.expected($0.expected) }, ["Faulted", "within PT45M", "at least 8", "[3, 7]"])
        XCTAssertEqual(results.map { ExpectationText.actual($0.actual) }, ["none", "no upgrade activity", "none", "[]"])
        XCTAssertEqual(ExpectationText.actual(.notFinished), "not finished by the time limit")
        XCTAssertEqual(ExpectationText.expected(.atMost(100)), "at most 100")
    }

    func testDigestsCarryTypedCodes() {
        let digest = RunDigest(seed: 1, code: .faulted, errorCode: .unhealthyUpgraded, timeToFinish: 60, lowestHealthy: 8, unavailable: 10,
                               hitTimeLimit: false, held: [], failed: [2], leftBehind: [])
        let report = SweepReport(scenario: "x.lua", seeds: SeedRange(0, 0), overrides: [], runs: [digest], expectations: [], deadline: nil)
        XCTAssertEqual(report.runs.faulted.count, 1)
        XCTAssertEqual(report.errorCodes.map(\.code), ["MaxUnhealthyUpgradedInstancePercentExceededInRollingUpgrade"])
    }
}
