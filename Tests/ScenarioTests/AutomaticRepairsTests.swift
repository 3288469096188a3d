import Formats
import Scenario
import UpgradeEngine
import XCTest

/// Automatic instance repairs on the upgrade's clock (SPEC §6b), on Swift definitions.
///
/// 20 instances in Rolling mode (prioritizeUnhealthyInstances), repairs on (grace PT10M,
/// Replace); instances 4 and 7 answer Unhealthy forever, the rest Healthy; the model changes at
/// 1 min, and the upgrade takes 4 and 7 in its first batch. Every operation's end restarts
/// the grace period, so no repair starts while the upgrade runs; 5% of 20 is one instance per
/// batch of repairs. With the default timings a Replace's delete takes 30 s and its create 150 s.
final class AutomaticRepairsTests: XCTestCase {
    static let grace: Millis = 600_000
    static let create: Millis = 150_000

    static func fleet(repairs: AutomaticRepairsPolicy?) -> ScaleSetDefinition {
        var scaleSet = ScaleSetDefinition(name: "web", capacity: 20)
        scaleSet.model = ["image": "v1"]
        scaleSet.policy.mode = .rolling
        // The broken instances go in the first batch, so they are unhealthy long before the upgrade ends.
        scaleSet.policy.rolling.prioritizeUnhealthyInstances = true
        scaleSet.healthExtension = HealthExtensionSettings(protocol: .http, port: 8000, requestPath: "/health")
        scaleSet.automaticRepairs = repairs
        return scaleSet
    }

    func run(_ repairs: AutomaticRepairsPolicy?, broken: Set<Int> = [4, 7], protected: Set<Int> = []) throws -> RunRecord {
        let behaviours = SwiftBehaviours { _ in
            Behaviours(health: ClosureHealthSource { vm, _ in broken.contains(vm.id) ? .named(.unhealthy) : .named(.healthy) })
        }
        var scaleSet = Self.fleet(repairs: repairs)
        scaleSet.protected = protected
        let definition = ScenarioDefinition(path: "repairs (Swift)", scaleSet: scaleSet, behaviour: .swift(behaviours),
                                            timeline: [.init(time: 60_000, action: .perform(.updateModel(["image": "v2"])))])
        return try Rehearsal.run(definition, RunInputs(seed: 1))
    }

    private func repairs(_ record: RunRecord) -> [(time: Millis, instance: Int, replacement: Int?)] {
        record.events.compactMap { event in
            guard case .repairStarted(_, _, let replacement) = event.payload, let id = event.instance else { return nil }
            return (event.time, id, replacement)
        }
    }

    func testNoRepairWhileTheUpgradeRunsThenOneAtATimeAfterTheGracePeriod() throws {
        let record = try run(AutomaticRepairsPolicy(gracePeriod: Self.grace, repairAction: .replace))
        let started = try XCTUnwrap(record.events.first { $0.kind == .upgradeStarted }?.time)
        let completed = try XCTUnwrap(record.events.first { $0.kind == .upgradeCompleted }?.time)
        let done = repairs(record)
        XCTAssertEqual(done.map(\.instance), [4, 7])
        XCTAssertFalse(done.contains { $0.time >= started && $0.time <= completed }, "a repair started while the upgrade ran")
        // The first repair: the grace period after the last operation of the upgrade.
        let lastUpgradeOperation = try XCTUnwrap(record.events.last { $0.kind == .operationFinished && $0.time <= completed }?.time)
        XCTAssertEqual(done[0].time, lastUpgradeOperation + Self.grace)
        // The second: the grace period after the first repair's create (its last operation) ended.
        XCTAssertEqual(done[1].time, done[0].time + Self.create + Self.grace)
        // Replace: the broken instances are gone, their replacements run the latest model, Healthy.
        XCTAssertEqual(done.map(\.replacement), [20, 21])
        let byID = Dictionary(uniqueKeysWithValues: record.instances.map { ($0.id, $0) })
        XCTAssertEqual(byID[4]?.exists, false)
        XCTAssertEqual(byID[7]?.exists, false)
        XCTAssertEqual(byID[20]?.modelVersion, 2)
        XCTAssertEqual(byID[21]?.health, .healthy)
        XCTAssertEqual(record.instances.filter(\.exists).count, 20)
    }

    func testRepairsOffOrProtectedRepairNothing() throws {
        XCTAssertEqual(repairs(try run(nil)).count, 0)
        XCTAssertEqual(repairs(try run(AutomaticRepairsPolicy(enabled: false))).count, 0)
        XCTAssertEqual(repairs(try run(AutomaticRepairsPolicy(), protected: [4, 7])).count, 0)
    }

    /// Restart keeps the instance; an instance that never heals is repaired
    /// `attemptsBeforeSuspension` (5) times, then the service suspends itself.
    func testRepeatedFailuresSuspendTheService() throws {
        let record = try run(AutomaticRepairsPolicy(gracePeriod: Self.grace, repairAction: .restart), broken: [4])
        XCTAssertEqual(repairs(record).map(\.instance), [4, 4, 4, 4, 4])
        let suspended = record.events.filter { $0.kind == .repairsSuspended }
        XCTAssertEqual(suspended.count, 1)
        XCTAssertEqual(suspended.first?.instance, 4)
    }

    func testGracePeriodOutsideAzuresRangeIsRefused() {
        var scaleSet = Self.fleet(repairs: AutomaticRepairsPolicy(gracePeriod: 5 * 60_000))
        XCTAssertEqual(scaleSet.repairProblems.map(\.field), ["automaticRepairsPolicy.gracePeriod"])
        scaleSet.automaticRepairs = AutomaticRepairsPolicy(gracePeriod: 90 * 60_000)
        XCTAssertEqual(scaleSet.repairProblems, [])
        XCTAssertEqual(AutomaticRepairsPolicy.batchSize(capacity: 19), 1)
        XCTAssertEqual(AutomaticRepairsPolicy.batchSize(capacity: 100), 5)
    }
}
