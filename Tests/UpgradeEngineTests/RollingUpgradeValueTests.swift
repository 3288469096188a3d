import Formats
@testable import UpgradeEngine
import XCTest

/// The rolling upgrade as a value, driven without a Simulation: each input gets a fleet snapshot
/// (a plain struct the test changes between inputs) and returns the actions to perform, which
/// the test checks against SPEC's numbers.
final class RollingUpgradeValueTests: XCTestCase {
    /// A fleet as values: what the upgrade may read, nothing it can change.
    struct Snapshot: FleetView {
        var now: Millis = 60_000
        var health: [HealthState]
        var versions: [Int]
        var disruptive = true
        var deleted: Set<Int> = []

        init(_ count: Int) {
            health = Array(repeating: .healthy, count: count)
            versions = Array(repeating: 1, count: count)
        }

        func health(of id: Int) -> HealthState { health[id] }
        func isPresent(_ id: Int) -> Bool { !deleted.contains(id) }
        func isRunning(_ id: Int) -> Bool { !deleted.contains(id) }
        func isDeleted(_ id: Int) -> Bool { deleted.contains(id) }
        func modelVersion(of id: Int) -> Int { versions[id] }
        func isBusy(_ id: Int) -> Bool { false }
        func name(of id: Int) -> String { "web_\(id)" }
        var unhealthyPresent: [Int] { health.indices.filter { isPresent($0) && health[$0].countsAsUnhealthy } }
        var existingCount: Int { health.count - deleted.count }
        var nextInstanceID: Int { health.count }
        func upgradeIsDisruptive(to version: Int) -> Bool { disruptive }

        /// A new instance (MaxSurge) on model `version`, Initializing.
        mutating func add(version: Int) {
            health.append(.initializing)
            versions.append(version)
        }
    }

    func upgrade(_ fleet: Snapshot, policy: RollingUpgradePolicy) -> RollingUpgrade {
        let inputs = fleet.health.indices.map { PlanInput(id: $0) }
        let (queue, skipped, protected) = Planner.queue(inputs, zonal: false, orchestration: .uniform, faultDomains: 1, policy: policy)
        return RollingUpgrade(terms: RollingTerms(number: 1, policy: policy, capacity: fleet.health.count, targetVersion: 2,
                                                  startTime: fleet.now, scaleSet: "web", quota: nil, skipped: skipped,
                                                  protected: protected, os: nil),
                              queue: queue)
    }

    /// An upgrade of `count` instances to model 2, after its first input (`begin`): the fleet,
    /// the upgrade and the actions of that input.
    func begun(_ count: Int, policy: RollingUpgradePolicy = RollingUpgradePolicy()) -> (Snapshot, RollingUpgrade, [RollingStep]) {
        let fleet = Snapshot(count)
        var run = upgrade(fleet, policy: policy)
        let actions = run.begin(fleet)
        return (fleet, run, actions)
    }

    /// Fails unless `run` moves no more.
    func assertDone(_ run: RollingUpgrade, line: UInt = #line) {
        guard case .done = run.state else { return XCTFail("\(run.state)", line: line) }
    }

    /// The instances the actions start `kind` on, in order.
    func started(_ kind: OperationKind, _ actions: [RollingStep]) -> [Int] {
        actions.compactMap { if case .begin(kind, let id, _) = $0 { return id } else { return nil } }
    }

    /// The events the actions record, by kind.
    func kinds(_ actions: [RollingStep]) -> [Event.Kind] {
        actions.compactMap { if case .emit(let payload, _, _, _) = $0 { return payload.kind } else { return nil } }
    }

    /// Seed 001's example (SPEC §4.2): 10 instances, maxBatchInstancePercent 20 → five batches of
    /// two, in id order, each started once the one before is healthy on the new model; then
    /// Completed with 10 successful.
    func testTenInstancesAtTwentyPercentRunFiveBatchesOfTwo() throws {
        var (fleet, run, actions) = begun(10)
        var batches: [[Int]] = []
        while case let batch = started(.upgrade, actions), !batch.isEmpty {
            batches.append(batch)
            guard case .upgrading(let state, _) = run.state else { return XCTFail("\(run.state)") }
            XCTAssertEqual(state.ids, batch)
            XCTAssertEqual(Array(run.inFlight), batch)
            XCTAssertEqual(run.inProgressCount, 2)
            actions = []
            for id in batch {
                fleet.versions[id] = 2
                fleet.now += 30_000
                actions += run.operationFinished(id, succeeded: true, kind: .upgrade, fleet)
            }
        }
        XCTAssertEqual(batches, [[0, 1], [2, 3], [4, 5], [6, 7], [8, 9]])
        XCTAssertEqual(kinds(actions), [.batchFinished, .postBatchCheck, .upgradeCompleted])
        XCTAssertEqual(run.code, .completed)
        XCTAssertEqual(run.successful.count, 10)
        XCTAssertEqual(run.batchNumber, 5)
        assertDone(run)
    }

    /// A batch waits while one of its instances is Initializing after its upgrade (SPEC §4.4):
    /// the health change of that instance is the input that finishes it.
    func testABatchWaitsForItsInitializingInstance() throws {
        var (fleet, run, _) = begun(10)
        fleet.versions[0] = 2
        fleet.versions[1] = 2
        fleet.health[1] = .initializing
        XCTAssertEqual(kinds(run.operationFinished(0, succeeded: true, kind: .upgrade, fleet)), [])
        XCTAssertEqual(kinds(run.operationFinished(1, succeeded: true, kind: .upgrade, fleet)), [])
        XCTAssertEqual(run.inProgressCount, 2)
        XCTAssertEqual(kinds(run.healthChanged(7, fleet)), [], "an instance outside the batch changes nothing")
        fleet.health[1] = .healthy
        let next = run.healthChanged(1, fleet)
        XCTAssertEqual(kinds(next), [.batchFinished, .postBatchCheck, .preBatchCheck, .batchStarted])
        XCTAssertEqual(started(.upgrade, next), [2, 3])
    }

    /// SPEC §4.5: after a batch, the upgraded instances that are unhealthy count against
    /// maxUnhealthyUpgradedInstancePercent. 10 instances, batches of 30%, threshold 20%: three
    /// unhealthy after batch 1 are 30% > 20%, so the upgrade faults with Azure's code, names
    /// instance 0 first, and starts no second batch.
    func testAnUnhealthyBatchOverMaxUnhealthyUpgradedFaults() throws {
        var fleet = Snapshot(10)
        fleet.disruptive = false  // an in-place change: the unhealthy budget does not shrink the batch
        var policy = RollingUpgradePolicy()
        policy.maxBatchInstancePercent = 30
        var run = upgrade(fleet, policy: policy)
        XCTAssertEqual(started(.upgrade, run.begin(fleet)), [0, 1, 2])
        var actions: [RollingStep] = []
        for id in 0..<3 {
            fleet.versions[id] = 2
            fleet.health[id] = .unhealthy
            actions += run.operationFinished(id, succeeded: true, kind: .upgrade, fleet)
        }
        XCTAssertEqual(kinds(actions), [.batchFinished, .postBatchCheck, .upgradeFaulted])
        XCTAssertEqual(started(.upgrade, actions), [])
        XCTAssertEqual(run.code, .faulted)
        XCTAssertEqual(run.error?.code, .unhealthyUpgraded)
        XCTAssertEqual(run.error?.code.rawValue, "MaxUnhealthyUpgradedInstancePercentExceededInRollingUpgrade")
        XCTAssertEqual(run.error?.details.count, 3)
        XCTAssertEqual(run.error?.firstFailedInstance, "0")
        XCTAssertEqual(run.failed, [0, 1, 2])
        XCTAssertEqual(run.pendingCount, 7)
        assertDone(run)
    }

    /// Two unhealthy of 10 are 20%, not over the 20% threshold: the upgrade goes on.
    func testTwoUnhealthyOfTenAreWithinTwentyPercent() throws {
        var (fleet, run, _) = begun(10)
        var actions: [RollingStep] = []
        for id in 0..<2 {
            fleet.versions[id] = 2
            fleet.health[id] = .unhealthy
            actions += run.operationFinished(id, succeeded: true, kind: .upgrade, fleet)
        }
        // The pre-batch check of batch 2 sees the same two: 20% passes too (SPEC §4.5).
        XCTAssertEqual(kinds(actions), [.batchFinished, .postBatchCheck, .preBatchCheck, .batchStarted])
        XCTAssertEqual(run.code, .rollingForward)
        XCTAssertEqual(run.failed, [0, 1])
    }

    /// MaxSurge (SPEC §5): a batch creates its new instances first (ids after the last), waits
    /// for them to be Healthy, then deletes the old ones; the state carries the pairs meanwhile.
    func testMaxSurgeCreatesThenDeletesTheOldInstances() throws {
        var fleet = Snapshot(4)
        var policy = RollingUpgradePolicy()
        policy.maxSurge = true
        policy.maxBatchInstancePercent = 50
        var run = upgrade(fleet, policy: policy)
        let first = run.begin(fleet)
        XCTAssertEqual(started(.create, first), [4, 5])
        guard case .surgeCreating(_, let created) = run.state else { return XCTFail("\(run.state)") }
        XCTAssertEqual(created, [0: 4, 1: 5])
        fleet.add(version: 2)
        fleet.add(version: 2)
        fleet.health[4] = .healthy
        fleet.health[5] = .healthy
        _ = run.operationFinished(4, succeeded: true, kind: .create, fleet)
        let deletes = run.operationFinished(5, succeeded: true, kind: .create, fleet)
        XCTAssertEqual(started(.delete, deletes), [0, 1])
        guard case .surgeDeleting(_, _, let failed) = run.state else { return XCTFail("\(run.state)") }
        XCTAssertTrue(failed.isEmpty)
        fleet.deleted = [0, 1]
        _ = run.operationFinished(0, succeeded: true, kind: .delete, fleet)
        let next = run.operationFinished(1, succeeded: true, kind: .delete, fleet)
        XCTAssertEqual(kinds(next), [.batchFinished, .postBatchCheck, .preBatchCheck, .batchStarted])
        XCTAssertEqual(run.successful, [0, 1])
        XCTAssertEqual(started(.create, next), [6, 7])
    }

    /// A cancel (SPEC §4.8) schedules the settling of the batch; the batch's operations finish
    /// and count by their own outcome, no batch starts, and the upgrade settles.
    func testACancelledBatchSettlesWithoutStartingAnother() throws {
        var (fleet, run, _) = begun(10)
        let cancelled = run.cancel(supersededBy: nil, at: 70_000)
        guard case .schedule(.settle, at: 70_000)? = cancelled.last else { return XCTFail("\(cancelled)") }
        fleet.versions[0] = 2
        fleet.health[0] = .initializing
        _ = run.operationFinished(0, succeeded: true, kind: .upgrade, fleet)
        let last = run.operationFinished(1, succeeded: false, kind: .upgrade, fleet)
        XCTAssertEqual(kinds(last), [.batchFinished])
        guard case .settled? = last.last else { return XCTFail("\(last)") }
        XCTAssertEqual(run.code, .cancelled)
        XCTAssertEqual(run.successful, [0])
        XCTAssertEqual(run.failed, [1])
        XCTAssertTrue(run.isQuiet)
    }
}
