import Foundation
import XCTest

/// `rehearse diff` on Terraform plans of a 30-instance, 3-zone scale set, read as JSON, and
/// `import` telling its two documents apart in either order.
final class DiffCLITests: XCTestCase {
    func diff(_ fixture: String, _ extra: [String] = []) throws -> (Int32, [String: Any]) {
        let out = try runRehearse(["diff", "Tests/Import/terraform-change-\(fixture).json", "--seeds", "0..19", "--jobs", "1", "--json"] + extra)
        let object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(out.stdout.utf8)) as? [String: Any], out.stderr)
        return (out.status, object)
    }

    func testATerraformPlanSaysWhatFollowsInEachMode() throws {
        // Only the image version of a Rolling scale set: six batches of 6 and 4 (20% of 30, zone by zone), rehearsed.
        let (status, image) = try diff("rolling-image")
        XCTAssertEqual(status, 0)
        XCTAssertEqual(image["consequences"] as? [String], ["rollingUpgradeNow"])
        XCTAssertEqual(image["instancesRestart"] as? Bool, true)
        let plan = try XCTUnwrap(image["plan"] as? [String: Any])
        XCTAssertEqual(plan["batches"] as? Int, 6)
        XCTAssertEqual(plan["batchSize"] as? Int, 6)
        let rehearsal = try XCTUnwrap(image["rehearsal"] as? [String: Any])
        XCTAssertEqual(rehearsal["runs"] as? Int, 20)
        XCTAssertEqual((rehearsal["faulted"] as? [String: Any])?["count"] as? Int, 0)
        XCTAssertEqual((rehearsal["lowestHealthy"] as? [String: Any])?["min"] as? Double, 24)
        XCTAssertEqual(rehearsal["deadlineSeconds"] as? Int, 3600)
        XCTAssertEqual((rehearsal["withinDeadline"] as? [String: Any])?["count"] as? Int, 20)

        // Only upgrade_mode: no instance restarts.
        let (_, mode) = try diff("rolling-mode-only")
        XCTAssertEqual(mode["consequences"] as? [String], ["nextUpgradePolicyOnly"])
        XCTAssertEqual(mode["instancesRestart"] as? Bool, false)
        XCTAssertEqual(mode["modelChange"] as? Bool, false)

        // A Manual scale set under Terraform: apply updates and reimages each instance itself.
        let (_, manual) = try diff("manual-image")
        XCTAssertEqual(manual["consequences"] as? [String], ["terraformRollsEachInstance"])
        XCTAssertEqual(manual["instancesRestart"] as? Bool, true)

        // A requirement the rehearsal cannot meet is a gate: exit 1.
        let (gated, _) = try diff("rolling-image", ["--require", "deadline <= 1%"])
        XCTAssertEqual(gated, 1)
    }

    func testImportTellsTheInstanceListFromTheScaleSetInEitherOrder() throws {
        let forward = try runRehearse(["import", "Tests/Import/az-vmss-show-zonal.json", "Tests/Import/az-vmss-list-instances.json"])
        let backward = try runRehearse(["import", "Tests/Import/az-vmss-list-instances.json", "Tests/Import/az-vmss-show-zonal.json"])
        XCTAssertEqual(forward.status, 0, forward.stderr)
        XCTAssertEqual(backward.status, 0, backward.stderr)
        XCTAssertEqual(forward.stdout, backward.stdout)
        let twice = try runRehearse(["import", "Tests/Import/az-vmss-list-instances.json", "Tests/Import/az-vmss-list-instances.json"])
        XCTAssertEqual(twice.status, 2)
    }
}
