import Formats
import Reports
import Scenario
import UpgradeEngine
import XCTest

/// Every scenario in scripts/ runs with its expectations holding, and shows what its comments say.
final class ScriptsTests: XCTestCase {
    func run(_ name: String) throws -> (RunRecord, [Event]) {
        let (result, events) = try runScenario(repositoryRoot + "/scripts/" + name)
        XCTAssertGreaterThan(result.expectations.count, 0, name)
        XCTAssertEqual(result.failedExpectations, [], name)
        return (result, events)
    }

    func testTenAtTwenty() throws {
        let (result, events) = try run("ten-at-twenty.lua")
        XCTAssertEqual(batches(events), ["0, 5", "1, 6", "2, 7", "3, 8", "4, 9"])
        XCTAssertEqual(result.summary.status?.policy.pauseTimeBetweenBatches, 10_000)
    }

    /// A batch hook answered 12 minutes after each event (on_hook with after), instance 3 rejected.
    func testLifecycleHooks() throws {
        let (result, events) = try run("lifecycle-hooks.lua")
        XCTAssertEqual(result.summary.hooks.batchWaits, Array(repeating: 720_000, count: 5))
        XCTAssertEqual(result.summary.hooks.rejected, [3])
        XCTAssertEqual(result.instances.first { $0.id == 3 }?.leftBehind, .rejectedByHook)
        // Each event raised before its batch; each batch starts 12 minutes after its event.
        let raised = events.filter { $0.kind == .hookRaised }.map(\.time)
        let started = events.filter { $0.kind == .batchStarted }.map(\.time)
        XCTAssertEqual(raised.count, 5)
        XCTAssertEqual(zip(started, raised).map { $0 - $1 }, Array(repeating: 720_000, count: 5))
    }

    func testCancelDuringTheHealthWait() throws {
        let (result, events) = try run("cancel-health-wait.lua")
        XCTAssertEqual(batches(events), ["0, 5"])
        XCTAssertEqual(result.summary.status?.progress.inProgressInstanceCount, 0)
        XCTAssertEqual(result.instances.filter { $0.modelVersion == 2 }.map(\.id), [0, 5])
    }

    func testAutomaticOSUpgradeWithARestore() throws {
        let (result, events) = try run("automatic-os-upgrade.lua")
        // The default policy (20%), not the script's 50%: batches of 2. After 4 and 5 are restored
        // they are still booting when the next batch is checked: 2 of 10 down (20%) uses the
        // whole unhealthy budget, so that batch shrinks to 1 (SPEC §4.3, §4.5).
        XCTAssertEqual(batches(events), ["0, 1", "2, 3", "4, 5", "6", "7, 8", "9"])
        XCTAssertEqual(events.filter { $0.kind == .imageRestoreStarted }.map(\.instance), [4, 5])
        XCTAssertEqual(result.instances.filter { $0.modelVersion == 1 }.map(\.id), [4, 5])
        let history = try XCTUnwrap(result.summary.osUpgradeHistory.first)
        XCTAssertEqual(history.rolledBack, 2)
        XCTAssertEqual(history.targetImageReference, ["publisher": "Canonical", "offer": "ubuntu-24_04-lts", "sku": "server", "version": "2024.02.01"])
    }

    /// The realistic automatic OS upgrade (30 instances in 3 zones, 4–6 minute boots, grace 600,
    /// 5% of boots never answering), over 12 seeds: the status, the post-batch check, the
    /// batches, the restores, the history and the run record agree in every run.
    func testSlowBootingAutomaticOSUpgradeCountsAgreeOverSeeds() throws {
        let path = repositoryRoot + "/scripts/automatic-os-upgrade-slow-boots.lua"
        for seed in UInt64(0)..<12 {
            let (result, events) = try runScenario(path, seed: seed)
            let status = try XCTUnwrap(result.summary.status)
            let history = try XCTUnwrap(result.summary.osUpgradeHistory.first)
            let restored = events.filter { $0.kind == .imageRestoreStarted }.compactMap(\.instance).sorted()
            let notHealthyInBatches = events.reduce(0) { sum, event in
                if case .batchFinished(let healthy, let count) = event.payload { return sum + count - healthy }
                return sum
            }
            let lastCheck = events.compactMap { event -> ThresholdCheck? in
                if case .postBatchCheck(let check) = event.payload { return check }
                return nil
            }.last
            XCTAssertEqual(status.progress.failedInstanceCount, notHealthyInBatches, "seed \(seed)")
            XCTAssertEqual(lastCheck?.counted.sorted(), restored, "seed \(seed)")
            XCTAssertEqual(history.rolledBack + history.rollbackFailed, restored.count, "seed \(seed)")
            XCTAssertEqual(history.progress, status.progress, "seed \(seed)")
            XCTAssertEqual(result.instances.filter { $0.leftBehind == .failed }.map(\.id), restored, "seed \(seed)")
            XCTAssertTrue(result.instances.filter { restored.contains($0.id) }.allSatisfy { $0.modelVersion == 1 }, "seed \(seed)")
        }
    }

    func testAutomaticOSUpgradeWithDeferrals() throws {
        let (_, events) = try run("os-upgrade-deferral.lua")
        func started(_ id: Int) -> Millis? {
            events.first { event in
                if case .operationStarted(let op) = event.payload, op.kind == .upgrade { return event.instance == id }
                return false
            }?.time
        }
        let batch2 = events.filter { $0.kind == .batchStarted }[1]
        XCTAssertEqual(started(3), batch2.time + 1_200_000)
        XCTAssertEqual(started(7), 3_600_000)
        XCTAssertEqual(events.filter { $0.kind == .osUpgradeDeferred }.map(\.instance), [3, 7])
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
        let scenario = try load(path: repositoryRoot + "/scripts/cancel-restart.lua", options: o)
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

/// The run record: every instance's final state, and why it is not on the newest model.
final class RunRecordTests: XCTestCase {
    func record(_ script: String) throws -> RunRecord {
        try load(path: repositoryRoot + "/scripts/" + script, options: options()).run()
    }

    func testSkippedInstanceIsLeftBehindAsSkipped() throws {
        let record = try record("n-phase-skip.lua")
        XCTAssertEqual(record.instances.filter { $0.leftBehind != nil }.map(\.id), [9])
        XCTAssertEqual(record.instances[9].leftBehind, .skipped)
        XCTAssertEqual(record.instances[9].modelVersion, 1)
        XCTAssertEqual(record.instances.filter { $0.modelVersion == 2 }.count, 9)
        XCTAssertTrue(record.instances.allSatisfy { $0.exists && $0.health == .healthy })
        XCTAssertEqual(record.events.last?.payload, .runEnded(hitTimeLimit: false))
    }

    func testBreachBeforeTheFirstBatchLeavesEveryInstanceNotReached() throws {
        let record = try record("pre-batch-breach.lua")
        XCTAssertEqual(record.instances.count, 10)
        XCTAssertTrue(record.instances.allSatisfy { $0.leftBehind == .notReached && $0.modelVersion == 1 })
        XCTAssertEqual(record.instances.filter { $0.health == .unhealthy || $0.health == .unknown }.map(\.id), [2, 5, 8])
        guard case .preBatchCheck(let check)? = record.events.first(where: { $0.kind == .preBatchCheck })?.payload else {
            return XCTFail("no pre-batch check")
        }
        XCTAssertEqual(check.counted, [2, 5, 8])
        XCTAssertEqual(check.percent, 30)
        XCTAssertEqual(check.thresholdPercent, 20)
        XCTAssertFalse(check.passed)
    }

    func testManualModeLeavesUnchosenInstancesNotUpgradedAndProtectedProtected() throws {
        let record = try record("manual-mode.lua")
        XCTAssertEqual(record.instances.map(\.modelVersion), [2, 2, 1, 1, 1, 1, 2, 2])
        XCTAssertEqual(record.instances.map(\.leftBehind), [nil, nil, .notUpgraded, .notUpgraded, .notUpgraded, .protected, nil, nil])
    }

    func testMaxSurgeRecordsDeletedOldInstances() throws {
        let record = try record("maxsurge.lua")
        // 10 old instances deleted, 10 new ones on model 2.
        XCTAssertEqual(record.instances.count, 20)
        XCTAssertEqual(record.instances.filter { !$0.exists }.map(\.id), Array(0..<10))
        XCTAssertTrue(record.instances.filter(\.exists).allSatisfy { $0.modelVersion == 2 && $0.leftBehind == nil })
    }
}
