import Formats
import Scenario
import UpgradeEngine
import XCTest

/// `plan` explains the policy in numbers before anything runs: the arithmetic teams ask about.
final class PlanArithmeticTests: XCTestCase {
    func arithmetic(_ scaleset: String) throws -> (PolicyArithmetic, UpgradePlan) {
        let definition = try ScenarioDefinition(luaScript: try writeScenario(scaleset), options: options())
        let plan = try Rehearsal.plan(definition, seed: 0)
        return (PolicyArithmetic(definition: definition.scaleSet, plan: plan), plan)
    }

    func testTwoInstancesWithTheDefaultsStopOnOneUnhealthyInstance() throws {
        let (a, _) = try arithmetic("""
            scaleset { name = "api", capacity = 2, upgradePolicy = { mode = "Rolling" },
                       healthExtension = { protocol = "http", port = 8000, requestPath = "/health" } }
            """)
        XCTAssertEqual(a.batchSize, 1)
        XCTAssertEqual(a.unhealthyBudget, 0, "20% of 2 rounds down to 0")
        XCTAssertEqual(a.upgradedBudget, 0)
        XCTAssertEqual(a.fragilities.map(\.field), ["upgradePolicy.rollingUpgradePolicy.maxUnhealthyInstancePercent",
                                                    "upgradePolicy.rollingUpgradePolicy.maxUnhealthyUpgradedInstancePercent"])
        XCTAssertTrue(a.fragilities[0].message.contains("one unhealthy instance (50%) stops the upgrade before its first batch; 50% or more tolerates one"))
        // Two batches of 2 minutes each, no pause.
        XCTAssertEqual(a.shortestDuration, 240_000)
    }

    func testThirtyInstancesInThreeZonesWithAPause() throws {
        let (a, plan) = try arithmetic("""
            scaleset { name = "shop", capacity = 30, zones = { "1", "2", "3" },
                       upgradePolicy = { mode = "Rolling", rollingUpgradePolicy = {
                         maxBatchInstancePercent = 20, maxUnhealthyInstancePercent = 20,
                         maxUnhealthyUpgradedInstancePercent = 10, pauseTimeBetweenBatches = "PT30S" } },
                       healthExtension = { protocol = "http", port = 8000, requestPath = "/health", numberOfProbes = 3 } }
            """)
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
        XCTAssertTrue(a.fragilities[0].message.hasPrefix("zone 1 holds 10"))
    }
}
