import Foundation
import XCTest

/// The Manual and Automatic starters' "rolling" alternative on a scale set with no health source:
/// the Application Health extension goes in a fifth of the fleet at a time, so the fleet never
/// drops to 0 healthy while it is installed (installed everywhere at once, all 9 instances sat
/// Initializing together), and `compare` can rate Rolling above the all-at-once rollout.
final class StarterRolloutCLITests: XCTestCase {
    func testTheRollingAlternativeInstallsTheExtensionByFifths() throws {
        let folder = NSTemporaryDirectory() + "starter-rollout-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let text = try String(contentsOfFile: repositoryRoot + "/Tests/Import/az-vmss-show-zonal.json", encoding: .utf8)
        var document = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        var profile = try XCTUnwrap(document["virtualMachineProfile"] as? [String: Any])
        var network = try XCTUnwrap(profile["networkProfile"] as? [String: Any])
        network["healthProbe"] = nil
        profile["networkProfile"] = network
        document["virtualMachineProfile"] = profile
        for mode in ["Manual", "Automatic"] {
            document["upgradePolicy"] = ["mode": mode]
            let path = "\(folder)/\(mode).json"
            try JSONSerialization.data(withJSONObject: document).write(to: URL(fileURLWithPath: path))
            let starter = try runRehearse(["import", path])
            XCTAssertEqual(starter.status, 0, starter.stderr)
            try starter.stdout.write(toFile: "\(folder)/\(mode).lua", atomically: true, encoding: .utf8)
            let run = try runRehearse(["run", "\(folder)/\(mode).lua", "--param", "rollout=rolling", "--output", "json"])
            XCTAssertEqual(run.status, 0, run.stderr)
            let record = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
            // 9 instances, ceil(9 / 5) = 2 installing at a time: 7 serve at the lowest.
            XCTAssertEqual(record["lowestHealthy"] as? Int, 7, mode)
            XCTAssertEqual(record["upgrades"] as? Int, 1, mode)
            let held = (record["expectations"] as? [[String: Any]])?.compactMap { $0["held"] as? Bool }
            XCTAssertEqual(held, [true, true, true], mode)
        }
    }
}
