import Reports
@testable import UpgradeEngine
import XCTest

final class RollingUpgradeTests: XCTestCase {
    // Seed 001: "A batch size of 20% when you have 10 instances ... results in upgrade batches with two instances each."
    func testTenInstancesAtTwentyPercentMakeFiveBatchesOfTwo() throws {
        let outcome = try simulate(scaleSet(10))
        XCTAssertEqual(outcome.batches().map(\.count), [2, 2, 2, 2, 2])
        XCTAssertEqual(Set(outcome.batches().flatMap { $0 }), Set(0..<10))
        XCTAssertEqual(outcome.status.code, .completed)
        XCTAssertEqual(outcome.status.progress, Progress(successfulInstanceCount: 10, failedInstanceCount: 0, inProgressInstanceCount: 0, pendingInstanceCount: 0))
        XCTAssertTrue(outcome.simulation.instances.allSatisfy { $0.modelVersion == 2 })
    }

    func testBatchSizeRoundsDownButNeverBelowOne() {
        XCTAssertEqual(Planner.batchSize(capacity: 10, percent: 20), 2)
        XCTAssertEqual(Planner.batchSize(capacity: 7, percent: 20), 1)
        XCTAssertEqual(Planner.batchSize(capacity: 3, percent: 5), 1)
        XCTAssertEqual(Planner.batchSize(capacity: 1000, percent: 33), 330)
    }

    // Seed 001: "more than two instances in the entire scale set report back as unhealthy, the rolling upgrade stops."
    func testThreeOfTenUnhealthyFaultBeforeTheFirstBatchWithThreeDetails() throws {
        let outcome = try simulate(scaleSet(10), health: { vm, _ in .http(status: 200, body: wireBody([2, 5, 8].contains(vm.id) ? "Unhealthy" : "Healthy")) })
        let status = outcome.status
        XCTAssertEqual(status.code, .faulted)
        XCTAssertEqual(status.error?.code.rawValue, "MaxUnhealthyInstancePercentExceededBeforeRollingUpgrade")
        // Azure's own text, with "30% of instances" and "threshold of 20%" (and its double space).
        XCTAssertEqual(status.error?.message, "Rolling Upgrade failed due to exceeding the MaxUnhealthyInstancePercent value (defined in the RollingUpgradePolicy) before any batch was attempted. 30% of instances are in an unhealthy state, more than the threshold of 20% configured in the RollingUpgradePolicy. The most impactful error is:  Instance found to be unhealthy or unreachable. For details on rolling upgrades, use http://aka.ms/AzureVMSSRollingUpgrade")
        XCTAssertEqual(status.error?.details, [2, 5, 8].map {
            ErrorDetail(code: "RollingUpgradeInstanceUnhealthyError", target: "web/virtualMachines/\($0)", message: "Instance found to be unhealthy or unreachable.")
        })
        XCTAssertEqual(status.progress.pendingInstanceCount, 10)
        XCTAssertEqual(outcome.count(.batchStarted), 0)
    }

    func testTwoOfTenUnhealthyIsWithinTheBudgetAndBatchesShrink() throws {
        // 2 unhealthy of 10 at 20%: the budget (2) is used up, so each batch may take down at most
        // one... no healthy instance beyond it; batches shrink to 1 but never below.
        let outcome = try simulate(scaleSet(10), health: { vm, _ in .http(status: 200, body: wireBody([2, 5].contains(vm.id) && vm.modelVersion == 1 ? "Unhealthy" : "Healthy")) })
        XCTAssertEqual(outcome.status.code, .completed)
        XCTAssertEqual(outcome.batches().first?.count, 1)
    }

    func testUnknownCountsAsUnhealthy() throws {
        let outcome = try simulate(scaleSet(10), health: { vm, _ in vm.id < 3 ? .noAnswer : .http(status: 200, body: wireBody()) })
        XCTAssertEqual(outcome.status.error?.code.rawValue, "MaxUnhealthyInstancePercentExceededBeforeRollingUpgrade")
        XCTAssertEqual(outcome.status.error?.details.count, 3)
    }

    // Seeds 000 and 002: phases in numerical order, unphased instances in a last phase.
    func testPhasesZeroAndOneThenUnphasedInThatOrder() throws {
        let phaseOf = { (id: Int) -> Int? in id < 4 ? 1 : (id < 8 ? 0 : nil) }
        let outcome = try simulate(scaleSet(10, { $0.updateDomainCount = 1 }), health: { vm, _ in .http(status: 200, body: wireBody(phase: phaseOf(vm.id))) })
        XCTAssertEqual(outcome.batchPhases(), [0, 0, 1, 1, nil])
        XCTAssertEqual(outcome.batches(), [[4, 5], [6, 7], [0, 1], [2, 3], [8, 9]])
    }

    func testBatchNeverCrossesPhase() throws {
        // 3 instances in phase 0 with batches of 2: the phase ends with a batch of 1.
        let outcome = try simulate(scaleSet(10, { $0.updateDomainCount = 1 }), health: { vm, _ in .http(status: 200, body: wireBody(phase: vm.id < 3 ? 0 : 1)) })
        XCTAssertEqual(outcome.batches().map(\.count), [2, 1, 2, 2, 2, 1])
        XCTAssertEqual(outcome.batchPhases(), [0, 0, 1, 1, 1, 1])
    }

    func testSkipUpgradeAsBoolAndAsString() throws {
        let outcome = try simulate(scaleSet(10), health: { vm, _ in
            .http(status: 200, body: wireBody(skip: vm.id == 1 ? "true" : (vm.id == 2 ? "\\\"true\\\"" : "false")))
        })
        XCTAssertEqual(outcome.summary.skipped, [1, 2])
        XCTAssertEqual(outcome.status.progress.successfulInstanceCount, 8)
        XCTAssertEqual(outcome.simulation.instances[1].modelVersion, 1)
        XCTAssertEqual(outcome.simulation.instances[2].modelVersion, 1)
    }

    func testMetricsAreReadOnceWhenTheUpgradeStarts() throws {
        // Instances change their phase after the upgrade starts: the order does not change.
        let outcome = try simulate(scaleSet(4, {
            $0.policy.rolling.maxBatchInstancePercent = 50
            $0.policy.rolling.maxUnhealthyInstancePercent = 50
            $0.updateDomainCount = 1
        }), health: { vm, now in
            .http(status: 200, body: wireBody(phase: now < 60_000 ? (vm.id < 2 ? 1 : 0) : (vm.id < 2 ? 0 : 1)))
        })
        XCTAssertEqual(outcome.batches(), [[2, 3], [0, 1]])
    }

    // SPEC §4.4: zonal without cross-zone goes zone by zone, ascending; cross-zone ignores zones.
    func testZonalScaleSetGoesZoneByZone() throws {
        // 9 instances at 50% make batches of 4, but a zone holds 3: one batch per zone, in order.
        let outcome = try simulate(scaleSet(9, zones: ["1", "2", "3"], {
            $0.policy.rolling.maxBatchInstancePercent = 50
            $0.policy.rolling.maxUnhealthyInstancePercent = 50
        }))
        let zoneOf = { (id: Int) in outcome.simulation.instances[id].zone! }
        for batch in outcome.batches() { XCTAssertEqual(Set(batch.map(zoneOf)).count, 1, "batch \(batch) crosses zones") }
        XCTAssertEqual(outcome.batches().map { zoneOf($0[0]) }, ["1", "2", "3"])
        XCTAssertEqual(outcome.batches(), [[0, 3, 6], [1, 4, 7], [2, 5, 8]])
    }

    func testCrossZoneUpgradeIgnoresZones() throws {
        let outcome = try simulate(scaleSet(9, zones: ["1", "2", "3"], {
            $0.policy.rolling.maxBatchInstancePercent = 50
            $0.policy.rolling.maxUnhealthyInstancePercent = 50
            $0.policy.rolling.enableCrossZoneUpgrade = true
            $0.updateDomainCount = 1
        }))
        let zoneOf = { (id: Int) in outcome.simulation.instances[id].zone! }
        XCTAssertEqual(outcome.batches().map(\.count), [4, 4, 1])
        // Ordered by domain, then zone, then id: the first batch takes zone 1's three and one of zone 2.
        XCTAssertEqual(outcome.batches()[0], [0, 3, 6, 1])
        XCTAssertEqual(Set(outcome.batches()[0].map(zoneOf)), ["1", "2"])
    }

    func testRegionalBatchNeverCrossesUpdateDomain() throws {
        // 10 instances over 5 update domains (2 each), batches of 4 at 40%: one domain per batch.
        let outcome = try simulate(scaleSet(10, { $0.policy.rolling.maxBatchInstancePercent = 40 }))
        let udOf = { (id: Int) in outcome.simulation.instances[id].updateDomain }
        XCTAssertEqual(outcome.batches().map { Set($0.map(udOf)).count }, [1, 1, 1, 1, 1])
        XCTAssertEqual(outcome.batches().map { udOf($0[0]) }, [0, 1, 2, 3, 4])
    }

    func testPrioritizeUnhealthyGoesFirstWithinEachPhase() throws {
        let outcome = try simulate(scaleSet(10, {
            $0.policy.rolling.prioritizeUnhealthyInstances = true
            $0.updateDomainCount = 1
        }), health: { vm, _ in
            .http(status: 200, body: wireBody(vm.id == 9 && vm.modelVersion == 1 ? "Unhealthy" : "Healthy", phase: vm.id < 5 ? 0 : nil))
        })
        // Phases win: 9 is unhealthy and unphased (an Unhealthy answer's metrics do not count), so
        // it leads the last, unphased group, not the upgrade. While it is unhealthy it uses one of
        // the two unhealthy places, so phase 0's batches shrink to 1.
        XCTAssertEqual(outcome.batches(), [[0], [1], [2], [3], [4], [9], [5, 6], [7, 8]])
    }

    func testPostBatchBreachFaultsAndNamesTheFirstFailedInstance() throws {
        // Upgraded instances 0–3 come back Unhealthy. Batch 1 ([0, 1]) leaves 2 of 10 bad, which
        // 20% allows; those 2 use the unhealthy budget, so batch 2 shrinks to [2]: 3 of 10 > 20%.
        let outcome = try simulate(scaleSet(10, { $0.updateDomainCount = 1 }), health: { vm, _ in
            .http(status: 200, body: wireBody(vm.modelVersion == 2 && vm.id < 4 ? "Unhealthy" : "Healthy"))
        })
        XCTAssertEqual(outcome.status.code, .faulted)
        XCTAssertEqual(outcome.status.error?.code.rawValue, "MaxUnhealthyUpgradedInstancePercentExceededInRollingUpgrade")
        // Azure's text: 3 of 10 is 30%; the batch that breached is [2], so its first failed instance is 2.
        XCTAssertEqual(outcome.status.error?.message, "Rolling Upgrade failed after exceeding the MaxUnhealthyUpgradedInstancePercent value defined in the RollingUpgradePolicy. 30% of instances are in an unhealthy state after being upgraded - more than the threshold of 20%. The most impactful error is: Instance found to be unhealthy or unreachable.. First failed instance ID is: 2.")
        XCTAssertEqual(outcome.batches().count, 2)
        XCTAssertEqual(outcome.batches(), [[0, 1], [2]])
        XCTAssertEqual(outcome.status.error?.details.map(\.target), ["web/virtualMachines/0", "web/virtualMachines/1", "web/virtualMachines/2"])
        XCTAssertEqual(outcome.status.progress, Progress(successfulInstanceCount: 0, failedInstanceCount: 3, inProgressInstanceCount: 0, pendingInstanceCount: 7))
    }

    func testRollbackOnBreachReturnsFailedInstancesToThePreviousModel() throws {
        let outcome = try simulate(scaleSet(10, {
            $0.updateDomainCount = 1
            $0.policy.rolling.rollbackFailedInstancesOnPolicyBreach = true
        }), health: { vm, _ in
            .http(status: 200, body: wireBody(vm.modelVersion == 2 && vm.id < 4 ? "Unhealthy" : "Healthy"))
        })
        XCTAssertEqual(outcome.status.code, .faulted)
        XCTAssertEqual(outcome.count(.rollbackStarted), 3)
        XCTAssertEqual(outcome.simulation.instances.map(\.modelVersion), Array(repeating: 1, count: 10))
    }

    func testFailedOperationCountsAsFailed() throws {
        let outcome = try simulate(scaleSet(10, { $0.policy.rolling.maxUnhealthyUpgradedInstancePercent = 50 }),
                                   faults: { op, vm, _ in op == .upgrade && vm.id == 3 ? OperationOutcome(fail: true) : nil })
        XCTAssertEqual(outcome.status.code, .completed)
        XCTAssertEqual(outcome.status.progress.failedInstanceCount, 1)
        XCTAssertEqual(outcome.simulation.instances[3].modelVersion, 1)
    }

    func testPauseBetweenBatchesButNotAfterTheLast() throws {
        // Defaults: in-place? no: image is disruptive, 120 s per batch; 5 batches, 4 pauses of 10 s.
        let outcome = try simulate(scaleSet(10, { $0.policy.rolling.pauseTimeBetweenBatches = 10_000 }))
        XCTAssertEqual(outcome.count(.pause), 4)
        let started = outcome.events.first { $0.kind == .upgradeStarted }!.time
        let completed = outcome.events.first { $0.kind == .upgradeCompleted }!.time
        XCTAssertEqual(completed - started, 5 * 120_000 + 4 * 10_000)
    }

    func testCancelMidwayThenRestartByGenericModelUpdate() throws {
        let outcome = try simulate(scaleSet(10), actions: [
            (60_000, { try $0.updateModel(["image": "v2"]) }),
            (250_000, { try $0.cancelRollingUpgrade() }),
            (400_000, { try $0.updateModel([:]) }),
        ])
        let cancelled = outcome.events.first { $0.kind == .upgradeCancelled }!
        XCTAssertEqual(cancelled.time, 250_000)
        // Batch 1 ran 60–180 s, batch 2 was in flight at 250 s and finished at 300 s; the restart
        // at 400 s upgraded the other 6.
        XCTAssertEqual(outcome.count(.upgradeStarted), 2)
        XCTAssertEqual(outcome.status.code, .completed)
        XCTAssertEqual(outcome.status.startTime, 400_000)
        XCTAssertEqual(outcome.status.progress.successfulInstanceCount, 6)
        XCTAssertTrue(outcome.simulation.instances.allSatisfy { $0.modelVersion == 2 })
    }

    func testCancelStatusAndCancelWithNothingRunning() throws {
        var statusAfterCancel: RollingUpgradeStatus?
        let outcome = try simulate(scaleSet(10), actions: [
            (0, { sim in XCTAssertThrowsError(try sim.cancelRollingUpgrade()) { XCTAssertEqual("\($0)", "There is no ongoing Rolling Upgrade to cancel.") } }),
            (60_000, { try $0.updateModel(["image": "v2"]) }),
            (100_000, { try $0.cancelRollingUpgrade() }),
            (100_001, { statusAfterCancel = $0.status }),
        ])
        XCTAssertEqual(statusAfterCancel?.code, .cancelled)
        XCTAssertEqual(statusAfterCancel?.lastAction, "Cancel")
        XCTAssertEqual(statusAfterCancel?.lastActionTime, 100_000)
        XCTAssertEqual(statusAfterCancel?.progress.inProgressInstanceCount, 2)
        XCTAssertEqual(outcome.status.progress, Progress(successfulInstanceCount: 2, failedInstanceCount: 0, inProgressInstanceCount: 0, pendingInstanceCount: 8))
        XCTAssertEqual(outcome.count(.batchStarted), 1)
    }

    func testModelUpdateDuringAnUpgradeSupersedesIt() throws {
        let outcome = try simulate(scaleSet(10), actions: [
            (60_000, { try $0.updateModel(["image": "v2"]) }),
            (200_000, { try $0.updateModel(["image": "v3"]) }),
        ])
        XCTAssertEqual(outcome.count(.upgradeStarted), 2)
        // The second upgrade starts when batch 2's operations (started at 180 s) end at 300 s.
        XCTAssertEqual(outcome.events.filter { $0.kind == .upgradeStarted }.map(\.time), [60_000, 300_000])
        XCTAssertEqual(outcome.status.code, .completed)
        XCTAssertTrue(outcome.simulation.instances.allSatisfy { $0.modelVersion == 3 })
        XCTAssertEqual(outcome.status.progress.successfulInstanceCount, 10)
    }

    func testProtectedInstancesAreNeverTouched() throws {
        let outcome = try simulate(scaleSet(10, { $0.protected = [7]; $0.protectedFromScaleIn = [3] }))
        XCTAssertEqual(outcome.summary.protected, [7])
        XCTAssertEqual(outcome.simulation.instances[7].modelVersion, 1)
        XCTAssertEqual(outcome.simulation.instances[3].modelVersion, 2)
        XCTAssertEqual(outcome.status.progress.successfulInstanceCount, 9)
    }

    func testSameInputsGiveTheSameEventsByteForByte() throws {
        let run = { try simulate(scaleSet(12, zones: ["1", "2"]), health: { vm, now in
            .http(status: 200, body: wireBody((vm.id + now / 5000) % 7 == 0 ? "Unhealthy" : "Healthy", phase: vm.id % 3))
        }).events.map(\.jsonLine).joined(separator: "\n") }
        let first = try run(), second = try run()
        XCTAssertEqual(first, second)
        XCTAssertGreaterThan(first.count, 1000)
    }

    /// A cancel that lands while a batch waits for its upgraded instances' health (SPEC §4.9):
    /// the batch settles by its own outcome and nothing stays in progress.
    func testCancelDuringTheHealthWaitLeavesNothingInProgress() throws {
        // Batch 1 upgrades from 60 s to 180 s; upgraded instances do not answer until 300 s and
        // the grace period is 10 minutes, so at 200 s the batch is waiting for their health.
        let outcome = try simulate(scaleSet(10, { $0.healthExtension?.gracePeriod = 600 }), health: { vm, time in
            vm.modelVersion == 2 && time < 300_000 ? .noAnswer : .http(status: 200, body: wireBody())
        }, actions: [(60_000, { try $0.updateModel(["image": "v2"]) }), (200_000, { try $0.cancelRollingUpgrade() })])
        XCTAssertEqual(outcome.status.code, .cancelled)
        XCTAssertEqual(outcome.status.progress.inProgressInstanceCount, 0)
        XCTAssertEqual(outcome.status.progress.successfulInstanceCount, 2)
        XCTAssertEqual(outcome.status.progress.pendingInstanceCount, 8)
        XCTAssertEqual(outcome.count(.batchFinished), 1)
    }

    /// The same under MaxSurge: new instances not yet Healthy are deleted and their old
    /// counterparts stay, so the scale set ends at its capacity, not above it.
    func testCancelDuringTheMaxSurgeHealthWaitEndsAtCapacity() throws {
        // New instances are created from 60 s to 210 s and do not answer until 400 s.
        let outcome = try simulate(scaleSet(10, { $0.policy.rolling.maxSurge = true }), health: { vm, time in
            vm.id >= 10 && time < 400_000 ? .noAnswer : .http(status: 200, body: wireBody())
        }, actions: [(60_000, { try $0.updateModel(["image": "v2"]) }), (250_000, { try $0.cancelRollingUpgrade() })])
        XCTAssertEqual(outcome.status.code, .cancelled)
        XCTAssertEqual(outcome.status.progress.inProgressInstanceCount, 0)
        let existing = outcome.simulation.instances.filter { $0.lifecycle != .deleted }
        XCTAssertEqual(existing.count, 10)
        XCTAssertTrue(existing.allSatisfy { $0.modelVersion == 1 })
    }

    /// With rollbackFailedInstancesOnPolicyBreach the status reads RollingBack while the failed
    /// instances return to the previous model, then Faulted; a rollback can itself fail.
    func testRollingBackWhileFailedInstancesRollBackAndARollbackCanFail() throws {
        let sim = try Simulation(scaleSet(10, {
            $0.updateDomainCount = 1
            $0.policy.rolling.rollbackFailedInstancesOnPolicyBreach = true
        }), health: ClosureHealthSource { vm, _ in
            .http(status: 200, body: wireBody(vm.modelVersion == 2 && vm.id < 4 ? "Unhealthy" : "Healthy"))
        }, faults: ClosureFaultInjector { op, vm, _ in op == .rollback && vm.id == 1 ? OperationOutcome(fail: true) : nil })
        var codesAtRollback: [RunningCode?] = []
        var rolledBack: [Int] = []
        sim.onEvent = { [unowned sim] event in
            if case .rollbackStarted = event.payload {
                codesAtRollback.append(sim.status?.code)
                rolledBack.append(event.instance!)
            }
        }
        sim.schedule(at: 60_000, name: "update") { try $0.updateModel(["image": "v2"]) }
        let summary = try sim.run()
        XCTAssertEqual(rolledBack, [0, 1, 2])
        XCTAssertEqual(codesAtRollback, [.rollingBack, .rollingBack, .rollingBack])
        XCTAssertEqual(summary.status?.code, .faulted)
        XCTAssertEqual(summary.rollbackFailed, [1])
        XCTAssertEqual(sim.instances[0...3].map(\.modelVersion), [1, 2, 1, 1])
    }
}

/// The threshold checks alone, with SPEC's numbers.
final class ThresholdTests: XCTestCase {
    func testThreeOfTenUnhealthyBeforeTheFirstBatchIsAzuresBreach() throws {
        let verdict = Thresholds.beforeBatch(unhealthy: [2, 5, 8], capacity: 10, thresholdPercent: 20, firstBatch: true, scaleSet: "web")
        XCTAssertFalse(verdict.check.passed)
        XCTAssertEqual(verdict.check.percent, 30)
        let error = try XCTUnwrap(verdict.error)
        XCTAssertEqual(error.code.rawValue, "MaxUnhealthyInstancePercentExceededBeforeRollingUpgrade")
        XCTAssertTrue(error.message.contains("30% of instances are in an unhealthy state, more than the threshold of 20%"))
        XCTAssertEqual(error.details.map(\.target), ["web/virtualMachines/2", "web/virtualMachines/5", "web/virtualMachines/8"])
        let later = Thresholds.beforeBatch(unhealthy: [2, 5, 8], capacity: 10, thresholdPercent: 20, firstBatch: false, scaleSet: "web")
        XCTAssertEqual(later.error?.code.rawValue, "MaxUnhealthyInstancePercentExceededInRollingUpgrade")
    }

    func testExactlyAtTheThresholdPasses() {
        let verdict = Thresholds.beforeBatch(unhealthy: [1, 2], capacity: 10, thresholdPercent: 20, firstBatch: true, scaleSet: "web")
        XCTAssertTrue(verdict.check.passed)
        XCTAssertNil(verdict.error)
    }

    func testAfterABatchAzureNamesTheLowestBadIdOfThatBatchAndWhichFailedToUpgrade() throws {
        let verdict = Thresholds.afterBatch(counted: [0, 4, 5], failedToUpgrade: [5], lastBatch: [4, 5], capacity: 10,
                                            thresholdPercent: 20, scaleSet: "web")
        let error = try XCTUnwrap(verdict.error)
        XCTAssertEqual(error.code.rawValue, "MaxUnhealthyUpgradedInstancePercentExceededInRollingUpgrade")
        XCTAssertEqual(error.firstFailedInstance, "4")
        // Azure's text names it last.
        XCTAssertTrue(error.message.hasSuffix("First failed instance ID is: 4."))
        XCTAssertEqual(error.details.map(\.message), ["Instance found to be unhealthy or unreachable.", "Instance found to be unhealthy or unreachable.",
                                                      "Instance failed to upgrade."])
    }

    func testPercentagesRoundHalfUp() {
        XCTAssertEqual(AzurePercent.rounded(2, of: 7), 29)
        XCTAssertEqual(AzurePercent.rounded(1, of: 8), 13)
        XCTAssertEqual(AzurePercent.rounded(1, of: 3), 33)
        XCTAssertEqual(AzurePercent.rounded(0, of: 0), 0)
    }
}

/// Availability accounting alone, with plain numbers.
final class AvailabilityMeterTests: XCTestCase {
    func testLostCapacityIsCountedFromTheFirstActivityOnly() throws {
        var meter = AvailabilityMeter()
        for _ in 0..<10 { meter.servingChanged(by: 1, at: 0, capacity: 10) }
        meter.advance(to: 60_000, capacity: 10)
        meter.servingChanged(by: -1, at: 30_000, capacity: 10)  // before any activity: not the lowest, not lost
        meter.servingChanged(by: 1, at: 40_000, capacity: 10)
        meter.noteActivity(at: 60_000, capacity: 10)
        meter.servingChanged(by: -2, at: 60_000, capacity: 10)   // a batch of 2 goes down for 2 minutes
        meter.advance(to: 180_000, capacity: 10)
        meter.servingChanged(by: 2, at: 180_000, capacity: 10)
        meter.advance(to: 240_000, capacity: 10)
        let a = try XCTUnwrap(meter.availability(at: 240_000))
        XCTAssertEqual(a.lowestHealthy, 8)
        XCTAssertEqual(a.lowestHealthyAt, 60_000, "the first time the fleet came down to 8")
        XCTAssertEqual(a.capacityAtLowest, 10)
        XCTAssertEqual(a.unavailableInstanceSeconds, 240)   // 2 instances × 120 s
        XCTAssertEqual(a.timeToFinishSeconds, 180)
        XCTAssertNil(AvailabilityMeter().availability(at: 0))
    }

    /// The share of capacity kept is measured against the capacity wanted at the dip: 8 of 10
    /// serving is 80% whether the fleet is later scaled out to 20 or in to 8.
    func testCapacityAtTheLowPointIsTheOneWantedThen() throws {
        for later in [20, 8] {
            var meter = AvailabilityMeter()
            for _ in 0..<10 { meter.servingChanged(by: 1, at: 0, capacity: 10) }
            meter.noteActivity(at: 60_000, capacity: 10)
            meter.servingChanged(by: -2, at: 60_000, capacity: 10)
            meter.servingChanged(by: 2, at: 180_000, capacity: 10)
            meter.advance(to: 200_000, capacity: later)
            // The scale: instances join or leave; serving never drops below 8 again.
            meter.servingChanged(by: later - 10, at: 300_000, capacity: later)
            let a = try XCTUnwrap(meter.availability(at: 400_000))
            XCTAssertEqual(a.lowestHealthy, 8, "scaled to \(later)")
            XCTAssertEqual(a.capacityAtLowest, 10, "scaled to \(later)")
            let digest = RunDigest(seed: 0, code: .completed, errorCode: nil, timeToFinish: 340, lowestHealthy: a.lowestHealthy, unavailable: 0,
                                   hitTimeLimit: false, held: [], failed: [], leftBehind: [], capacity: a.capacityAtLowest)
            XCTAssertTrue(digest.keptServing(0.8), "8 of the 10 wanted at the dip is 80%, scaled to \(later) later")
            XCTAssertFalse(digest.keptServing(0.81))
        }
    }
}
