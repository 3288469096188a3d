import AzureWire
import Formats
import Foundation
import Scenario
import UpgradeEngine
import XCTest

/// Starters that fit the document and the mode: the next model bumps what the document names,
/// a name waiting on a parameter names it, and Manual and Automatic starters rehearse what the
/// mode does beside the Rolling alternative.
final class ImportStarterTests: XCTestCase {
    let folder = repositoryRoot + "/Tests/Import"

    func testTheNextModelBumpsTheDocumentsVersion() {
        XCTAssertEqual(NextModel.changes(from: ["imageReference.version": "22.04.202410020"]), ["imageReference.version": "22.04.202410021"])
        XCTAssertEqual(NextModel.changes(from: ["imageReference.version": "1.0.9"]), ["imageReference.version": "1.0.10"])
        XCTAssertEqual(NextModel.changes(from: ["imageReference.version": "latest"]), ["imageReference.version": "next"])
        let gallery = "/subscriptions/0/resourceGroups/rg/providers/Microsoft.Compute/galleries/g/images/web/versions/1.2.3"
        XCTAssertEqual(NextModel.changes(from: ["imageReference.id": gallery]), ["imageReference.id": String(gallery.dropLast(5)) + "1.2.4"])
        XCTAssertEqual(NextModel.changes(from: ["sku.name": "Standard_D2s_v5"]), ["image": "next"])
        // The importer's definition updates that field, and its run upgrades every instance.
        let text = try? String(contentsOfFile: folder + "/az-vmss-show-zonal.json", encoding: .utf8)
        guard let text, let imported = try? ScaleSetImport.read(try JSON.parse(text, maxBytes: 16 << 20)) else { return XCTFail("fixture") }
        let definition = ScenarioDefinition(imported: imported, path: "az-vmss-show-zonal.json")
        XCTAssertEqual(definition.timeline, [.init(time: 60_000, action: .perform(.updateModel(["imageReference.version": "next"])))])
    }

    func testANameWaitingOnAParameterNamesIt() throws {
        var text = try String(contentsOfFile: folder + "/arm-flexible-health-extension.json", encoding: .utf8)
        text = text.replacingOccurrences(of: "\"vmssName\": {\"type\": \"string\", \"defaultValue\": \"orders-api\"}", with: "\"vmssName\": {\"type\": \"string\"}")
        text = text.replacingOccurrences(of: "\"defaultValue\": \"orders-api\"", with: "\"metadata\": {}")
        let imported = try ScaleSetImport.read(try JSON.parse(text))
        XCTAssertEqual(imported.definition.name, "vmss")
        let warning = try XCTUnwrap(imported.warnings.first { $0.field == "resources[1].name" })
        XCTAssertEqual(warning.source, "parameters.vmssName")
        XCTAssertEqual(warning.remedy?.setting, .templateParameters)
        // One warning for the name: the one naming the parameter, not one saying the path is no name.
        XCTAssertEqual(imported.warnings.filter { $0.field == "resources[1].name" }.count, 1)
    }

    /// The starter of a Manual or Automatic document as a Lua scenario, loaded.
    /// (`automaticOS`: automatic OS upgrades on, the image named by publisher, offer and sku, so
    /// that its version is latest.)
    /// (`listed`: an az vmss list-instances of those ids, each protected from scale set actions when
    /// it is in `protected`.)
    func starter(mode: String, capacity: Int, health: Bool, automaticOS: Bool = false, listed: [Int]? = nil, protected: Set<Int> = []) throws -> ScenarioDefinition {
        var policy: [String: JSON] = ["mode": .string(mode)]
        if automaticOS { policy["automaticOSUpgradePolicy"] = .object(["enableAutomaticOSUpgrade": .bool(true)]) }
        let image: JSON = automaticOS
            ? .object(["publisher": .string("Canonical"), "offer": .string("ubuntu-24_04-lts"), "sku": .string("server")])
            : .object(["version": .string("1.0.4")])
        var profile: [String: JSON] = ["storageProfile": .object(["imageReference": image])]
        if health || automaticOS {
            profile["extensionProfile"] = .object(["extensions": .array([.object(["name": .string("health"), "properties": .object([
                "publisher": .string("Microsoft.ManagedServices"), "type": .string("ApplicationHealthLinux"), "typeHandlerVersion": .string("2.0"),
                "settings": .object(["protocol": .string("http"), "port": .int(80), "requestPath": .string("/health")]),
            ])])])])
        }
        let resource: [String: JSON] = [
            "type": .string("Microsoft.Compute/virtualMachineScaleSets"), "name": .string("web"),
            "sku": .object(["name": .string("Standard_D2s_v5"), "capacity": .int(capacity)]),
            "properties": .object(["upgradePolicy": .object(policy), "virtualMachineProfile": .object(profile)]),
        ]
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("starter-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        try JSON.object(resource).serialized(pretty: true).write(toFile: dir + "/vmss.json", atomically: true, encoding: .utf8)
        let imported = try ScaleSetImport.read(.object(resource))
        var instances: (path: String, fleet: [ExistingInstance])?
        if let listed {
            let list = JSON.array(listed.map { id in
                .object(["instanceId": .string(String(id)), "latestModelApplied": .bool(true),
                         "protectionPolicy": .object(["protectFromScaleSetActions": .bool(protected.contains(id))])])
            })
            try list.serialized(pretty: true).write(toFile: dir + "/instances.json", atomically: true, encoding: .utf8)
            instances = ("instances.json", try InstanceList.read(list))
        }
        let definition = ScenarioDefinition(imported: imported, path: "vmss.json", fleet: instances?.fleet)
        try StarterScenario.text(definition, imported: imported, path: "vmss.json", resource: nil, parameters: nil, instances: instances)
            .write(toFile: dir + "/starter.lua", atomically: true, encoding: .utf8)
        return try ScenarioDefinition(luaScript: dir + "/starter.lua", options: options())
    }

    func rollout(_ definition: ScenarioDefinition, _ value: String, _ more: [String: String] = [:]) throws -> RunRecord {
        try Rehearsal.run(definition, RunInputs(seed: 0, parameterValues: more.merging(["rollout": value]) { $1 }))
    }

    /// The times of the manual upgrades, and how many instances each named.
    func manualBatches(_ record: RunRecord) -> [(Millis, Int)] {
        record.events.compactMap { event in
            if case .manualUpgrade(let ids?, _, _) = event.payload { return (event.time, ids.count) } else { return nil }
        }
    }

    func testAManualStarterComparesTheTeamsBatchesWithAdoptingRolling() throws {
        // 10 instances with the extension: the team upgrades 2 at a time, each batch once Healthy.
        let definition = try starter(mode: "Manual", capacity: 10, health: true)
        let manual = try rollout(definition, "manual")
        XCTAssertEqual(manual.upgrades, 0)
        XCTAssertEqual(manual.failedExpectations, [])
        let batches = manual.events.compactMap { if case .manualUpgrade(let ids, _, _) = $0.payload { return ids?.count } else { return nil } }
        XCTAssertEqual(batches, [2, 2, 2, 2, 2])
        XCTAssertEqual(manual.instances.filter { $0.leftBehind != nil }.count, 0)
        // Rolling: the seeds' policy, 20% batches of 10 instances: five batches of 2, one rolling upgrade.
        let rolling = try rollout(definition, "rolling")
        XCTAssertEqual(rolling.upgrades, 1)
        XCTAssertEqual(rolling.failedExpectations, [])
        XCTAssertEqual(rolling.events.count { if case .batchStarted = $0.payload { return true } else { return false } }, 5)
    }

    func testAManualStarterWithoutTheExtensionAddsItBeforeSwitching() throws {
        let definition = try starter(mode: "Manual", capacity: 5, health: false)
        let rolling = try rollout(definition, "rolling")
        XCTAssertEqual(rolling.upgrades, 1)
        XCTAssertEqual(rolling.failedExpectations, [])
    }

    func testAnAutomaticStarterShowsTheOutageBesideRolling() throws {
        let definition = try starter(mode: "Automatic", capacity: 10, health: true)
        let automatic = try rollout(definition, "automatic")
        // Every instance at once: none serves at the lowest.
        XCTAssertEqual(automatic.summary.availability?.lowestHealthy, 0)
        let rolling = try rollout(definition, "rolling")
        // Batches of 2: 8 of 10 serve at the lowest.
        XCTAssertEqual(rolling.summary.availability?.lowestHealthy, 8)
        XCTAssertEqual(rolling.failedExpectations, [])
    }

    func testAManualStarterWithoutAHealthSourceUpgradesABatchEverySettle() throws {
        // Nothing to ask for health: 5 instances, batches of 1, one every PT5M from PT2M.
        let definition = try starter(mode: "Manual", capacity: 5, health: false)
        let manual = try rollout(definition, "manual")
        XCTAssertEqual(manualBatches(manual).map(\.0), [120_000, 420_000, 720_000, 1_020_000, 1_320_000])
        XCTAssertEqual(manualBatches(manual).map(\.1), [1, 1, 1, 1, 1])
        XCTAssertEqual(manual.instances.count { $0.leftBehind != nil }, 0)
        XCTAssertEqual(manual.failedExpectations, [])
        // A shorter settle: the same batches, 60 s apart.
        let quick = try rollout(definition, "manual", ["settle": "PT1M"])
        XCTAssertEqual(manualBatches(quick).map(\.0), [120_000, 180_000, 240_000, 300_000, 360_000])
    }

    func testATeamThatStopsPartwayFailsTheRunWithTheInstancesLeftBehind() throws {
        // The team looks 1 s after the first batch of 2 and has no patience: the batch has not
        // answered on the new model yet, so it stops; 8 of 10 stay on the old model.
        let definition = try starter(mode: "Manual", capacity: 10, health: true)
        let stopped = try rollout(definition, "manual", ["wait": "PT1S", "patience": "PT0S"])
        XCTAssertEqual(manualBatches(stopped).map(\.1), [2])
        XCTAssertEqual(stopped.instances.count { $0.leftBehind == .notUpgraded }, 8)
        XCTAssertEqual(stopped.failedExpectations.map(\.key), [.leftBehind])
        XCTAssertEqual(stopped.failedExpectations.first?.actual, .count(8))
        XCTAssertEqual(stopped.failedExpectations.first?.expected, .equal(.count(0)))
    }

    func testAnAutomaticOSUpgradeCountsAsOneRollingUpgradeMoreInBothRollouts() throws {
        // The starter releases a platform image: one automatic OS upgrade beside the rollout's.
        let definition = try starter(mode: "Automatic", capacity: 10, health: true, automaticOS: true)
        let automatic = try rollout(definition, "automatic")
        XCTAssertEqual(automatic.upgrades, 1)
        XCTAssertEqual(automatic.failedExpectations, [])
        let rolling = try rollout(definition, "rolling")
        XCTAssertEqual(rolling.upgrades, 2)
        XCTAssertEqual(rolling.failedExpectations, [])
        XCTAssertEqual(rolling.instances.count { $0.leftBehind != nil }, 0)
    }

    func testAProtectedInstanceIsTheOneLeftBehindAndABatchBelowOneIsRefused() throws {
        // Listed ids 0, 1, 2, 4, 5, 6; 4 is protected from scale set actions: no rollout upgrades it.
        let definition = try starter(mode: "Manual", capacity: 6, health: true, listed: [0, 1, 2, 4, 5, 6], protected: [4])
        for rollout in ["manual", "rolling"] {
            let record = try self.rollout(definition, rollout)
            XCTAssertEqual(record.failedExpectations, [], rollout)
            XCTAssertEqual(record.instances.filter { $0.leftBehind != nil }.map(\.id), [4], rollout)
        }
        XCTAssertEqual(manualBatches(try rollout(definition, "manual")).map(\.1), [1, 1, 1, 1, 1])
        XCTAssertThrowsError(try rollout(definition, "manual", ["batch": "0"]))
    }
}
