import Foundation
import XCTest

/// `rehearse import` → `plan` → `run` of the document shapes issue 30 lists, and the hostile
/// templates of issue 27 through the command line: exit codes, JSON fields, no signal.
final class ARMImportCLITests: XCTestCase {
    /// A fresh folder holding copies of the named fixtures.
    func folder(_ fixtures: [String]) throws -> String {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("rehearse-armcli-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder + "/docs", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: folder + "/scenarios", withIntermediateDirectories: true)
        for name in fixtures { try FileManager.default.copyItem(atPath: repositoryRoot + "/Tests/Import/" + name, toPath: folder + "/docs/" + name) }
        return folder
    }

    func json(_ text: String) throws -> [String: Any] {
        try XCTUnwrap(JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
    }

    func testEachShapeImportsPlansAndRunsWithTheBatchesItImplies() throws {
        let folder = try folder(["az-vmss-show-typepropertiestype.json", "bicep-module-nested.json", "bicep-module.parameters.json",
                                 "rest-example-create.json", "rest-list-instances-page.json", "arm-copy-per-zone.json"])
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let cases: [(arguments: [String], batchSizes: [Int], mode: String)] = [
            (["docs/az-vmss-show-typepropertiestype.json"], [2, 2, 2], "Rolling"),
            (["docs/bicep-module-nested.json", "--parameters", "docs/bicep-module.parameters.json"], [2, 2, 2], "Rolling"),
            (["docs/rest-example-create.json"], [], "Manual"),
            (["docs/az-vmss-show-typepropertiestype.json", "docs/rest-list-instances-page.json"], [2, 2, 2], "Rolling"),
        ]
        for (i, c) in cases.enumerated() {
            // Saved in another folder than the documents: `from` is written relative to it.
            let imported = try runRehearse(["import"] + c.arguments + ["--save-in", "scenarios"], in: folder)
            XCTAssertEqual(imported.status, 0, "\(c.arguments): \(imported.stderr)")
            let script = "scenarios/s\(i).lua"
            try imported.stdout.write(toFile: folder + "/" + script, atomically: true, encoding: .utf8)
            let run = try runRehearse(["run", script, "--output", "json"], in: folder)
            XCTAssertEqual(run.status, 0, "\(c.arguments): \(run.stderr)")
            let outcome = try json(run.stdout)
            XCTAssertEqual((outcome["expectations"] as? [[String: Any]])?.allSatisfy { $0["held"] as? Bool == true }, true, "\(c.arguments)")
            let plan = try runRehearse(["plan", script, "--json"], in: folder)
            XCTAssertEqual(plan.status, 0, "\(c.arguments): \(plan.stderr)")
            let batches = try json(plan.stdout)["batches"] as? [[String: Any]] ?? []
            if c.mode == "Rolling" { XCTAssertEqual(batches.map { ($0["instances"] as? [Any])?.count ?? 0 }, c.batchSizes, "\(c.arguments)") }
        }
        // The copy loop's three scale sets: one a zone, each chosen by name.
        let refused = try runRehearse(["import", "docs/arm-copy-per-zone.json"], in: folder)
        XCTAssertEqual(refused.status, 2)
        XCTAssertEqual(refused.stdout, "")
    }

    func testValidateReadsListPagesAndAPIExamples() throws {
        let folder = try folder(["rest-list-instances-page.json", "rest-example-create.json"])
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let page = try runRehearse(["validate", "docs/rest-list-instances-page.json", "--output", "json"], in: folder)
        XCTAssertEqual(page.status, 0, page.stderr)
        XCTAssertEqual(try json(page.stdout)["kind"] as? String, "instance list")
        XCTAssertEqual(try json(page.stdout)["instances"] as? Int, 6)
        let example = try runRehearse(["validate", "docs/rest-example-create.json", "--output", "json"], in: folder)
        XCTAssertEqual(example.status, 0, example.stderr)
        XCTAssertEqual(try json(example.stdout)["kind"] as? String, "REST API example")
        XCTAssertEqual(try json(example.stdout)["capacity"] as? Int, 3)
    }

    func testHostileTemplatesExitTwoWithoutASignal() throws {
        let folder = try folder([])
        defer { try? FileManager.default.removeItem(atPath: folder) }
        func template(_ parameters: String, _ variables: String) -> String {
            """
            {"$schema": "https://schema.management.azure.com/schemas/2019-04-01/deploymentTemplate.json#", "contentVersion": "1.0.0.0",
             "parameters": {\(parameters)}, "variables": {\(variables)},
             "resources": [{"type": "Microsoft.Compute/virtualMachineScaleSets", "name": "web", "sku": {"capacity": "[parameters('a')]"},
                            "properties": {"upgradePolicy": {"mode": "Manual"}}}]}
            """
        }
        let chain = (0..<20_000).map { "\"v\($0)\": \"[variables('v\($0 + 1)')]\"" }.joined(separator: ",") + ", \"v20000\": 1"
        let documents = [
            "cycle.json": template("\"a\": {\"type\": \"int\", \"defaultValue\": \"[parameters('b')]\"}, \"b\": {\"type\": \"int\", \"defaultValue\": \"[parameters('a')]\"}", ""),
            "self.json": template("\"a\": {\"type\": \"int\", \"defaultValue\": \"[parameters('a')]\"}", ""),
            "chain.json": template("\"a\": {\"type\": \"int\", \"defaultValue\": \"[variables('v0')]\"}", chain),
        ]
        for (name, text) in documents.sorted(by: { $0.key < $1.key }) {
            try text.write(toFile: folder + "/" + name, atomically: true, encoding: .utf8)
            for command in ["import", "validate"] {
                let start = Date()
                let out = try runRehearse([command, name], in: folder)
                XCTAssertEqual(out.status, 2, "\(command) \(name): \(out.stderr)")
                XCTAssertTrue(out.stderr.contains("\(name): parameters.a") || out.stderr.contains("\(name): variables.v"), "\(command) \(name): \(out.stderr)")
                XCTAssertLessThan(Date().timeIntervalSince(start), 15)
            }
        }
        try "scaleset { from = \"chain.json\" }\n".write(toFile: folder + "/s.lua", atomically: true, encoding: .utf8)
        XCTAssertEqual(try runRehearse(["run", "s.lua"], in: folder).status, 2)
    }
}
