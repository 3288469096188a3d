import AzureWire
import Formats
import Foundation
import Scenario
import UpgradeEngine
import XCTest

/// The scenario `rehearse import` prints: no document value can become code (issue 27), and it
/// fits the upgrade mode, its expectation holding when every probe answers Healthy (issue 30).
final class StarterScenarioTests: XCTestCase {
    /// Writes `document` as `name` into a fresh folder; the folder.
    func folder(with document: JSON, named name: String) throws -> String {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("rehearse-starter-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try document.serialized().write(toFile: folder + "/" + name, atomically: true, encoding: .utf8)
        return folder
    }

    /// A Uniform scale set as az prints it, in `mode`, with the health extension.
    func scaleSet(mode: String, zones: [String] = [], requestPath: String = "/health", osUpgrades: Bool = false) -> JSON {
        .object([
            "type": .string("Microsoft.Compute/virtualMachineScaleSets"), "name": .string("web"), "zones": .array(zones.map(JSON.string)),
            "sku": .object(["capacity": .int(zones.isEmpty ? 4 : zones.count * 2), "name": .string("Standard_D2s_v5")]),
            "orchestrationMode": .string("Uniform"),
            "upgradePolicy": .object(["mode": .string(mode), "automaticOSUpgradePolicy": .object(["enableAutomaticOSUpgrade": .bool(osUpgrades)])]),
            "virtualMachineProfile": .object([
                "storageProfile": .object(["imageReference": .object(["publisher": .string("Canonical"), "offer": .string("ubuntu-24_04-lts"),
                                                                        "sku": .string("server"), "version": .string("latest")])]),
                "extensionProfile": .object(["extensions": .array([.object([
                    "name": .string("health"),
                    "properties": .object(["publisher": .string("Microsoft.ManagedServices"), "type": .string("ApplicationHealthLinux"),
                                           "typeHandlerVersion": .string("2.0"),
                                           "settings": .object(["protocol": .string("http"), "port": .int(80), "requestPath": .string(requestPath)])]),
                ])])]),
            ]),
        ])
    }

    func testHostileDocumentValuesRoundTripAsValuesNeverAsCode() throws {
        let zones = ["1\nerror('zone escaped')", "2]]--[[", "3\"'\u{1B}[31m\u{0}"]
        let requestPath = "/h\r\n]] error('path escaped') --[==[\u{202E}\u{7F}"
        let name = "doc \"1\"\n-- os.exit(3).json"
        let folder = try folder(with: scaleSet(mode: "Rolling", zones: zones, requestPath: requestPath), named: name)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let imported = try ScaleSetImport.read(try JSONDocument.read(folder + "/" + name))
        XCTAssertEqual(imported.definition.zones, zones)
        var text = StarterScenario.text(imported, path: name, resource: nil, parameters: nil)
        // The script's own lines: no value reached a comment or a line of its own.
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) where line.hasPrefix("--") {
            XCTAssertFalse(line.contains("escaped") || line.contains("os.exit"), String(line))
        }
        // The table's strings, byte by byte (print itself escapes control characters).
        text += "\nlocal function bytes(s) return table.concat({ string.byte(s, 1, -1) }, \",\") end\n"
            + "for _, s in ipairs({ document.zones[1], document.zones[2], document.zones[3], document.healthExtension.requestPath, document.file }) do print(bytes(s)) end\n"
        let script = folder + "/starter.lua"
        try text.write(toFile: script, atomically: true, encoding: .utf8)
        var printed: [String] = []
        let scenario = try ScenarioDefinition(luaScript: script, options: options(printed: { printed.append($0) }))
        XCTAssertEqual(printed, (zones + [requestPath, name]).map { $0.utf8.map(String.init).joined(separator: ",") })
        XCTAssertEqual(scenario.scaleSet.zones, zones)
        XCTAssertEqual(scenario.scaleSet.healthExtension?.requestPath, requestPath)
        XCTAssertEqual(try Rehearsal.run(scenario, seed: 0).summary.status?.code, .completed)
    }

    func testTheStarterFitsTheModeAndItsExpectationHolds() throws {
        for (mode, osUpgrades) in [("Rolling", false), ("Automatic", false), ("Manual", false), ("Manual", true)] {
            let folder = try folder(with: scaleSet(mode: mode, osUpgrades: osUpgrades), named: "vmss.json")
            defer { try? FileManager.default.removeItem(atPath: folder) }
            let imported = try ScaleSetImport.read(try JSONDocument.read(folder + "/vmss.json"))
            try StarterScenario.text(imported, path: "vmss.json", resource: nil, parameters: nil).write(toFile: folder + "/s.lua", atomically: true, encoding: .utf8)
            let record = try Rehearsal.run(try ScenarioDefinition(luaScript: folder + "/s.lua", options: options()), seed: 0)
            let label = "\(mode)\(osUpgrades ? " with automatic OS upgrades" : "")"
            XCTAssertTrue(record.expectations.allSatisfy(\.held), label)
            XCTAssertFalse(record.expectations.isEmpty, label)
            // Every instance ends on the newest model, however the mode gets it there.
            XCTAssertEqual(record.instances.filter { $0.exists && $0.modelVersion < record.instances.map(\.modelVersion).max()! }.map(\.id), [], label)
        }
    }
}
