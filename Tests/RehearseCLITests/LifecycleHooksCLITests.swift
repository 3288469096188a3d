import Foundation
import XCTest

/// `run --output json` of a scenario with a batch hook: the lifecycle hook figures (SPEC §6b).
final class LifecycleHooksCLITests: XCTestCase {
    func rehearse(_ arguments: String...) throws -> CLIOutput { try runRehearse(arguments) }

    /// scripts/lifecycle-hooks.lua: 10 instances, batches of 2, each event answered 12 minutes
    /// after it is raised (5 × 720 s = 3,600 s of waiting), instance 3 rejected.
    func testRunJSONCarriesTheHookWaitAndTheRejectedInstance() throws {
        let out = try rehearse("run", "--output", "json", "scripts/lifecycle-hooks.lua")
        XCTAssertEqual(out.status, 0, out.stderr)
        let doc = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(out.stdout.utf8)) as? [String: Any])
        let hooks = try XCTUnwrap(doc["lifecycleHooks"] as? [String: Any])
        XCTAssertEqual(hooks["events"] as? Int, 5)
        XCTAssertEqual(hooks["batchWaitSeconds"] as? [Int], [720, 720, 720, 720, 720])
        XCTAssertEqual(hooks["totalBatchWaitSeconds"] as? Int, 3600)
        XCTAssertEqual(hooks["rejected"] as? [Int], [3])
        XCTAssertEqual(hooks["defaultedEvents"] as? Int, 0)
        let behind = try XCTUnwrap(doc["leftBehind"] as? [[String: Any]])
        XCTAssertEqual(behind.map { $0["id"] as? Int }, [3])
        XCTAssertEqual(behind.map { $0["reason"] as? String }, ["rejectedByHook"])
    }
}
