import AzureWire
import Formats
import Scenario
import UpgradeEngine
import XCTest

/// `ChangeClassifier`'s table against whole documents: every part of `virtualMachineProfile`
/// that differs is a model change (Azure rolls it out through the upgrade policy), zones are added
/// in place, and the rest is scale-set level, policy, capacity or tags. The base is an `az vmss
/// show` document of a 9-instance Rolling scale set in zones 1–3.
final class ChangeClassifierTests: XCTestCase {
    func testEveryPartOfTheVMProfileIsAModelChangeThatStartsARollingUpgrade() throws {
        let base = try azDocument()
        let profile = ["virtualMachineProfile"]
        let cases: [(String, [String], JSON, ChangeClass)] = [
            ("custom data", profile + ["osProfile", "customData"], .string("IyEvYmluL2Jhc2gKZWNobyB2Mg=="), .modelRestart),
            ("load balancer pool", profile + ["networkProfile", "networkInterfaceConfigurations"],
             .array([.object(["name": .string("nic"), "primary": .bool(true), "ipConfigurations": .array([.object([
                "name": .string("ip"), "loadBalancerBackendAddressPools": .array([.object(["id": .string("/subscriptions/0/resourceGroups/g/providers/Microsoft.Network/loadBalancers/lb/backendAddressPools/other")])])])])])]),
             .modelRestart),
            ("health probe", profile + ["networkProfile", "healthProbe", "id"],
             .string("/subscriptions/0/resourceGroups/g/providers/Microsoft.Network/loadBalancers/lb/probes/tcp"), .modelRestart),
            ("data disk", profile + ["storageProfile", "dataDisks"], .array([.object(["lun": .int(0), "diskSizeGB": .int(64), "createOption": .string("Empty")])]), .modelInPlace),
            ("security", profile + ["securityProfile", "encryptionAtHost"], .bool(true), .modelRestart),
            ("boot diagnostics", profile + ["diagnosticsProfile", "bootDiagnostics", "enabled"], .bool(false), .modelRestart),
        ]
        for (name, path, value, kind) in cases {
            let d = try diffOf(base, setting(base, path, value))
            XCTAssertTrue(d.modelChange, name)
            XCTAssertTrue(d.changes.allSatisfy { $0.kind == kind }, "\(name): \(d.changes.map { "\($0.field) \($0.kind)" })")
            XCTAssertEqual(d.consequences, [.rollingUpgradeNow], name)
            XCTAssertFalse(d.changes.contains { $0.source.isEmpty || $0.why.isEmpty }, name)
        }
    }

    func testAnotherExtensionAddedOrReconfiguredIsAnInPlaceModelChange() throws {
        let base = try azDocument()
        // The base has no extension (its health source is the load balancer's probe).
        XCTAssertEqual(base["virtualMachineProfile"]?.member("extensionProfile"), .null)
        var extensions: [JSON] = []
        let count = 0
        extensions.append(.object(["name": .string("agent"), "publisher": .string("Microsoft.Azure.Monitor"), "typePropertiesType": .string("AzureMonitorLinuxAgent"),
                                   "typeHandlerVersion": .string("1.0"), "settings": .object(["level": .string("info")])]))
        let added = try diffOf(base, setting(base, ["virtualMachineProfile", "extensionProfile", "extensions"], .array(extensions)))
        XCTAssertTrue(added.changes.allSatisfy { $0.kind == .modelInPlace && $0.field.hasPrefix("virtualMachineProfile.extensionProfile.extensions[agent]") })
        XCTAssertEqual(added.consequences, [.rollingUpgradeNow])
        XCTAssertFalse(added.disruptive)
        XCTAssertNotNil(added.modelChanges["extensions"])
        // Its settings changed once it is there.
        let withAgent = setting(base, ["virtualMachineProfile", "extensionProfile", "extensions"], .array(extensions))
        extensions[count] = .object(["name": .string("agent"), "publisher": .string("Microsoft.Azure.Monitor"), "typePropertiesType": .string("AzureMonitorLinuxAgent"),
                                     "typeHandlerVersion": .string("1.0"), "settings": .object(["level": .string("debug")])])
        let settings = try diffOf(withAgent, setting(base, ["virtualMachineProfile", "extensionProfile", "extensions"], .array(extensions)))
        XCTAssertEqual(settings.changes.map(\.field), ["virtualMachineProfile.extensionProfile.extensions[agent].settings.level"])
        XCTAssertEqual(settings.changes.first?.before, "info")
        XCTAssertEqual(settings.changes.first?.after, "debug")
    }

    func testZonesAddedAreInPlaceAndTheRestIsScaleSetLevel() throws {
        let base = try azDocument()
        // Zone 4 added (api 2023-03-01+): in place, not a replacement.
        let zones = try diffOf(base, setting(base, ["zones"], .array(["1", "2", "3", "4"].map(JSON.string))))
        XCTAssertEqual(zones.changes.map(\.kind), [.zonesAdded])
        XCTAssertEqual(zones.consequences, [.zonesAddedInPlace])
        XCTAssertEqual(zones.replacedBy, [])
        let tags = try diffOf(base, setting(base, ["tags", "team"], .string("payments")))
        XCTAssertEqual(tags.changes.map(\.kind), [.tags])
        XCTAssertEqual(tags.consequences, [.scaleSetOnly])
        let repairs = try diffOf(base, setting(base, ["automaticRepairsPolicy", "gracePeriod"], .string("PT45M")))
        XCTAssertEqual(repairs.changes.map(\.kind), [.scaleSetLevel])
        XCTAssertEqual(repairs.consequences, [.scaleSetOnly])
        let policy = try diffOf(base, setting(base, ["upgradePolicy", "rollingUpgradePolicy", "maxBatchInstancePercent"], .int(50)))
        XCTAssertEqual(policy.changes.map(\.kind), [.policy])
        XCTAssertEqual(policy.consequences, [.nextUpgradePolicyOnly])
        // What the platform writes is no change.
        XCTAssertEqual(try diffOf(base, setting(base, ["provisioningState"], .string("Updating"))).consequences, [.none])
    }

    func testARESTResourceAndAnAzDocumentCompareAlike() throws {
        // The REST shape nests properties at every level; az flattens them: one custom data change either way.
        let base = try azDocument()
        let rest = JSON.object(["name": base["name"]!, "location": base["location"]!, "sku": base["sku"]!, "zones": base["zones"]!,
                                "properties": .object(["upgradePolicy": base["upgradePolicy"]!, "virtualMachineProfile": base["virtualMachineProfile"]!])])
        let changed = setting(base, ["virtualMachineProfile", "osProfile", "customData"], .string("djI="))
        let old = try ScaleSetImport.read(rest), new = try ScaleSetImport.read(.object(changed))
        let d = ScaleSetDiff(before: old, after: new)
        XCTAssertTrue(d.changes.contains { $0.field == "virtualMachineProfile.osProfile.customData" && $0.kind == .modelRestart })
        XCTAssertTrue(d.changes.contains { $0.kind.isModel })
    }

    func testAnotherScaleSetIsNamed() throws {
        let base = try azDocument()
        let other = try imported(setting(setting(base, ["name"], .string("billing")), ["location"], .string("northeurope")))
        XCTAssertEqual(ScaleSetDiff.otherScaleSet(before: try imported(base), after: other), "name shop-web → billing, location westeurope → northeurope")
        // "West Europe" is westeurope.
        XCTAssertNil(ScaleSetDiff.otherScaleSet(before: try imported(base), after: try imported(setting(base, ["location"], .string("West Europe")))))
    }

    func testTerraformZonesAddedUnderUpdateAndAReplacementForItsRealReason() throws {
        let text = try String(contentsOfFile: repositoryRoot + "/Tests/Import/terraform-change-rolling-image.json", encoding: .utf8)
        guard case .object(var plan) = try JSON.parse(text, maxBytes: 16 << 20), case .array(var changes)? = plan["resource_changes"],
              case .object(var change) = changes[0], case .object(var body)? = change["change"], case .object(var after)? = body["after"],
              case .object(let before)? = body["before"] else { return XCTFail("fixture") }
        // Zones 1, 2 → 1, 2, 3 with actions ["update"]: in place.
        var old = before, new = before
        old["zones"] = .array([.string("1"), .string("2")])
        new["zones"] = .array([.string("1"), .string("2"), .string("3")])
        func diffFor(_ b: [String: JSON], _ a: [String: JSON], _ actions: [String]) throws -> ScaleSetDiff {
            body["before"] = .object(b)
            body["after"] = .object(a)
            body["actions"] = .array(actions.map(JSON.string))
            change["change"] = .object(body)
            changes[0] = .object(change)
            plan["resource_changes"] = .array(changes)
            let c = try ScaleSetImport.terraformChange(.object(plan), resource: nil)
            return ScaleSetDiff(before: c.before!, after: c.after!, actions: c.actions)
        }
        let added = try diffFor(old, new, ["update"])
        XCTAssertEqual(added.consequences, [.zonesAddedInPlace])
        // upgrade_mode changed, zones unchanged, actions delete+create: replaced because of upgrade_mode, not zones.
        after = before
        after["upgrade_mode"] = .string("Automatic")
        after["rolling_upgrade_policy"] = .array([])
        let replaced = try diffFor(before, after, ["delete", "create"])
        XCTAssertEqual(replaced.consequences, [.replacement])
        XCTAssertEqual(replaced.replacedBy.map(\.field), ["upgrade_mode"])
        XCTAssertFalse(replaced.replacedBy.contains { $0.field == "zones" })
    }
}

/// The base document of the classifier's tests, as an object.
func azDocument() throws -> [String: JSON] {
    let text = try String(contentsOfFile: repositoryRoot + "/Tests/Import/az-vmss-show-zonal.json", encoding: .utf8)
    return try XCTUnwrap(try JSON.parse(text, maxBytes: 16 << 20).object)
}

/// `document` with the value at `path` set (objects made where missing).
func setting(_ document: [String: JSON], _ path: [String], _ value: JSON) -> [String: JSON] {
    var copy = document
    guard let first = path.first else { return copy }
    if path.count == 1 {
        copy[first] = value
    } else {
        copy[first] = .object(setting(copy[first]?.object ?? [:], Array(path.dropFirst()), value))
    }
    return copy
}

func imported(_ document: [String: JSON]) throws -> ImportedScaleSet { try ScaleSetImport.read(.object(document)) }

func diffOf(_ before: [String: JSON], _ after: [String: JSON]) throws -> ScaleSetDiff {
    ScaleSetDiff(before: try imported(before), after: try imported(after))
}

/// An `az vmss show` document against a shorter document of another kind: the fields Azure
/// fills in are not changes; what the shorter one changes, and an extension it drops, are.
final class MixedDocumentDiffTests: XCTestCase {
    func testWhatThePlatformFillsInIsNoChange() throws {
        let base = try azDocument()
        let profile = try XCTUnwrap(base["virtualMachineProfile"]?.object)
        var image = try XCTUnwrap(profile["storageProfile"]?.member("imageReference")?.object)
        image["version"] = .string("22.04.202411010")
        // A REST API example: the request body with only the sku, zones, policy, image and probe.
        let body = JSON.object(["location": base["location"]!, "sku": base["sku"]!, "zones": base["zones"]!, "properties": .object([
            "upgradePolicy": base["upgradePolicy"]!,
            "virtualMachineProfile": .object(["storageProfile": .object(["imageReference": .object(image)]), "networkProfile": profile["networkProfile"]!]),
        ])])
        let example = JSON.object(["parameters": .object(["vmScaleSetName": base["name"]!, "parameters": body]), "responses": .object([:])])
        let after = try ScaleSetImport.read(example)
        XCTAssertEqual(after.format, .restExample)
        let d = ScaleSetDiff(before: try imported(base), after: after)
        XCTAssertEqual(d.changes.map(\.field), ["virtualMachineProfile.storageProfile.imageReference.version"])
        XCTAssertEqual(d.consequences, [.rollingUpgradeNow])
    }
}
