import AzureWire
import Formats
import Foundation
import Scenario
import UpgradeEngine
import XCTest

/// Scale sets read from the documents teams already have, each imported, planned and run.
final class ImportTests: XCTestCase {
    let folder = repositoryRoot + "/Tests/Import"

    func document(_ name: String) throws -> JSON {
        try JSON.parse(try String(contentsOfFile: folder + "/" + name, encoding: .utf8), maxBytes: 16 << 20)
    }

    /// A scenario beside the fixtures that reads `from` and answers Healthy.
    func scenario(_ fields: String, extra: String = "", update: String = "at(\"PT1M\", function() update_model { image = \"next\" } end)") throws -> ScenarioDefinition {
        let path = folder + "/.scenario-\(UUID().uuidString).lua"
        try """
            scaleset { \(fields) }
            health(function(vm, now) return { applicationHealthState = "Healthy" } end)
            \(update)
            \(extra)
            """.write(toFile: path, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: path) }
        return try ScenarioDefinition(luaScript: path, options: options())
    }

    func batches(_ record: RunRecord) -> [[Int]] {
        record.events.compactMap { if case .batchStarted(let ids, _) = $0.payload { return ids } else { return nil } }
    }

    func testAzVmssShowOfAZonalUniformSetWithALoadBalancerProbe() throws {
        let imported = try ScaleSetImport.read(try document("az-vmss-show-zonal.json"))
        let d = imported.definition
        XCTAssertEqual(imported.format, .azResource)
        XCTAssertEqual(d.name, "shop-web")
        XCTAssertEqual(d.capacity, 9)
        XCTAssertEqual(d.zones, ["1", "2", "3"])
        XCTAssertEqual(d.orchestration, .uniform)
        XCTAssertEqual(d.faultDomainCount, 1)
        XCTAssertTrue(d.loadBalancerProbe)
        XCTAssertNil(d.healthExtension)
        XCTAssertEqual(d.location, "westeurope")
        XCTAssertEqual(d.policy.mode, .rolling)
        XCTAssertEqual(d.policy.rolling.maxBatchInstancePercent, 34)
        XCTAssertEqual(d.policy.rolling.maxUnhealthyInstancePercent, 40)
        XCTAssertEqual(d.policy.rolling.pauseTimeBetweenBatches, 10_000)
        XCTAssertFalse(d.policy.rolling.maxSurge)
        XCTAssertEqual(d.model["sku.name"], "Standard_D2s_v3")
        XCTAssertEqual(d.model["imageReference.offer"], "0001-com-ubuntu-server-jammy")
        XCTAssertEqual(imported.warnings, [])
        // 34% of 9 is 3 a batch, zone by zone.
        let record = try Rehearsal.run(try scenario("from = \"az-vmss-show-zonal.json\""), seed: 0)
        XCTAssertEqual(batches(record), [[0, 3, 6], [1, 4, 7], [2, 5, 8]])
        XCTAssertEqual(record.summary.status?.code, .completed)
        XCTAssertEqual(record.policy.rolling.maxBatchInstancePercent, 34)
    }

    func testAnARMTemplateResolvesItsParametersAndVariables() throws {
        let template = try document("arm-flexible-health-extension.json")
        let defaults = try ScaleSetImport.read(template)
        XCTAssertEqual(defaults.resource, "orders-api")
        XCTAssertEqual(defaults.definition.capacity, 4)
        let imported = try ScaleSetImport.read(template, parameters: try document("arm-flexible.parameters.json"))
        let d = imported.definition
        XCTAssertEqual(d.capacity, 8)
        XCTAssertEqual(d.orchestration, .flexible)
        XCTAssertEqual(d.model["sku.name"], "Standard_D4s_v5")
        XCTAssertEqual(d.policy.rolling.maxBatchInstancePercent, 25)
        XCTAssertEqual(d.policy.rolling.maxUnhealthyUpgradedInstancePercent, 0)
        XCTAssertEqual(d.policy.rolling.pauseTimeBetweenBatches, 30_000)
        let e = try XCTUnwrap(d.healthExtension)
        XCTAssertEqual(e.port, 8080)
        XCTAssertEqual(e.requestPath, "/healthz")
        XCTAssertEqual(e.gracePeriod, 600)
        XCTAssertTrue(e.richStates)
        // The table overrides the document: 12 instances, batches of 2 (25% of 8 would be 2 too;
        // of 12 it is 3).
        let record = try Rehearsal.run(try scenario("from = \"arm-flexible-health-extension.json\", parameters = \"arm-flexible.parameters.json\", capacity = 12"), seed: 0)
        XCTAssertEqual(record.summary.capacity, 12)
        XCTAssertEqual(batches(record).map(\.count), [3, 3, 3, 3])
        XCTAssertEqual(record.summary.status?.code, .completed)
    }

    func testACompiledBicepFileWithSymbolicNamesAndSeedOnesMaxSurgeSpelling() throws {
        let imported = try ScaleSetImport.read(try document("bicep-symbolic-maxsurge.json"))
        XCTAssertEqual(imported.resource, "vmss")
        let d = imported.definition
        XCTAssertEqual(d.capacity, 10)
        XCTAssertEqual(d.zones, ["1", "2"])
        XCTAssertTrue(d.policy.rolling.maxSurge, "\"MaxSurge\": \"true\" as seed 001's sample writes it")
        XCTAssertTrue(d.loadBalancerProbe, "the probe's id is a resourceId expression: only its presence is read")
        let record = try Rehearsal.run(try scenario("from = \"bicep-symbolic-maxsurge.json\""), seed: 0)
        XCTAssertEqual(record.events.count { $0.kind == .surgeCreated }, 10)
        XCTAssertEqual(record.summary.status?.code, .completed)
    }

    func testATerraformPlanWithTheProvidersNames() throws {
        let imported = try ScaleSetImport.read(try document("terraform-plan.json"))
        XCTAssertEqual(imported.resource, "module.web.azurerm_linux_virtual_machine_scale_set.this")
        let d = imported.definition
        XCTAssertEqual(d.name, "payments-web")
        XCTAssertEqual(d.capacity, 12)
        XCTAssertEqual(d.policy.rolling.maxUnhealthyUpgradedInstancePercent, 10)
        XCTAssertEqual(d.policy.rolling.pauseTimeBetweenBatches, 60_000)
        XCTAssertTrue(d.policy.rolling.prioritizeUnhealthyInstances)
        let e = try XCTUnwrap(d.healthExtension)
        XCTAssertEqual(e.protocol, .https)
        XCTAssertEqual(e.port, 8443)
        XCTAssertEqual(e.numberOfProbes, 2)
        XCTAssertEqual(e.intervalInSeconds, 10)
        XCTAssertEqual(imported.warnings, [])
        // 25% of 12 is 3, zone by zone: zones of 4 make a batch of 3 and one of 1.
        let record = try Rehearsal.run(try scenario("from = \"terraform-plan.json\""), seed: 0)
        XCTAssertEqual(batches(record), [[0, 3, 6], [9], [1, 4, 7], [10], [2, 5, 8], [11]])
    }

    func testUnsupportedExpressionsWrongTypesAndUnknownValuesNameTheirPaths() throws {
        var text = try String(contentsOfFile: folder + "/arm-flexible-health-extension.json", encoding: .utf8)
        text = text.replacingOccurrences(of: "\"capacity\": \"[parameters('instanceCount')]\"", with: "\"capacity\": \"[reference('pool').capacity]\"")
        text = text.replacingOccurrences(of: "\"maxBatchInstancePercent\": 25", with: "\"maxBatchInstancePercent\": \"twenty\"")
        // Both at once: a deployed resource's state the template cannot give, and a wrong type.
        XCTAssertThrowsError(try ScaleSetImport.read(try JSON.parse(text))) { error in
            guard let failure = error as? ValidationFailure else { return XCTFail("\(error)") }
            XCTAssertEqual(failure.problems.map(\.field), ["resources[1].sku.capacity", "resources[1].properties.upgradePolicy.rollingUpgradePolicy.maxBatchInstancePercent"])
        }
        text = text.replacingOccurrences(of: "[reference('pool').capacity]", with: "[parameters('instanceCount')]")
        XCTAssertThrowsError(try ScaleSetImport.read(try JSON.parse(text))) { error in
            guard let failure = error as? ValidationFailure else { return XCTFail("\(error)") }
            XCTAssertEqual(failure.problems.map(\.field), ["resources[1].properties.upgradePolicy.rollingUpgradePolicy.maxBatchInstancePercent"])
        }
        var plan = try String(contentsOfFile: folder + "/terraform-plan.json", encoding: .utf8)
        plan = plan.replacingOccurrences(of: "\"instances\": false", with: "\"instances\": true")
        let imported = try ScaleSetImport.read(try JSON.parse(plan, maxBytes: 1 << 20))
        XCTAssertEqual(imported.warnings.map(\.field), ["planned_values.root_module.child_modules[0].resources[0].values.instances"])
    }

    func testAScenarioFromADocumentIsCheckedLikeAnyOther() throws {
        XCTAssertThrowsError(try scenario("from = \"missing.json\"")) { error in
            guard case ScenarioError.definition(let problems, _) = error else { return XCTFail("\(error)") }
            XCTAssertEqual(problems.map(\.field), ["scaleset.from"])
        }
        XCTAssertThrowsError(try scenario("from = \"bicep-symbolic-maxsurge.json\", resource = \"other\"")) { error in
            guard case ScenarioError.definition(let problems, _) = error else { return XCTFail("\(error)") }
            XCTAssertEqual(problems.map(\.field), ["scaleset.from bicep-symbolic-maxsurge.json: resource = \"other\""])
        }
        XCTAssertThrowsError(try scenario("resource = \"vmss\", capacity = 3")) { error in
            guard case ScenarioError.definition(let problems, _) = error else { return XCTFail("\(error)") }
            XCTAssertEqual(problems.map(\.field), ["scaleset.resource"])
        }
    }

    func testTheFleetAsListInstancesHasItSparseIdsZonesProtectionAndOutOfDateInstances() throws {
        let fleet = try InstanceList.read(try document("az-vmss-list-instances.json"))
        XCTAssertEqual(fleet.map(\.id), [0, 1, 2, 3, 5, 6, 7, 9, 10])
        XCTAssertEqual(fleet.filter { !$0.latestModelApplied }.map(\.id), [3, 7])
        XCTAssertEqual(fleet.filter(\.protectFromScaleSetActions).map(\.id), [5])
        // A generic update starts a rolling upgrade of the two instances behind the latest model.
        let generic = try Rehearsal.run(try scenario("from = \"az-vmss-show-zonal.json\", instances = \"az-vmss-list-instances.json\"",
                                                     update: "at(\"PT5M\", function() update_model() end)"), seed: 0)
        XCTAssertEqual(batches(generic), [[3], [7]], "behind the latest model: 3 (zone 1), then 7 (zone 2)")
        XCTAssertEqual(generic.summary.protected, [5])
        let gone = generic.instances.filter { !$0.exists }.map(\.id)
        XCTAssertEqual(gone, [4, 8], "ids the list skips were deleted before the run")
        XCTAssertEqual(generic.instances.first { $0.id == 10 }?.zone, "2")
        // A new model: every present instance but the protected one, zone by zone (34% of 9 is 3).
        let record = try Rehearsal.run(try scenario("from = \"az-vmss-show-zonal.json\", instances = \"az-vmss-list-instances.json\""), seed: 0)
        XCTAssertEqual(batches(record), [[0, 3, 6], [1, 7, 10], [2, 9]])
        XCTAssertEqual(record.summary.status?.code, .completed)
        XCTAssertEqual(record.summary.status?.progress.successfulInstanceCount, 8)
        // The list and the capacity must agree.
        XCTAssertThrowsError(try scenario("from = \"az-vmss-show-zonal.json\", instances = \"az-vmss-list-instances.json\", capacity = 12")) { error in
            guard case ScenarioError.definition(let problems, _) = error else { return XCTFail("\(error)") }
            XCTAssertEqual(problems.map(\.field), ["scaleset.capacity"])
        }
    }
}
