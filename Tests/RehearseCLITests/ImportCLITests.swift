import Foundation
import XCTest

/// `rehearse import`, `validate` and `run` on the documents teams already have.
final class ImportCLITests: XCTestCase {
    func testEachDocumentValidatesImportsAndRuns() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("rehearse-import-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        for name in ["az-vmss-show-zonal.json", "az-vmss-list-instances.json", "arm-flexible-health-extension.json", "arm-flexible.parameters.json",
                     "bicep-symbolic-maxsurge.json", "terraform-plan.json"] {
            try FileManager.default.copyItem(atPath: repositoryRoot + "/Tests/Import/" + name, toPath: folder + "/" + name)
        }
        let cases: [(String, [String])] = [("az-vmss-show-zonal.json", []), ("az-vmss-show-zonal.json", ["az-vmss-list-instances.json"]), ("arm-flexible-health-extension.json", ["--parameters", "arm-flexible.parameters.json"]),
                                           ("bicep-symbolic-maxsurge.json", []), ("terraform-plan.json", [])]
        for (document, extra) in cases {
            for file in [document] + extra where file.hasSuffix(".json") && !file.contains("parameters") {
                let validated = try runRehearse(["validate", file] + (extra.first == "--parameters" ? extra : []), in: folder)
                XCTAssertEqual(validated.status, 0, "\(file): \(validated.stderr)")
            }
            let imported = try runRehearse(["import", document] + extra, in: folder)
            XCTAssertEqual(imported.status, 0, "\(document): \(imported.stderr)")
            let script = folder + "/" + document.replacingOccurrences(of: ".json", with: "-\(extra.count).lua")
            try imported.stdout.write(toFile: script, atomically: true, encoding: .utf8)
            let run = try runRehearse(["run", script, "--json"], in: folder)
            XCTAssertEqual(run.status, 0, "\(document): \(run.stderr)")
            let status = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
            XCTAssertEqual((status["runningStatus"] as? [String: Any])?["code"] as? String, "Completed", document)
        }
    }

    func testADocumentWithAWrongTypeFailsNamingThePath() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("rehearse-import-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        var text = try String(contentsOfFile: repositoryRoot + "/Tests/Import/az-vmss-show-zonal.json", encoding: .utf8)
        text = text.replacingOccurrences(of: "\"maxBatchInstancePercent\": 34", with: "\"maxBatchInstancePercent\": 340")
        text = text.replacingOccurrences(of: "\"capacity\": 9", with: "\"capacity\": \"nine\"")
        try text.write(toFile: folder + "/vmss.json", atomically: true, encoding: .utf8)
        let out = try runRehearse(["validate", "vmss.json"], in: folder)
        XCTAssertEqual(out.status, 2)
        XCTAssertTrue(out.stderr.contains("vmss.json: upgradePolicy.rollingUpgradePolicy.maxBatchInstancePercent: 340 is out of range"), out.stderr)
        XCTAssertTrue(out.stderr.contains("vmss.json: sku.capacity"), out.stderr)
        let imported = try runRehearse(["import", "vmss.json"], in: folder)
        XCTAssertEqual(imported.status, 2)
        XCTAssertEqual(imported.stdout, "")
    }

    /// `--output json`: what the document says, its warnings and the scenario, for a program; an
    /// instance list given alone is refused with exit 2 and nothing on standard output.
    func testImportPrintsJSONForAProgramAndRefusesAnInstanceListAlone() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("rehearse-import-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        for name in ["az-vmss-show-zonal.json", "az-vmss-list-instances.json"] {
            try FileManager.default.copyItem(atPath: repositoryRoot + "/Tests/Import/" + name, toPath: folder + "/" + name)
        }
        let json = try runRehearse(["import", "az-vmss-show-zonal.json", "--output", "json"], in: folder)
        XCTAssertEqual(json.status, 0, json.stderr)
        let object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        let document = try XCTUnwrap(object["document"] as? [String: Any])
        XCTAssertEqual(document["capacity"] as? Int, 9)
        XCTAssertEqual(document["maxBatchInstancePercent"] as? Int, 34)
        XCTAssertEqual(document["file"] as? String, "az-vmss-show-zonal.json")
        XCTAssertEqual((object["warnings"] as? [Any])?.count, 0)
        // The scenario is the text import prints, and it runs.
        let text = try runRehearse(["import", "az-vmss-show-zonal.json"], in: folder)
        XCTAssertEqual(object["scenario"] as? String, text.stdout)
        let table = try runRehearse(["import", "az-vmss-show-zonal.json", "--output", "table"], in: folder)
        XCTAssertEqual(table.status, 2)
        let alone = try runRehearse(["import", "az-vmss-list-instances.json"], in: folder)
        XCTAssertEqual(alone.status, 2)
        XCTAssertEqual(alone.stdout, "")
    }
}
