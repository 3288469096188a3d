@testable import AzureWire
import Formats
import Foundation
import Scenario
import UpgradeEngine
import XCTest

/// What a trial on 140 new real documents found `import` getting wrong, in templates written for
/// it: a parameter the template does not declare, nullable parameters, UTF-16 and UTF-32 files,
/// a port given as a string, and a warning that claimed a scale set was lost.
final class ImportFreshDocumentTests: XCTestCase {
    static let schema = "https://schema.management.azure.com/schemas/2019-04-01/deploymentTemplate.json#"

    /// A template of one Manual scale set whose capacity is `capacity`, with `parameters` declared.
    func template(capacity: JSON, parameters: [String: JSON], languageVersion: String? = nil, resources extra: [JSON] = []) -> JSON {
        var members: [String: JSON] = [
            "$schema": .string(Self.schema), "contentVersion": .string("1.0.0.0"), "parameters": .object(parameters),
            "resources": .array([.object([
                "type": .string("Microsoft.Compute/virtualMachineScaleSets"), "apiVersion": .string("2024-07-01"), "name": .string("web"),
                "sku": .object(["name": .string("Standard_D2s_v5"), "capacity": capacity]),
                "properties": .object(["orchestrationMode": .string("Uniform"), "upgradePolicy": .object(["mode": .string("Manual")])]),
            ])] + extra),
        ]
        if let languageVersion { members["languageVersion"] = .string(languageVersion) }
        return .object(members)
    }

    func problems(_ body: () throws -> Any) -> [Problem] {
        do {
            _ = try body()
            XCTFail("no problem")
            return []
        } catch {
            return (error as? ValidationFailure)?.problems ?? []
        }
    }

    // MARK: 1. A parameter the template does not declare

    func testAParameterTheTemplateDoesNotDeclareIsRefusedAsARMRefusesIt() throws {
        let declared: [String: JSON] = ["instanceCount": .object(["type": .string("int"), "defaultValue": .int(2)]),
                                        "adminPassword": .object(["type": .string("securestring")])]
        let doc = template(capacity: .string("[parameters('instanceCount')]"), parameters: declared)
        // A misspelt name would leave the capacity at its default of 2; ARM refuses the deployment.
        let file: JSON = .object(["$schema": .string("x"), "contentVersion": .string("1.0.0.0"), "parameters": .object([
            "instanceCont": .object(["value": .int(10)]),
            "secret": .object(["reference": .object(["keyVault": .object(["id": .string("/kv")]), "secretName": .string("s")])]),
        ])])
        let found = problems { try ScaleSetImport.read(doc, parameters: file, parametersPath: "web.parameters.json") }
        XCTAssertEqual(found.map(\.field), ["parameters.instanceCont", "parameters.secret"], "one problem a name, a Key Vault reference included")
        XCTAssertEqual(found.map(\.allowed), [["adminPassword", "instanceCount"], ["adminPassword", "instanceCount"]])
        XCTAssertEqual(found.first?.place, .document(path: "web.parameters.json", field: "parameters.instanceCont"))
        // Names compare ignoring case, as ARM's do; a Key Vault reference to a declared name is given.
        let right: JSON = .object(["parameters": .object([
            "InstanceCount": .object(["value": .int(10)]),
            "adminPassword": .object(["reference": .object(["keyVault": .object(["id": .string("/kv")]), "secretName": .string("s")])]),
        ])])
        XCTAssertEqual(try ScaleSetImport.read(doc, parameters: right).definition.capacity, 10)
        // A bare map of names: $schema and contentVersion are no parameters; the field has no prefix.
        let bare: JSON = .object(["$schema": .string("x"), "contentVersion": .string("1.0.0.0"), "instanceCount": .object(["value": .int(4)]),
                                  "zones": .object(["value": .array([])])])
        let bareFound = problems { try ScaleSetImport.read(doc, parameters: bare) }
        XCTAssertEqual(bareFound.map(\.field), ["zones"])
        XCTAssertEqual(bareFound.first?.place, .document(path: nil, field: "zones"))
        // A template that declares none allows none.
        let none = problems { try ScaleSetImport.read(template(capacity: .int(3), parameters: [:]), parameters: file) }
        XCTAssertEqual(none.map(\.allowed), [[], []])
    }

    func testAScenarioNamesTheParametersFileForAParameterTheTemplateDoesNotDeclare() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("rehearse-undeclared-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let doc = template(capacity: .string("[parameters('instanceCount')]"), parameters: ["instanceCount": .object(["type": .string("int"), "defaultValue": .int(2)])])
        try doc.serialized(pretty: true).write(toFile: folder + "/web.json", atomically: true, encoding: .utf8)
        try "{ \"parameters\": { \"instanceCont\": { \"value\": 10 } } }".write(toFile: folder + "/web.parameters.json", atomically: true, encoding: .utf8)
        try "scaleset { from = \"web.json\", parameters = \"web.parameters.json\" }\n".write(toFile: folder + "/s.lua", atomically: true, encoding: .utf8)
        XCTAssertThrowsError(try ScenarioDefinition(luaScript: folder + "/s.lua", options: options())) { error in
            guard case .definition(let problems, _)? = error as? ScenarioError else { return XCTFail("\(error)") }
            XCTAssertEqual(problems.map(\.field), ["scaleset.parameters web.parameters.json: parameters.instanceCont"])
            XCTAssertEqual(problems.first?.allowed, ["instanceCount"])
        }
    }

    // MARK: 2. Nullable parameters

    func testANullableParameterWithNoValueAndNoDefaultIsNull() throws {
        let nullable: JSON = .object(["type": .string("int"), "nullable": .bool(true)])
        let doc = template(capacity: .string("[coalesce(parameters('capacity'), 3)]"), parameters: ["capacity": nullable], languageVersion: "2.0")
        XCTAssertEqual(try ScaleSetImport.read(doc).definition.capacity, 3, "coalesce(null, 3)")
        XCTAssertEqual(try ScaleSetImport.read(doc, parameters: .object(["parameters": .object(["capacity": .object(["value": .int(7)])])])).definition.capacity, 7)
        let defaulted: JSON = .object(["type": .string("int"), "nullable": .bool(true), "defaultValue": .int(5)])
        XCTAssertEqual(try ScaleSetImport.read(template(capacity: .string("[coalesce(parameters('capacity'), 3)]"), parameters: ["capacity": defaulted])).definition.capacity, 5)
        // Not nullable: still missing, the problem at the parameter.
        let required = template(capacity: .string("[coalesce(parameters('capacity'), 3)]"), parameters: ["capacity": .object(["type": .string("int")])])
        XCTAssertEqual(problems { try ScaleSetImport.read(required) }.map(\.field), ["parameters.capacity"])
        // A nullable object (typed by a definition, or plain) decides a nested deployment's
        // condition: empty(null) is true, so neither deployment is deployed and nothing warns.
        let child: JSON = .object(["type": .string("Microsoft.Resources/deployments"), "name": .string("child"),
                                   "condition": .string("[not(empty(parameters('typedOptional')))]"),
                                   "properties": .object(["mode": .string("Incremental"), "template": .object(["resources": .array([])])])])
        var withChild = template(capacity: .int(4), parameters: [
            "typedOptional": .object(["$ref": .string("#/definitions/cfg"), "nullable": .bool(true)]),
        ], languageVersion: "2.0", resources: [child]).object!
        withChild["definitions"] = .object(["cfg": .object(["type": .string("object")])])
        let imported = try ScaleSetImport.read(.object(withChild))
        XCTAssertEqual(imported.definition.capacity, 4)
        XCTAssertEqual(imported.warnings, [])
    }

    // MARK: 3. UTF-16 and UTF-32 with a byte-order mark; Bicep

    func file(_ bytes: [UInt8], _ name: String) throws -> String {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("rehearse-encoding-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        addTeardownBlock { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/" + name
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return path
    }

    func refusal(_ path: String) -> JSONDocument.Refusal? {
        do {
            _ = try JSONDocument.read(path)
            return nil
        } catch {
            return error
        }
    }

    func testUTF16AndUTF32WithAByteOrderMarkAreReadAsAzReadsThem() throws {
        // A character past the BMP (a surrogate pair in UTF-16) and one past ASCII in a string.
        let text = "{ \"parameters\": { \"instanceCount\": { \"value\": 6 }, \"owner\": { \"value\": \"Zoë 🚀\" } } }"
        let expected = try JSON.parse(text)
        let utf16 = Array(text.utf16)
        let utf32 = text.unicodeScalars.map(\.value)
        let encodings: [(String, [UInt8])] = [
            ("le16", [0xFF, 0xFE] + utf16.flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] }),
            ("be16", [0xFE, 0xFF] + utf16.flatMap { [UInt8($0 >> 8), UInt8($0 & 0xFF)] }),
            ("le32", [0xFF, 0xFE, 0, 0] + utf32.flatMap { v in (0..<4).map { UInt8((v >> (8 * $0)) & 0xFF) } }),
            ("be32", [0, 0, 0xFE, 0xFF] + utf32.flatMap { v in (0..<4).reversed().map { UInt8((v >> (8 * $0)) & 0xFF) } }),
            ("utf8", [0xEF, 0xBB, 0xBF] + Array(text.utf8)),
        ]
        let doc = template(capacity: .string("[parameters('instanceCount')]"), parameters: [
            "instanceCount": .object(["type": .string("int")]), "owner": .object(["type": .string("string")]),
        ])
        for (name, bytes) in encodings {
            let read = try JSONDocument.read(try file(bytes, name + ".json"))
            XCTAssertEqual(read, expected, name)
            XCTAssertEqual(try ScaleSetImport.read(doc, parameters: read).definition.capacity, 6, name)
        }
        // The mark, then bytes that are not text in it: an odd byte, an unpaired surrogate.
        let odd = try file([0xFF, 0xFE, 0x7B, 0x00, 0x7D], "odd.json")
        XCTAssertEqual(refusal(odd)?.notJSON, .badEncoding(.utf16LittleEndian, byteOffset: 4))
        let lone = try file([0xFF, 0xFE, 0x7B, 0x00, 0x00, 0xD8, 0x7D, 0x00], "lone.json")
        XCTAssertEqual(refusal(lone)?.notJSON, .badEncoding(.utf16LittleEndian, byteOffset: 4))
        let beyond = try file([0, 0, 0xFE, 0xFF, 0, 0x11, 0, 0], "beyond.json")
        XCTAssertEqual(refusal(beyond)?.notJSON, .badEncoding(.utf32BigEndian, byteOffset: 4), "U+110000 is no scalar")
    }

    func testUTF16WithoutAMarkAndBicepAreRefusedSayingWhatTheyAre() throws {
        let text = "{ \"parameters\": {} }"
        let le = try file(Array(text.utf16).flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] }, "le.json")
        XCTAssertEqual(refusal(le)?.notJSON, .withoutByteOrderMark(.utf16LittleEndian))
        let be = try file(Array(text.utf16).flatMap { [UInt8($0 >> 8), UInt8($0 & 0xFF)] }, "be.json")
        XCTAssertEqual(refusal(be)?.notJSON, .withoutByteOrderMark(.utf16BigEndian))
        let le32 = try file(text.unicodeScalars.flatMap { v in (0..<4).map { UInt8((v.value >> (8 * $0)) & 0xFF) } }, "le32.json")
        XCTAssertEqual(refusal(le32)?.notJSON, .withoutByteOrderMark(.utf32LittleEndian))
        let bicep = "// web tier\nparam instanceCount int = 2\n\nresource vmss 'Microsoft.Compute/virtualMachineScaleSets@2024-07-01' = {\n  name: 'web'\n}\n"
        XCTAssertEqual(refusal(try file(Array(bicep.utf8), "main.json"))?.notJSON, .bicep, "param and resource lines")
        XCTAssertEqual(refusal(try file(Array("{ \"a\": ".utf8), "main.bicep"))?.notJSON, .bicep, "the name says so")
        // Broken JSON is still only broken JSON, with its line and column.
        let broken = refusal(try file(Array("{\n  \"resources\": [,]\n}".utf8), "broken.json"))
        XCTAssertNotNil(broken)
        XCTAssertNil(broken?.notJSON)
        XCTAssertNil(refusal(try file(Array("parameters: none\nresources: none\n".utf8), "notes.json"))?.notJSON, "no param or resource line")
    }

    // MARK: 4. One problem for one fault; a warning that says what is lost only when it is

    func testAPortGivenAsAStringIsOneProblemNotAlsoAMissingPort() throws {
        let settings: JSON = .object(["protocol": .string("tcp"), "port": .string("19000")])
        let found = problems { try HealthExtensionSettings.parse(settings) }
        XCTAssertEqual(found.map(\.field), ["healthExtension.port"])
        // Without a port, tcp still needs one.
        XCTAssertEqual(problems { try HealthExtensionSettings.parse(.object(["protocol": .string("tcp")])) }.map(\.field), ["healthExtension.port"])
        XCTAssertEqual(try HealthExtensionSettings.parse(.object(["protocol": .string("tcp"), "port": .int(19000)])).0.port, 19000)
    }

    func testAnUnreadDeploymentIsSaidToLoseAScaleSetOnlyWhenItHoldsOne() throws {
        func deployment(_ name: String, _ template: JSON?) -> JSON {
            var properties: [String: JSON] = ["mode": .string("Incremental")]
            if let template { properties["template"] = template } else { properties["templateLink"] = .object(["uri": .string("https://example.com/t.json")]) }
            return .object(["type": .string("Microsoft.Resources/deployments"), "name": .string(name),
                            "condition": .string("[reference('flag').enabled]"), "properties": .object(properties)])
        }
        let scaleSet: JSON = .object(["type": .string("Microsoft.Compute/virtualMachineScaleSets"), "name": .string("inner")])
        let ext: JSON = .object(["type": .string("Microsoft.Compute/virtualMachineScaleSets/extensions"), "name": .string("web/cse")])
        let extensionOnly = deployment("extension", .object(["resources": .array([ext])]))
        let holding = deployment("holding", .object(["resources": .object(["inner": scaleSet])]))
        let nested = deployment("nested", .object(["resources": .array([deployment("deeper", .object(["resources": .array([ext, scaleSet])]))])]))
        let linked = deployment("linked", nil)
        let computed = deployment("computed", .object(["resources": .array([.object(["type": .string("[variables('type')]")])])]))
        XCTAssertEqual([extensionOnly, holding, nested, linked, computed].map { ARMTemplate.holdsScaleSet($0) }, [false, true, true, nil, nil])
        // An inline template that is an expression may hold one.
        XCTAssertNil(ARMTemplate.holdsScaleSet(deployment("expression", .string("[variables('t')]"))))
        // The scale set is read; each deployment warns at its condition, and only those that
        // hold (or may hold) a scale set are said to lose one.
        let imported = try ScaleSetImport.read(template(capacity: .int(2), parameters: [:], resources: [extensionOnly, holding, linked]))
        XCTAssertEqual(imported.definition.capacity, 2)
        XCTAssertEqual(imported.warnings.map(\.field), ["resources[1].condition", "resources[2].condition", "resources[3].condition"])
        let doc = template(capacity: .int(2), parameters: [:], resources: [extensionOnly, holding, linked])
        let scope = ARMScope(template: doc, path: "", given: [:])
        var candidates: [ARMTemplate.Candidate] = []
        var found: [Problem] = [], undeclared: [Problem] = []
        var unread: [ARMTemplate.Unread] = []
        ARMTemplate.collect(doc, scope: scope, copy: [:], prefix: "", ARMEvaluator(scope: scope, context: ARMDeploymentContext()), nesting: 0,
                            into: &candidates, problems: &found, undeclared: &undeclared, unread: &unread)
        XCTAssertEqual(unread.map(\.holdsScaleSet), [false, true, nil])
        XCTAssertEqual(unread.map(\.warning.field), imported.warnings.map(\.field))
    }

    // MARK: 5. An autoscale setting beside the scale set

    func testAnAutoscaleSettingIsAWarningThatTheCapacityIsKept() throws {
        let autoscale: JSON = .object(["type": .string("Microsoft.Insights/autoscalesettings"), "apiVersion": .string("2022-10-01"),
                                       "name": .string("web-autoscale"), "properties": .object([
                                           "profiles": .array([.object(["capacity": .object(["minimum": .string("1"), "maximum": .string("10"),
                                                                                             "default": .string("1")])])]),
                                       ])])
        // One beside the scale set, one in a nested deployment's inline template.
        let nested: JSON = .object(["type": .string("Microsoft.Resources/deployments"), "apiVersion": .string("2022-09-01"), "name": .string("scaling"),
                                    "properties": .object(["mode": .string("Incremental"), "template": .object(["resources": .array([autoscale])])])])
        let imported = try ScaleSetImport.read(template(capacity: .int(3), parameters: [:], resources: [autoscale, nested]))
        XCTAssertEqual(imported.definition.capacity, 3)
        XCTAssertEqual(imported.warnings.map(\.field), ["resources[1]", "resources[2].properties.template.resources[0]"])
        // Without one, or with one whose condition is false (nothing deployed), no such warning.
        XCTAssertEqual(try ScaleSetImport.read(template(capacity: .int(3), parameters: [:])).warnings.map(\.field), [])
        guard case .object(var off) = autoscale, case .object(var properties)? = autoscale.member("properties") else { return XCTFail("an object") }
        off["condition"] = .bool(false)
        XCTAssertEqual(try ScaleSetImport.read(template(capacity: .int(3), parameters: [:], resources: [.object(off)])).warnings.map(\.field), [])
        // A target written out: this scale set (any case) is warned; another one, or an App
        // Service plan, is not; an expression may name this one, so it is warned.
        func warned(_ target: String) throws -> Bool {
            var setting = autoscale.object ?? [:]
            properties["targetResourceUri"] = .string(target)
            setting["properties"] = .object(properties)
            return try !ScaleSetImport.read(template(capacity: .int(3), parameters: [:], resources: [.object(setting)])).warnings.isEmpty
        }
        let group = "/subscriptions/0000/resourceGroups/g/providers/"
        XCTAssertTrue(try warned(group + "Microsoft.Compute/virtualMachineScaleSets/WEB"))
        XCTAssertFalse(try warned(group + "Microsoft.Compute/virtualMachineScaleSets/api"))
        XCTAssertFalse(try warned(group + "Microsoft.Web/serverfarms/plan"))
        XCTAssertTrue(try warned("[resourceId('Microsoft.Compute/virtualMachineScaleSets', 'web')]"))
    }
}
