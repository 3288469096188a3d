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
        let results = expectation.results(summary: summary, upgrades: 0, instances: [])
        XCTAssertEqual(results.map(\.key), [.code, .finishedWithin, .minHealthy, .skipped])
        XCTAssertEqual(results.map(\.expected), [.equal(.text("Faulted")), .within(2_700_000), .atLeast(8), .equal(.ids([3, 7]))])
        XCTAssertEqual(results.map(\.actual), [.none, .noUpgradeActivity, .none, .ids([])])
        XCTAssertEqual(results.map { ExpectationText.expected($0.expected) }, ["Faulted", "within PT45M", "at least 8", "[3, 7]"])
        XCTAssertEqual(results.map { ExpectationText.actual($0.actual) }, ["none", "no upgrade activity", "none", "[]"])
        XCTAssertEqual(ExpectationText.actual(.notFinished), "not finished by the time limit")
        XCTAssertEqual(ExpectationText.expected(.atMost(100)), "at most 100")
    }

    /// A report's keys come from the expectations as loaded, in the order a run checks them,
    /// with the values asked: two expectations, seven keys, and no run needed to list them.
    func testTheReportsKeysComeFromTheExpectationsWithoutARun() throws {
        var first = Expectation(location: "x.lua:9")
        first.upgrades = 1
        first.code = .completed
        first.maxUnavailable = 600
        first.protected = [2]
        var second = Expectation(location: "x.lua:12")
        second.successful = 10
        second.errorCode = .unhealthyUpgraded
        second.rolledBack = 0
        let keys = SweepReport.keys(of: [first, second], label: ExpectationText.expected)
        XCTAssertEqual(keys.map(\.location), ["x.lua:9", "x.lua:9", "x.lua:9", "x.lua:9", "x.lua:12", "x.lua:12", "x.lua:12"])
        XCTAssertEqual(keys.map(\.key), [.code, .maxUnavailable, .protected, .upgrades, .errorCode, .rolledBack, .successful])
        XCTAssertEqual(keys.map(\.expected), ["Completed", "at most 600", "[2]", "1", "MaxUnhealthyUpgradedInstancePercentExceededInRollingUpgrade", "0", "10"])
        // A run's results list the same keys in the same order: 10 instances upgraded in 5
        // batches, none protected, one upgrade, no error.
        let summary = try simulate(scaleSet(10)).summary
        let results = [first, second].flatMap { $0.results(summary: summary, upgrades: 1, instances: []) }
        XCTAssertEqual(results.map(\.key), keys.map(\.key))
        XCTAssertEqual(results.map(\.expected), [first, second].flatMap { $0.expectedValues.map(\.expected) })
        XCTAssertEqual(results.map(\.actual)[0], .text("Completed"))
        XCTAssertEqual(results.map(\.actual)[2...], [.ids([]), .count(1), .none, .count(0), .count(10)])
        XCTAssertEqual(results.map(\.held)[2...], [false, true, false, true, true])
    }

    func testDigestsCarryTypedCodes() {
        let digest = RunDigest(seed: 1, code: .faulted, errorCode: .unhealthyUpgraded, timeToFinish: 60, lowestHealthy: 8, unavailable: 10,
                               hitTimeLimit: false, held: [], failed: [2], leftBehind: [])
        let report = SweepReport(scenario: "x.lua", seeds: SeedRange(0, 0), overrides: [], runs: [digest], expectations: [], deadline: nil)
        XCTAssertEqual(report.runs.faulted.count, 1)
        XCTAssertEqual(report.errorCodes.map(\.code), ["MaxUnhealthyUpgradedInstancePercentExceededInRollingUpgrade"])
    }
}
