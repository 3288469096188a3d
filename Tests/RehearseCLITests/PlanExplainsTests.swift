import Foundation
import XCTest

/// `plan` says why each batch is where it is, how long the upgrade takes with the scenario's own
/// boot, and what Manual and Automatic scale sets do instead of batches. Read as JSON.
final class PlanExplainsTests: XCTestCase {
    func plan(_ arguments: [String]) throws -> [String: Any] {
        let out = try runRehearse(["plan"] + arguments + ["--json"])
        XCTAssertEqual(out.status, 0, out.stderr)
        return try XCTUnwrap(JSONSerialization.jsonObject(with: Data(out.stdout.utf8)) as? [String: Any], out.stdout)
    }

    func rules(_ batch: [String: Any]) -> [[String: Any]] { batch["why"] as? [[String: Any]] ?? [] }

    func testEachBatchNamesItsZoneAndTheBudgetThatShrankIt() throws {
        // 30 instances in 3 zones, batches of 33% (9) but only 20% (6) may be unhealthy.
        let result = try plan(["scripts/rolling-boot-failures.lua", "--set", "rollingUpgradePolicy.maxBatchInstancePercent=33",
                               "--set", "rollingUpgradePolicy.maxUnhealthyInstancePercent=20"])
        let batches = try XCTUnwrap(result["batches"] as? [[String: Any]])
        XCTAssertEqual(batches.map { ($0["instances"] as? [Any])?.count }, [6, 4, 6, 4, 6, 4])
        XCTAssertEqual(batches.map { rules($0).first { $0["rule"] as? String == "zone" }?["zone"] as? String }, ["1", "1", "2", "2", "3", "3"])
        let first = try XCTUnwrap(rules(batches[0]).first { $0["rule"] as? String == "shrunkByBudget" })
        XCTAssertEqual(first["size"] as? Int, 9)
        XCTAssertEqual(first["budget"] as? Int, 6)
        XCTAssertEqual(first["unhealthyNow"] as? Int, 0)
        let second = try XCTUnwrap(rules(batches[1]).first { $0["rule"] as? String == "restOfGroup" })
        XCTAssertEqual(second["left"] as? Int, 4)
        XCTAssertEqual(result["mode"] as? String, "Rolling")
    }

    func testPhasesAndFullBatchesAreNamed() throws {
        let batches = try XCTUnwrap(try plan(["scripts/n-phase-skip.lua"])["batches"] as? [[String: Any]])
        XCTAssertEqual(batches.map { rules($0).first?["phase"] as? Int }, [0, 0, 1, 1, nil])
        XCTAssertTrue(rules(batches[0]).contains { $0["rule"] as? String == "batchSize" && $0["size"] as? Int == 2 && $0["percent"] as? Int == 20 })
    }

    func testTheShortestDurationCountsTheApplicationsBoot() throws {
        // The application answers 2 to 6 minutes after a restart: a run's median sits between.
        let policy = try XCTUnwrap(try plan(["scripts/rolling-boot-failures.lua"])["policy"] as? [String: Any])
        let boot = try XCTUnwrap(policy["measuredBoot"] as? [String: Any])
        let toHealthy = try XCTUnwrap(boot["toHealthySeconds"] as? Double)
        XCTAssertGreaterThanOrEqual(toHealthy, 120)
        XCTAssertLessThanOrEqual(toHealthy, 360)
        let batches = 6.0, operation = try XCTUnwrap(boot["operationSeconds"] as? Double)
        // Six batches of operation and boot, and five pauses of 10 s.
        XCTAssertEqual(policy["shortestWithBootSeconds"] as? Int, Int(batches * (operation + toHealthy) + 5 * 10))
        XCTAssertGreaterThan(try XCTUnwrap(policy["shortestWithBootSeconds"] as? Int), try XCTUnwrap(policy["shortestDurationSeconds"] as? Int))
    }

    func testAnAutomaticOSUpgradeIsPlannedWithThePolicyItUses() throws {
        // Without useRollingUpgradePolicy the OS upgrade batches 20%, whatever the rolling policy says.
        let result = try plan(["scripts/automatic-os-upgrade.lua"])
        let policy = try XCTUnwrap(result["policy"] as? [String: Any])
        let batches = try XCTUnwrap(result["batches"] as? [[String: Any]])
        XCTAssertEqual(policy["batchSize"] as? Int, 2)
        XCTAssertEqual(batches.map { ($0["instances"] as? [Any])?.count }, Array(repeating: 2, count: batches.count))
    }

    func testManualAndAutomaticScaleSetsArePlannedAsWhatTheyDo() throws {
        let manual = try plan(["scripts/manual-mode.lua"])
        XCTAssertEqual(manual["mode"] as? String, "Manual")
        XCTAssertEqual((manual["batches"] as? [Any])?.count, 0)
        // The fleet as the scale set starts (6 instances, 5 protected), not as the run left it.
        XCTAssertEqual(manual["waitsForManualUpgrade"] as? [Int], [0, 1, 2, 3, 4])
        XCTAssertEqual(manual["protected"] as? [Int], [5])
        XCTAssertTrue(manual["policy"] is NSNull, "no batch figures for a mode without batches")
        let folder = try temporaryFolder("rehearse-plan")
        try """
            scaleset { name = "web", capacity = 4, model = { image = "v1" }, upgradePolicy = { mode = "Automatic" } }
            at("PT1M", function() update_model { image = "v2" } end)
            """.write(toFile: folder + "/automatic.lua", atomically: true, encoding: .utf8)
        let automatic = try plan([folder + "/automatic.lua"])
        XCTAssertEqual(automatic["mode"] as? String, "Automatic")
        XCTAssertEqual((automatic["batches"] as? [Any])?.count, 0)
        XCTAssertEqual(automatic["atOnce"] as? [Int], [0, 1, 2, 3])
    }
}
