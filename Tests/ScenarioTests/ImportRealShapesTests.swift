import AzureWire
import Formats
import UpgradeEngine
import XCTest

/// `import` on the shapes teams' documents really have: compiled Bicep passing a nested
/// deployment's parameter as one expression (as the Azure Verified Module's main.json does),
/// resources whose condition is false, scalars written as strings that Azure accepts, list
/// documents holding one scale set, and the Unicode white space ARM's tokenizer skips.
final class ImportRealShapesTests: XCTestCase {
    func template(_ name: String) throws -> JSON {
        let text = try String(contentsOfFile: repositoryRoot + "/Tests/Import/\(name)", encoding: .utf8)
        return try JSON.parse(text, maxBytes: 16 << 20)
    }

    func testANestedDeploymentsParameterGivenAsOneExpressionIsEvaluated() throws {
        let document = try template("bicep-nested-expression-parameters.json")
        // env = prod (default): createObject('value', 'Rolling') and a capacity of 6; the
        // retired scale set's condition is false, so its unevaluable capacity is not read.
        let prod = try ScaleSetImport.read(document)
        XCTAssertEqual(prod.definition.policy.mode, .rolling)
        XCTAssertEqual(prod.definition.capacity, 6)
        XCTAssertEqual(prod.definition.name, "web")
        XCTAssertEqual(prod.definition.healthExtension?.port, 8080)
        // env = dev, and the agent deployment (its type passed the same way) deployed: Manual, 2.
        let dev = try ScaleSetImport.read(document, parameters: .object(["parameters": .object([
            "env": .object(["value": .string("dev")]), "agentConfig": .object(["value": .object(["enabled": .bool(true)])])])]))
        XCTAssertEqual(dev.definition.policy.mode, .manual)
        XCTAssertEqual(dev.definition.capacity, 2)
    }

    func testAnExtensionDeployedAsAResourceOfItsOwnIsPartOfTheModel() throws {
        // The agent (a virtualMachineScaleSets/extensions resource in a nested deployment, its
        // type passed as one expression) deployed when agentConfig.enabled: an in-place model
        // change of the Rolling scale set, as Azure adds it to the model.
        let document = try template("bicep-nested-expression-parameters.json")
        let without = try ScaleSetImport.read(document)
        let with = try ScaleSetImport.read(document, parameters: .object(["parameters": .object([
            "agentConfig": .object(["value": .object(["enabled": .bool(true)])])])]))
        let d = ScaleSetDiff(before: without, after: with)
        XCTAssertEqual(Set(d.changes.map(\.kind)), [.modelInPlace])
        XCTAssertTrue(d.changes.contains { $0.field == "virtualMachineProfile.extensionProfile.extensions[AgentLinux].type" && $0.after == "AgentLinux" })
        XCTAssertEqual(d.consequences, [.rollingUpgradeNow])
        XCTAssertFalse(d.disruptive)
    }

    func testStringsAzureReadsAsBooleansAndNumbersAreReadWithAWarning() throws {
        var document = try azDocument()
        document = setting(document, ["automaticRepairsPolicy"], .object(["enabled": .string("true"), "gracePeriod": .string("PT30M")]))
        document = setting(document, ["upgradePolicy", "rollingUpgradePolicy", "maxBatchInstancePercent"], .string("50"))
        // The health extension of a Service Fabric sample: "port": "19000".
        document = setting(document, ["virtualMachineProfile", "networkProfile", "healthProbe"], .null)
        document = setting(document, ["virtualMachineProfile", "extensionProfile"], .object(["extensions": .array([.object([
            "name": .string("health"), "properties": .object(["publisher": .string("Microsoft.ManagedServices"), "type": .string("ApplicationHealthWindows"),
                                                              "typeHandlerVersion": .string("1.0"), "settings": .object(["protocol": .string("tcp"), "port": .string("19000")])])])])]))
        let read = try ScaleSetImport.read(.object(document))
        XCTAssertEqual(read.definition.healthExtension?.port, 19000)
        XCTAssertEqual(read.definition.policy.rolling.maxBatchInstancePercent, 50)
        XCTAssertEqual(read.definition.automaticRepairs?.enabled, true)
        XCTAssertEqual(read.warnings.filter { $0.message.contains("is a string; Azure reads it") }.map(\.field),
                       ["upgradePolicy.rollingUpgradePolicy.maxBatchInstancePercent", "automaticRepairsPolicy.enabled",
                        "virtualMachineProfile.extensionProfile.extensions[0].properties.settings.port"])
    }

    func testAListHoldingOneScaleSetIsRead() throws {
        let one = try azDocument()
        // az vmss list, and a REST list page.
        for list in [JSON.array([.object(one)]), .object(["value": .array([.object(one)]), "nextLink": .null])] {
            let read = try ScaleSetImport.read(list)
            XCTAssertEqual(read.definition.name, "shop-web")
            XCTAssertEqual(read.definition.capacity, 9)
        }
        // Two: choose by name, else a problem naming both.
        let two = JSON.array([.object(one), .object(setting(one, ["name"], .string("billing")))])
        XCTAssertEqual(try ScaleSetImport.read(two, resource: "billing").definition.name, "billing")
        XCTAssertThrowsError(try ScaleSetImport.read(two)) { error in
            XCTAssertEqual((error as? ValidationFailure)?.problems.first?.allowed, ["shop-web", "billing"])
        }
    }

    func testUnicodeWhiteSpaceInAnExpressionIsSkippedAsARMSkipsIt() throws {
        // U+00A0, U+3000 and U+2003 between the tokens.
        let document = JSON.object([
            "$schema": .string("https://schema.management.azure.com/schemas/2019-04-01/deploymentTemplate.json#"), "contentVersion": .string("1.0.0.0"),
            "resources": .array([.object([
                "type": .string("Microsoft.Compute/virtualMachineScaleSets"), "name": .string("[concat(\u{00A0}'web',\u{3000}'1')]"), "location": .string("westeurope"),
                "sku": .object(["name": .string("Standard_D2s_v3"), "capacity": .string("[add(\u{2003}2,\u{00A0}3\u{00A0})]")]),
                "properties": .object(["upgradePolicy": .object(["mode": .string("Manual")])]),
            ])]),
        ])
        let read = try ScaleSetImport.read(document)
        XCTAssertEqual(read.definition.name, "web1")
        XCTAssertEqual(read.definition.capacity, 5)
    }
}
