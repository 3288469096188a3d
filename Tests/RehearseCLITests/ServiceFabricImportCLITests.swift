import Foundation
import XCTest

/// Service Fabric node types with Silver or Gold durability may run automatic OS image upgrades
/// without a health probe or extension (Microsoft Learn's Service Fabric requirements); Bronze
/// may not.
final class ServiceFabricImportCLITests: XCTestCase {
    func testSilverAndGoldAreExemptFromTheHealthSourceBronzeIsNot() throws {
        let fixture = "Tests/Import/rest-service-fabric-silver.json"
        let silver = try runRehearse(["validate", fixture])
        XCTAssertEqual(silver.status, 0, silver.stderr)
        let folder = try newTemporaryFolder()
        let text = try String(contentsOfFile: repositoryRoot + "/" + fixture, encoding: .utf8)
        for (level, status) in [("Gold", Int32(0)), ("Bronze", Int32(2))] {
            let path = folder + "/\(level).json"
            try text.replacingOccurrences(of: "\"durabilityLevel\": \"Silver\"", with: "\"durabilityLevel\": \"\(level)\"")
                .write(toFile: path, atomically: true, encoding: .utf8)
            let out = try runRehearse(["validate", path])
            XCTAssertEqual(out.status, status, "\(level): \(out.stderr)")
            if status == 2 { XCTAssertTrue(out.stderr.contains("enableAutomaticOSUpgrade"), out.stderr) }
        }
        // The exempt node type imports into a scenario that runs.
        let imported = try runRehearse(["import", fixture, "--save-in", folder + "/starter"])
        XCTAssertEqual(imported.status, 0, imported.stderr)
    }
}
