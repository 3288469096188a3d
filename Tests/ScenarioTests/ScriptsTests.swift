import Scenario
import UpgradeEngine
import XCTest

/// Every scenario in scripts/ runs with its expectations holding, and shows what its comments say.
final class ScriptsTests: XCTestCase {
    func run(_ name: String) throws -> (ScenarioResult, [Event]) {
        let (result, events) = try runScenario(repositoryRoot + "/scripts/" + name)
        XCTAssertGreaterThan(result.expectationCount, 0, name)
        XCTAssertEqual(result.failedExpectations, [], name)
        return (result, events)
    }

    func testTenAtTwenty() throws {
        let (result, events) = try run("ten-at-twenty.lua")
        XCTAssertEqual(batches(events), ["0, 5", "1, 6", "2, 7", "3, 8", "4, 9"])
        XCTAssertEqual(result.summary.status?.policy.pauseTimeBetweenBatches, 10_000)
    }

    func testNPhaseWithSkip() throws {
        let (result, events) = try run("n-phase-skip.lua")
        XCTAssertEqual(batches(events), ["4, 5", "6, 7", "0, 1", "2, 3", "8"])
        XCTAssertEqual(events.filter { $0.kind == .batchStarted }.map(\.phase), [0, 0, 1, 1, nil])
        XCTAssertEqual(result.summary.skipped, [9])
    }

    func testZonalAndCrossZone() throws {
        let (_, zonal) = try run("zonal.lua")
        XCTAssertEqual(batches(zonal), ["0, 3, 6", "1, 4, 7", "2, 5, 8"])
        let (_, cross) = try run("cross-zone.lua")
        XCTAssertEqual(batches(cross), ["0, 3, 6, 1", "4, 7, 2, 5", "8"])
    }

    func testMaxSurge() throws {
        let (result, events) = try run("maxsurge.lua")
        XCTAssertEqual(events.count { $0.kind == .surgeCreated }, 10)
        XCTAssertEqual(result.summary.availability?.lowestHealthy, 10)
    }

    func testPreBatchBreach() throws {
        let (result, _) = try run("pre-batch-breach.lua")
        XCTAssertEqual(result.summary.status?.error?.details.map(\.target), ["web/virtualMachines/2", "web/virtualMachines/5", "web/virtualMachines/8"])
    }

    func testPostBatchBreachWithRollback() throws {
        let (_, events) = try run("post-batch-rollback.lua")
        XCTAssertEqual(events.filter { $0.kind == .rollbackStarted }.compactMap(\.instance), [0, 2, 4])
    }

    func testCancelAndRestart() throws {
        var printed: [String] = []
        var o = options(printed: { printed.append($0) })
        o.seed = 0
        let scenario = try Scenario(path: repositoryRoot + "/scripts/cancel-restart.lua", options: o)
        let result = try scenario.run()
        XCTAssertEqual(result.failedExpectations, [])
        XCTAssertEqual(printed, ["second cancel: cancel: There is no ongoing Rolling Upgrade to cancel."])
    }

    func testManualMode() throws {
        let (result, events) = try run("manual-mode.lua")
        XCTAssertNil(result.summary.status)
        XCTAssertEqual(events.filter { $0.kind == .operationStarted }.compactMap(\.instance), [0, 1, 6, 7])
    }

    func testSameSeedSameEventsByteForByte() throws {
        let path = repositoryRoot + "/plugins/slow-boot/example.lua"
        let a = try runScenario(path, seed: 7).1.map(\.jsonLine)
        let b = try runScenario(path, seed: 7).1.map(\.jsonLine)
        XCTAssertEqual(a, b)
        XCTAssertGreaterThan(a.count, 50)
    }
}
