import Formats
@testable import UpgradeEngine
import XCTest

/// The rolling upgrade alone: it reads a fleet it cannot change and answers each input with the
/// steps its host must carry out.
final class RollingStateMachineTests: XCTestCase {
    /// A fleet of plain arrays, changed only by the test (standing in for the simulation).
    final class Fleet: FleetView {
        var now: Millis = 60_000
        var states: [HealthState]
        var versions: [Int]
        var busy: Set<Int> = []
        init(_ count: Int) {
            states = Array(repeating: .healthy, count: count)
            versions = Array(repeating: 1, count: count)
        }
        func health(of id: Int) -> HealthState { states[id] }
        func isPresent(_ id: Int) -> Bool { true }
        func isRunning(_ id: Int) -> Bool { true }
        func isDeleted(_ id: Int) -> Bool { false }
        func modelVersion(of id: Int) -> Int { versions[id] }
        func isBusy(_ id: Int) -> Bool { busy.contains(id) }
        func name(of id: Int) -> String { "web_\(id)" }
        var unhealthyPresent: [Int] { states.indices.filter { states[$0].countsAsUnhealthy } }
        var existingCount: Int { states.count }
        var nextInstanceID: Int { states.count }
        func upgradeIsDisruptive(to version: Int) -> Bool { true }
    }

    func machine(_ fleet: Fleet, policy: RollingUpgradePolicy = RollingUpgradePolicy(), os: OSUpgradeTerms? = nil) -> RollingUpgrade {
        let inputs = fleet.states.indices.map { PlanInput(id: $0) }
        let (queue, skipped, protected) = Planner.queue(inputs, zonal: false, orchestration: .uniform, faultDomains: 1, policy: policy)
        return RollingUpgrade(terms: RollingTerms(number: 1, policy: policy, capacity: fleet.states.count, targetVersion: 2, startTime: fleet.now,
                                                  scaleSet: "web", quota: nil, skipped: skipped, protected: protected, os: os),
                              queue: queue)
    }

    func begun(_ steps: [RollingStep]) -> [Int] {
        steps.compactMap { if case .begin(.upgrade, let id, 2) = $0 { return id } else { return nil } }
    }

    func payloads(_ steps: [RollingStep]) -> [Event.Kind] {
        steps.compactMap { if case .emit(let payload, _, _, _) = $0 { return payload.kind } else { return nil } }
    }

    func testTheFirstInputChecksAndStartsBatchOneAndChangesNothingItself() throws {
        let fleet = Fleet(10)
        var run = machine(fleet)
        let steps = run.begin(fleet)
        XCTAssertEqual(payloads(steps), [.preBatchCheck, .batchStarted])
        XCTAssertEqual(begun(steps), [0, 1])
        XCTAssertEqual(run.inProgressCount, 2)
        XCTAssertEqual(run.pendingCount, 8)
        XCTAssertEqual(fleet.versions, Array(repeating: 1, count: 10))
    }

    func testABatchWaitsForInitializingInstancesThenTheNextStarts() throws {
        let fleet = Fleet(10)
        var run = machine(fleet)
        _ = run.begin(fleet)
        // Both upgrades end; the instances restart (Initializing): nothing to do yet.
        fleet.now = 180_000
        fleet.states[0] = .initializing
        fleet.states[1] = .initializing
        fleet.versions[0] = 2
        fleet.versions[1] = 2
        XCTAssertTrue(run.operationFinished(0, succeeded: true, kind: .upgrade, fleet).isEmpty)
        XCTAssertTrue(run.operationFinished(1, succeeded: true, kind: .upgrade, fleet).isEmpty)
        fleet.states[0] = .healthy
        XCTAssertTrue(run.healthChanged(0, fleet).isEmpty)
        fleet.states[1] = .healthy
        let steps = run.healthChanged(1, fleet)
        XCTAssertEqual(payloads(steps), [.batchFinished, .postBatchCheck, .preBatchCheck, .batchStarted])
        XCTAssertEqual(begun(steps), [2, 3])
        XCTAssertEqual(run.successful, [0, 1])
        // A health change of an instance outside the batch asks for nothing.
        XCTAssertTrue(run.healthChanged(7, fleet).isEmpty)
    }

    func testAPauseIsAScheduledResume() throws {
        var policy = RollingUpgradePolicy()
        policy.pauseTimeBetweenBatches = 10_000
        let fleet = Fleet(10)
        var run = machine(fleet, policy: policy)
        _ = run.begin(fleet)
        fleet.versions[0] = 2
        fleet.versions[1] = 2
        _ = run.operationFinished(0, succeeded: true, kind: .upgrade, fleet)
        let steps = run.operationFinished(1, succeeded: true, kind: .upgrade, fleet)
        XCTAssertEqual(payloads(steps), [.batchFinished, .postBatchCheck, .pause])
        guard case .schedule(.resume, at: 70_000)? = steps.last else { return XCTFail("\(steps)") }
        guard case .pausing = run.state else { return XCTFail("\(run.state)") }
    }

    func testCancelSettlesTheBatchAndStartsNothing() throws {
        let fleet = Fleet(10)
        var run = machine(fleet)
        _ = run.begin(fleet)
        let steps = run.cancel(supersededBy: nil, at: 90_000)
        XCTAssertEqual(payloads(steps), [.upgradeCancelled])
        guard case .schedule(.settle, at: 90_000)? = steps.last else { return XCTFail("\(steps)") }
        XCTAssertEqual(run.code, .cancelled)
        fleet.versions[0] = 2
        _ = run.operationFinished(0, succeeded: true, kind: .upgrade, fleet)
        let last = run.operationFinished(1, succeeded: false, kind: .upgrade, fleet)
        XCTAssertEqual(payloads(last), [.batchFinished])
        guard case .settled? = last.last else { return XCTFail("\(last)") }
        XCTAssertEqual(run.successful, [0])
        XCTAssertEqual(run.failed, [1])
        XCTAssertEqual(run.pendingCount, 8)
    }

    /// The machine never calls a behaviour: an OS upgrade with deferral asks its host for the
    /// batch's answers and starts what they allow when they come back, in the order asked.
    func testDeferralAnswersAreAnInputNotACallOut() throws {
        let fleet = Fleet(10)
        let os = OSUpgradeTerms(startedBy: .platform, image: "2", reference: [:], usesDefaultPolicy: true, healthWait: 300_000,
                                restoreFailed: true, deferral: true)
        var run = machine(fleet, os: os)
        let steps = run.begin(fleet)
        XCTAssertEqual(payloads(steps), [.preBatchCheck, .batchStarted])
        guard case .askDeferrals(let ids)? = steps.last else { return XCTFail("\(steps)") }
        XCTAssertEqual(ids, [0, 1])
        XCTAssertEqual(begun(steps), [])
        let answered = run.deferralsAnswered([(id: 0, answer: .none), (id: 1, answer: .approveAfter(600_000))], fleet)
        XCTAssertEqual(begun(answered), [0])
        XCTAssertEqual(payloads(answered), [.osUpgradeDeferred])
        guard case .schedule(.approve(1), at: 660_000)? = answered.last else { return XCTFail("\(answered)") }
        XCTAssertEqual(run.deferred, [1])
        XCTAssertEqual(run.untilApproved, [])
        XCTAssertEqual(begun(run.approve(1, byAction: false)), [1])
        XCTAssertEqual(run.deferred, [])
    }
}
