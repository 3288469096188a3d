import Formats
import Scenario
import UpgradeEngine
import XCTest

/// `plan` explains the policy in numbers before anything runs: the arithmetic teams ask about.
final class PlanArithmeticTests: XCTestCase {
    /// The arithmetic and plan of `scaleSet` (Rolling, health probed over HTTP).
    func arithmetic(_ scaleSet: ScaleSetDefinition) throws -> (PolicyArithmetic, UpgradePlan) {
        let definition = ScenarioDefinition(path: "\(scaleSet.name) (Swift)", scaleSet: scaleSet, behaviour: .swift(SwiftBehaviours { _ in Behaviours() }))
        let plan = try Rehearsal.plan(definition, seed: 0)
        return (PolicyArithmetic(definition: definition.scaleSet, plan: plan), plan)
    }

    func rolling(_ name: String, capacity: Int, numberOfProbes: Int = 1, _ configure: (inout ScaleSetDefinition) -> Void = { _ in }) -> ScaleSetDefinition {
        var scaleSet = ScaleSetDefinition(name: name, capacity: capacity)
        scaleSet.policy.mode = .rolling
        scaleSet.healthExtension = HealthExtensionSettings(protocol: .http, port: 8000, requestPath: "/health", numberOfProbes: numberOfProbes)
        configure(&scaleSet)
        return scaleSet
    }

    func testTwoInstancesWithTheDefaultsStopOnOneUnhealthyInstance() throws {
        let (a, _) = try arithmetic(rolling("api", capacity: 2))
        XCTAssertEqual(a.batchSize, 1)
        XCTAssertEqual(a.unhealthyBudget, 0, "20% of 2 rounds down to 0")
        XCTAssertEqual(a.upgradedBudget, 0)
        XCTAssertEqual(a.fragilities.map(\.field), ["upgradePolicy.rollingUpgradePolicy.maxUnhealthyInstancePercent",
                                                    "upgradePolicy.rollingUpgradePolicy.maxUnhealthyUpgradedInstancePercent"])
        // One instance of 2 is 50%: 50% or more tolerates one.
        XCTAssertEqual(a.fragilities, [.unhealthyToleratesNone(percent: 20, capacity: 2, toTolerateOne: 50),
                                       .upgradedToleratesNone(percent: 20, capacity: 2, toTolerateOne: 50)])
        // Two batches of 2 minutes each, no pause.
        XCTAssertEqual(a.shortestDuration, 240_000)
    }

    func testThirtyInstancesInThreeZonesWithAPause() throws {
        let (a, plan) = try arithmetic(rolling("shop", capacity: 30, numberOfProbes: 3) { scaleSet in
            scaleSet.zones = ["1", "2", "3"]
            scaleSet.policy.rolling.maxBatchInstancePercent = 20
            scaleSet.policy.rolling.maxUnhealthyInstancePercent = 20
            scaleSet.policy.rolling.maxUnhealthyUpgradedInstancePercent = 10
            scaleSet.policy.rolling.pauseTimeBetweenBatches = 30_000
        })
        XCTAssertEqual(a.batchSize, 6)
        XCTAssertEqual(a.unhealthyBudget, 6)
        XCTAssertEqual(a.upgradedBudget, 3)
        // Zones of 10 in batches of 6: 6 and 4 per zone, zone by zone.
        XCTAssertEqual(plan.batches.map(\.instances.count), [6, 4, 6, 4, 6, 4])
        XCTAssertEqual(a.batchesByGroup.map(\.zone), ["1", "2", "3"])
        XCTAssertEqual(a.batchesByGroup.map(\.batches), [2, 2, 2])
        // 6 batches × (2 min + 2 more probes of 5 s) + 5 pauses of 30 s.
        XCTAssertEqual(a.shortestDuration, 6 * (120_000 + 10_000) + 5 * 30_000)
        // A zone of 10 is more than the 6 that may be unhealthy.
        XCTAssertEqual(a.fragilities.map(\.field), ["upgradePolicy.rollingUpgradePolicy.maxUnhealthyInstancePercent"])
        XCTAssertEqual(a.fragilities, [.zoneExceedsBudget(zone: "1", instances: 10, budget: 6)])
    }
}
