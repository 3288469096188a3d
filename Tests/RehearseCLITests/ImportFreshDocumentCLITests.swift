import Foundation
import XCTest

/// `rehearse validate` and `import` on what a trial of new real documents brought: a
/// parameters file saved as UTF-16 with its byte-order mark, one that gives a parameter the
/// template does not declare, and a Bicep file given where JSON is read.
final class ImportFreshDocumentCLITests: XCTestCase {
    func testUTF16ParametersAnUndeclaredParameterAndABicepFile() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("rehearse-fresh-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let template = """
            {"$schema": "https://schema.management.azure.com/schemas/2019-04-01/deploymentTemplate.json#", "contentVersion": "1.0.0.0",
             "parameters": {"instanceCount": {"type": "int", "defaultValue": 2}},
             "resources": [{"type": "Microsoft.Compute/virtualMachineScaleSets", "name": "web", "sku": {"capacity": "[parameters('instanceCount')]"},
                            "properties": {"upgradePolicy": {"mode": "Manual"}}}]}
            """
        try template.write(toFile: folder + "/web.json", atomically: true, encoding: .utf8)
        // UTF-16 LE with its mark, as Windows tools save a parameters file.
        let given = "{ \"parameters\": { \"instanceCount\": { \"value\": 7 } } }"
        try Data([0xFF, 0xFE] + given.utf16.flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] }).write(to: URL(fileURLWithPath: folder + "/utf16.parameters.json"))
        let read = try runRehearse(["validate", "web.json", "--parameters", "utf16.parameters.json", "--output", "json"], in: folder)
        XCTAssertEqual(read.status, 0, read.stderr)
        let fields = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(read.stdout.utf8)) as? [String: Any])
        XCTAssertEqual(fields["capacity"] as? Int, 7)
        // A misspelt name: exit 2, placed in the parameters file.
        try "{ \"parameters\": { \"instanceCont\": { \"value\": 10 } } }".write(toFile: folder + "/typo.parameters.json", atomically: true, encoding: .utf8)
        let typo = try runRehearse(["import", "web.json", "--parameters", "typo.parameters.json"], in: folder)
        XCTAssertEqual(typo.status, 2)
        XCTAssertTrue(typo.stderr.contains("typo.parameters.json: parameters.instanceCont:"), typo.stderr)
        XCTAssertEqual(typo.stdout, "")
        // A Bicep file: exit 2 naming the file.
        try "param instanceCount int = 2\nresource vmss 'Microsoft.Compute/virtualMachineScaleSets@2024-07-01' = {\n  name: 'web'\n}\n"
            .write(toFile: folder + "/main.bicep", atomically: true, encoding: .utf8)
        let bicep = try runRehearse(["import", "main.bicep"], in: folder)
        XCTAssertEqual(bicep.status, 2)
        XCTAssertTrue(bicep.stderr.contains("main.bicep:"), bicep.stderr)
        // validate reads it as a document too (not as a Lua script with a syntax error).
        let validated = try runRehearse(["validate", "main.bicep"], in: folder)
        XCTAssertEqual(validated.status, 2)
        XCTAssertTrue(validated.stderr.contains("az bicep build --file main.bicep"), validated.stderr)
    }
}
