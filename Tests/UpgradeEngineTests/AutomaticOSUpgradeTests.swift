import AzureWire
import Formats
import UpgradeEngine
import XCTest

/// Automatic OS image upgrades (SPEC §6): a released platform image upgrades the scale set in
/// batches, whatever the mode.
final class AutomaticOSUpgradeTests: XCTestCase {
    /// 10 instances with automatic OS upgrades, in Manual mode, the rolling policy at 50%.
    private func automatic(_ capacity: Int = 10, _ configure: (inout AutomaticOSUpgradePolicy) -> Void = { _ in }) -> ScaleSetDefinition {
        scaleSet(capacity, mode: .manual) { d in
            d.model = ["image": "2024.01.01"]
            d.updateDomainCount = 1
            d.policy.rolling.maxBatchInstancePercent = 50
            d.policy.automaticOS.enableAutomaticOSUpgrade = true
            configure(&d.policy.automaticOS)
        }
    }

    private let release: [(Millis, (Simulation) throws -> Void)] = [(60_000, { try $0.releasePlatformImage(version: "2024.02.01") })]

    /// Healthy except `bad` instances on the new image, and `lateUntil` instances on it before that time.
    private func health(bad: Set<Int> = [], lateUntil: [Int: Millis] = [:]) -> (Instance, Millis) -> ProbeReply {
        { vm, now in
            let onNew = vm.modelVersion == 2
            let unhealthy = onNew && (bad.contains(vm.id) || (lateUntil[vm.id].map { now < $0 } ?? false))
            return .http(status: 200, body: wireBody(unhealthy ? "Unhealthy" : "Healthy"))
        }
    }

    private func startTime(of kind: OperationKind, on id: Int, in outcome: Outcome) -> Millis? {
        outcome.events.first { event in
            if case .operationStarted(let op) = event.payload, op.kind == kind, event.instance == id { return true }
            return false
        }?.time
    }

    func testWithoutUseRollingUpgradePolicyItBatchesWithTheDefaultPolicy() throws {
        let outcome = try simulate(automatic(), actions: release)
        XCTAssertEqual(outcome.batches().map(\.count), [2, 2, 2, 2, 2])
        XCTAssertEqual(outcome.status.policy, RollingUpgradePolicy())
        XCTAssertEqual(outcome.status.policy.json.object?.keys.sorted(),
                       ["maxBatchInstancePercent", "maxUnhealthyInstancePercent", "maxUnhealthyUpgradedInstancePercent", "pauseTimeBetweenBatches"])
        XCTAssertEqual(outcome.status.code, .completed)
        XCTAssertTrue(outcome.simulation.instances.allSatisfy { $0.modelVersion == 2 })
        XCTAssertEqual(outcome.simulation.models.last?["image"], "2024.02.01")
    }

    func testWithUseRollingUpgradePolicyItBatchesWithTheScaleSetsPolicy() throws {
        // 50% batches within a 50% unhealthy budget: two batches of 5. The default policy would
        // have taken five batches of 2 (the test above).
        var definition = automatic { $0.useRollingUpgradePolicy = true }
        definition.policy.rolling.maxUnhealthyInstancePercent = 50
        let outcome = try simulate(definition, actions: release)
        XCTAssertEqual(outcome.batches().map(\.count), [5, 5])
        XCTAssertEqual(outcome.status.policy.maxBatchInstancePercent, 50)
    }

    func testFiveOrFewerInstancesUpgradeOneAtATime() throws {
        let outcome = try simulate(automatic(5), actions: release)
        XCTAssertEqual(outcome.batches(), [[0], [1], [2], [3], [4]])
        XCTAssertEqual(outcome.status.code, .completed)
    }

    func testEachInstanceGetsFiveMinutesToBecomeHealthyAndIsRestoredIfItDoesNot() throws {
        // Batch 1 is (0, 1); their upgrades end at 180 s. Instance 0 turns Healthy 4 minutes
        // later and counts; instance 1 never does and is restored at 180 + 300 = 480 s.
        let outcome = try simulate(automatic(), health: health(bad: [1], lateUntil: [0: 420_000]), actions: release)
        let finished = outcome.events.first { $0.kind == .batchFinished }!
        XCTAssertEqual(finished.time, 480_000)
        guard case .batchFinished(let healthy, let count) = finished.payload else { return XCTFail() }
        XCTAssertEqual([healthy, count], [1, 2])
        let restores = outcome.events.filter { $0.kind == .imageRestoreStarted }
        XCTAssertEqual(restores.map(\.instance), [1])
        XCTAssertEqual(restores.first?.time, 480_000)
        XCTAssertEqual(outcome.simulation.instances[1].modelVersion, 1)
        XCTAssertEqual(outcome.simulation.instances[0].modelVersion, 2)
        XCTAssertEqual(outcome.status.code, .completed)
        XCTAssertEqual(outcome.status.progress.successfulInstanceCount, 9)
        XCTAssertEqual(outcome.status.progress.failedInstanceCount, 1)
        XCTAssertEqual(outcome.summary.rolledBack, 1)
        let history = try XCTUnwrap(outcome.summary.osUpgradeHistory.first)
        XCTAssertEqual(outcome.summary.osUpgradeHistory.count, 1)
        XCTAssertEqual(history.startedBy, .platform)
        XCTAssertEqual(history.rolledBack, 1)
        XCTAssertEqual(history.rollbackFailed, 0)
        XCTAssertEqual(history.targetImageReference, ["version": "2024.02.01"])
        XCTAssertEqual(history.code, .completed)
        XCTAssertEqual(history.startTime, 60_000)
        XCTAssertEqual(history.endTime, outcome.events.first { $0.kind == .upgradeCompleted }?.time)
    }

    func testDisableAutomaticRollbackKeepsTheNewImage() throws {
        let outcome = try simulate(automatic { $0.disableAutomaticRollback = true }, health: health(bad: [1]), actions: release)
        XCTAssertEqual(outcome.count(.imageRestoreStarted), 0)
        XCTAssertEqual(outcome.simulation.instances[1].modelVersion, 2)
        XCTAssertEqual(outcome.status.progress.failedInstanceCount, 1)
        XCTAssertEqual(outcome.summary.osUpgradeHistory.first?.rolledBack, 0)
    }

    func testItStopsAtTheEndOfTheBatchWhenMoreThanTwentyPercentAreUnhealthy() throws {
        // Batch 1 (0, 1): 2 of 10 failed, 20%, allowed; both are restored and still booting when
        // batch 2 is checked, which takes the whole unhealthy budget: batch 2 shrinks to (2).
        // 3 of 10 failed, 30%: Faulted.
        let outcome = try simulate(automatic(), health: health(bad: [0, 1, 2]), actions: release)
        let checks = outcome.events.compactMap { event -> ThresholdCheck? in
            if case .postBatchCheck(let check) = event.payload { return check }
            return nil
        }
        XCTAssertEqual(checks.map(\.counted), [[0, 1], [0, 1, 2]])
        XCTAssertEqual(checks.map(\.passed), [true, false])
        XCTAssertEqual(outcome.status.code, .faulted)
        XCTAssertEqual(outcome.status.error?.code.rawValue, "MaxUnhealthyUpgradedInstancePercentExceededInRollingUpgrade")
        XCTAssertEqual(outcome.status.progress.pendingInstanceCount, 7)
        XCTAssertEqual(outcome.batches(), [[0, 1], [2]])
        let history = try XCTUnwrap(outcome.summary.osUpgradeHistory.first)
        XCTAssertEqual(history.code, .faulted)
        XCTAssertEqual(history.rolledBack, 3)
        XCTAssertEqual(history.error?.code.rawValue, "MaxUnhealthyUpgradedInstancePercentExceededInRollingUpgrade")
        XCTAssertEqual([0, 1, 2, 3].map { outcome.simulation.instances[$0].modelVersion }, [1, 1, 1, 1])
    }

    func testDeferringInstancesWaitForApprovalOrTheirOwnTime() throws {
        // Instance 1 defers until approved at 30 minutes; instance 3 for 10 minutes from its batch.
        let outcome = try simulate(automatic { $0.osRollingUpgradeDeferral = true },
                                   deferrals: { vm, _ in vm.id == 1 ? .untilApproved : vm.id == 3 ? .approveAfter(600_000) : .none },
                                   actions: release + [(1_800_000, { try $0.approveOSUpgrade(ids: [1]) })])
        XCTAssertEqual(startTime(of: .upgrade, on: 0, in: outcome), 60_000)
        XCTAssertEqual(startTime(of: .upgrade, on: 1, in: outcome), 1_800_000)
        let batch2 = try XCTUnwrap(outcome.events.filter { $0.kind == .batchStarted }.dropFirst().first)
        XCTAssertEqual(startTime(of: .upgrade, on: 3, in: outcome), batch2.time + 600_000)
        let deferred = outcome.events.compactMap { event -> (Int, Millis?)? in
            if case .osUpgradeDeferred(let after) = event.payload { return (event.instance!, after) }
            return nil
        }
        XCTAssertEqual(deferred.map(\.0), [1, 3])
        XCTAssertEqual(deferred.map(\.1), [nil, 600_000])
        XCTAssertEqual(outcome.status.code, .completed)
        XCTAssertEqual(outcome.status.progress.successfulInstanceCount, 10)
    }

    func testWithoutADeferralSourceEveryInstanceWaitsForApproval() throws {
        let outcome = try simulate(automatic { $0.osRollingUpgradeDeferral = true }, actions: release)
        XCTAssertEqual(outcome.count(.osUpgradeDeferred), 2)
        XCTAssertEqual(outcome.count(.operationStarted), 0)
        XCTAssertEqual(outcome.status.code, .rollingForward)
        XCTAssertEqual(outcome.status.progress.inProgressInstanceCount, 2)
        XCTAssertEqual(outcome.status.progress.pendingInstanceCount, 8)
        // Nothing left could approve them: the run ends there rather than at its time limit.
        XCTAssertEqual(outcome.summary.awaitingApproval, [0, 1])
        XCTAssertFalse(outcome.summary.hitTimeLimit)
        XCTAssertEqual(outcome.summary.endTime, 60_000)
    }

    func testCancelReturnsDeferredInstancesToPending() throws {
        let outcome = try simulate(automatic { $0.osRollingUpgradeDeferral = true },
                                   deferrals: { vm, _ in vm.id == 1 ? .untilApproved : .none },
                                   actions: release + [(600_000, { try $0.cancelRollingUpgrade() })])
        XCTAssertEqual(outcome.status.code, .cancelled)
        XCTAssertEqual(outcome.status.progress.successfulInstanceCount, 1)
        XCTAssertEqual(outcome.status.progress.inProgressInstanceCount, 0)
        XCTAssertEqual(outcome.status.progress.pendingInstanceCount, 9)
        XCTAssertEqual(outcome.simulation.instances[1].modelVersion, 1)
        XCTAssertNil(startTime(of: .upgrade, on: 1, in: outcome))
    }

    func testApproveIsRefusedWhenNoInstanceDefers() throws {
        let sim = try Simulation(automatic(), health: AlwaysHealthy())
        XCTAssertThrowsError(try sim.approveOSUpgrade(ids: [1])) { error in
            XCTAssertEqual((error as? EngineError)?.refusal, .notDeferring([]))
        }
    }

    func testAReleaseChangesNothingWhenAutomaticUpgradesAreOffOrTheVersionIsPinned() throws {
        var off = automatic()
        off.policy.automaticOS.enableAutomaticOSUpgrade = false
        var pinned = automatic()
        pinned.model[Simulation.imageVersionAttribute] = "1.2.3"
        for (definition, expected) in [(off, ImageReleaseOutcome.automaticUpgradesOff), (pinned, .pinned("1.2.3"))] {
            let outcome = try simulate(definition, actions: release)
            let released = outcome.events.compactMap { event -> ImageReleaseOutcome? in
                if case .imageReleased(_, let result) = event.payload { return result }
                return nil
            }
            XCTAssertEqual(released, [expected])
            XCTAssertEqual(outcome.count(.upgradeStarted), 0)
            XCTAssertNil(outcome.summary.status)
            XCTAssertEqual(outcome.simulation.modelVersion, 1)
        }
    }

    func testOnDemandOSUpgradeIsInTheHistoryStartedByUser() throws {
        let outcome = try simulate(scaleSet(4, mode: .manual), actions: [(60_000, { try $0.startOSUpgrade(image: "v9") })])
        let history = try XCTUnwrap(outcome.summary.osUpgradeHistory.first)
        XCTAssertEqual(history.startedBy, .user)
        XCTAssertEqual(history.targetImageReference["version"], "v9")
        XCTAssertEqual(history.progress.successfulInstanceCount, 4)
    }

    /// The target of each on-demand OS upgrade given no image, in the order they ran.
    func onDemandTargets(_ model: [String: String], released: String? = nil, upgrades: Int = 1) throws -> [String?] {
        var actions: [(Millis, (Simulation) throws -> Void)] = []
        if let released { actions.append((30_000, { try $0.releasePlatformImage(version: released) })) }
        for k in 0..<upgrades { actions.append((Millis(60_000 + 3_600_000 * k), { try $0.startOSUpgrade() })) }
        let outcome = try simulate(scaleSet(4, mode: .manual) { $0.model = model }, actions: actions)
        return outcome.summary.osUpgradeHistory.filter { $0.startedBy == .user }.map { $0.targetImageReference["version"] }
    }

    func testAnOnDemandOSUpgradeGivenNoImageBringsTheNewestReleasedImageOrTheNextVersion() throws {
        // Manual mode: the release changes nothing, and the on-demand upgrade brings it.
        XCTAssertEqual(try onDemandTargets(["image": "2024.01.15"], released: "2024.02.01"), ["2024.02.01"])
        // The model already runs the released image: the next version after it.
        XCTAssertEqual(try onDemandTargets(["image": "2024.02.01"], released: "2024.02.01"), ["2024.02.02"])
        // No release: the next version, keeping the width; twice in a row, two versions on.
        XCTAssertEqual(try onDemandTargets(["image": "1.0.9"], upgrades: 2), ["1.0.10", "1.0.11"])
        XCTAssertEqual(try onDemandTargets(["image": "v1"]), ["v2"])
        XCTAssertEqual(try onDemandTargets(["image": "ubuntu-lts"]), ["ubuntu-lts.1"])
        // A model naming no image is taken to run 1.0.0.
        XCTAssertEqual(try onDemandTargets([:]), ["1.0.1"])
    }

    func testAnExtensionUpgradeGivenNoVersionBringsTheNextVersion() throws {
        let outcome = try simulate(scaleSet(4, mode: .manual) { $0.model = ["extensions": "2.9"] },
                                   actions: [(60_000, { try $0.startExtensionUpgrade() }), (3_600_000, { try $0.startExtensionUpgrade() })])
        let versions = outcome.events.compactMap { event -> String? in
            if case .modelUpdated(_, let changes, _, _) = event.payload { return changes["extensions"] }
            return nil
        }
        XCTAssertEqual(versions, ["2.10", "2.11"])
        XCTAssertEqual(ImageVersion.successor(of: "99"), "100")
        XCTAssertEqual(ImageVersion.successor(of: ImageVersion.firstExtension), "1.1")
    }

    func testValidateRefusesAutomaticOSUpgradesWithoutAHealthSourceOrWithMaxSurgeOnFlexible() {
        var noHealth = automatic()
        noHealth.healthExtension = nil
        XCTAssertEqual(noHealth.validate().map(\.field), ["upgradePolicy.automaticOSUpgradePolicy.enableAutomaticOSUpgrade"])
        var surge = automatic()
        surge.orchestration = .flexible
        surge.policy.rolling.maxSurge = true
        XCTAssertEqual(surge.validate().map(\.field), ["upgradePolicy.automaticOSUpgradePolicy.enableAutomaticOSUpgrade"])
        surge.orchestration = .uniform
        XCTAssertEqual(surge.validate().map(\.field), [])
    }

    func testPolicyParsesAutomaticOSUpgradePolicyWithNullsAsAbsent() throws {
        let policy = try UpgradePolicy.parse(json: """
            {"mode": "Rolling", "automaticOSUpgradePolicy": {"enableAutomaticOSUpgrade": true, "disableAutomaticRollback": null,
             "useRollingUpgradePolicy": true, "osRollingUpgradeDeferral": false}}
            """)
        XCTAssertTrue(policy.automaticOS.enableAutomaticOSUpgrade)
        XCTAssertFalse(policy.automaticOS.disableAutomaticRollback)
        XCTAssertTrue(policy.automaticOS.useRollingUpgradePolicy)
        XCTAssertThrowsError(try UpgradePolicy.parse(json: #"{"automaticOSUpgradePolicy": {"enableAutomaticOsUpgrades": true, "useRollingUpgradePolicy": "yes"}}"#)) { error in
            XCTAssertEqual((error as? ValidationFailure)?.problems.map(\.field),
                           ["upgradePolicy.automaticOSUpgradePolicy.enableAutomaticOsUpgrades", "upgradePolicy.automaticOSUpgradePolicy.useRollingUpgradePolicy"])
        }
    }
}
