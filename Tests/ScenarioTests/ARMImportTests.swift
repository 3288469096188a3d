@testable import AzureWire
import Formats
import Foundation
import Scenario
import UpgradeEngine
import XCTest

/// The shapes real documents have (issue 30), in fixtures written for them: a byte-order mark
/// and comments, copy loops, conditions, nested deployments in both scopes, lambdas, az's
/// `typePropertiesType`, REST list pages and API example wrappers; each imported and run with
/// the batches it implies.
final class ARMImportTests: XCTestCase {
    let folder = repositoryRoot + "/Tests/Import"

    func document(_ name: String) throws -> JSON {
        try JSONDocument.read(folder + "/" + name)
    }

    func run(_ fields: String, update: String = "at(\"PT1M\", function() update_model { image = \"next\" } end)") throws -> RunRecord {
        let path = folder + "/.arm-\(UUID().uuidString).lua"
        try "scaleset { \(fields) }\n\(update)\n".write(toFile: path, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: path) }
        return try Rehearsal.run(try ScenarioDefinition(luaScript: path, options: options()), seed: 0)
    }

    func batches(_ record: RunRecord) -> [[Int]] {
        record.events.compactMap { if case .batchStarted(let ids, _) = $0.payload { return ids } else { return nil } }
    }

    func testAzVmssShowWithTypePropertiesTypePlansAZonalRollingUpgrade() throws {
        let imported = try ScaleSetImport.read(try document("az-vmss-show-typepropertiestype.json"))
        let d = imported.definition
        XCTAssertEqual(d.policy.mode, .rolling)
        XCTAssertEqual(d.zones, ["1", "2", "3"])
        let e = try XCTUnwrap(d.healthExtension, "az's typePropertiesType names the health extension")
        XCTAssertEqual(e.port, 8080)
        XCTAssertEqual(e.requestPath, "/healthz")
        XCTAssertEqual(imported.warnings, [], "the default scale-in rule is no warning")
        // 50% of 6 is 3 a batch, never across zones: one batch a zone.
        let record = try run("from = \"az-vmss-show-typepropertiestype.json\"")
        XCTAssertEqual(batches(record), [[0, 3], [1, 4], [2, 5]])
        XCTAssertEqual(record.summary.status?.code, .completed)
    }

    func testACopyLoopOfScaleSetsPerZoneWithABOMCommentsAndACondition() throws {
        let template = try document("arm-copy-per-zone.json")
        // Three scale sets (the jumpbox's condition is false), named by uniqueString of the group.
        XCTAssertThrowsError(try ScaleSetImport.read(template)) { error in
            XCTAssertEqual((error as? ValidationFailure)?.problems.map(\.field), ["resources"])
        }
        let suffix = String(ARMHash.uniqueString(["/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/rehearse-rg"]).prefix(6))
        for zone in ["1", "2", "3"] {
            let imported = try ScaleSetImport.read(template, resource: "shop-zone\(zone)-\(suffix)")
            XCTAssertEqual(imported.definition.zones, [zone])
            XCTAssertEqual(imported.definition.capacity, 4)
            XCTAssertEqual(imported.definition.healthExtension?.requestPath, "/shop/health")
            XCTAssertEqual(imported.definition.location, "eastus", "resourceGroup().location, the context's default")
        }
        // Another context names them differently; the location follows it.
        var context = ARMDeploymentContext()
        XCTAssertTrue(context.set("location", "westeurope"))
        XCTAssertTrue(context.set("resourceGroup", "shop-prod"))
        let other = String(ARMHash.uniqueString(["/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/shop-prod"]).prefix(6))
        XCTAssertEqual(try ScaleSetImport.read(template, resource: "shop-zone2-\(other)", context: context).definition.location, "westeurope")
        // 50% of 4 is 2 a batch.
        let record = try run("from = \"arm-copy-per-zone.json\", resource = \"shop-zone1-\(suffix)\"")
        XCTAssertEqual(batches(record), [[0, 1], [2, 3]])
        XCTAssertEqual(record.summary.status?.code, .completed)
    }

    /// A nested deployment (inner scope) that passes a parameter its inline template does not
    /// declare is refused, as ARM refuses it (InvalidTemplate), at that parameter with the
    /// declared names allowed: a misspelt module input never leaves the default in place.
    func testANestedDeploymentPassingAnUndeclaredParameterIsRefusedThere() throws {
        var text = try String(contentsOfFile: folder + "/bicep-module-nested.json", encoding: .utf8)
        let first = try XCTUnwrap(text.range(of: "\"skuCapacity\""), "the module's input comes before its template")
        text.replaceSubrange(first, with: "\"skuCapacty\"")
        XCTAssertThrowsError(try ScaleSetImport.read(try JSON.parse(text))) { error in
            let problems = (error as? ValidationFailure)?.problems ?? []
            XCTAssertEqual(problems.map(\.field), ["resources.web.properties.parameters.skuCapacty"])
            XCTAssertEqual(problems.first?.allowed?.contains("skuCapacity"), true)
        }
    }

    /// The same check leaves alone a deployment that passes nothing (its `properties` are no
    /// parameters), reports a name once however many copies around it pass it, and refuses a
    /// `parameters` that is not an object.
    func testANestedDeploymentPassingNothingImportsAndCopiesReportOnce() throws {
        func template(passing parameters: String?, outerCopies: Int = 1) throws -> JSON {
            let scaleSet = #"{"type": "Microsoft.Compute/virtualMachineScaleSets", "name": "web", "sku": {"capacity": 3},"#
                + #" "properties": {"upgradePolicy": {"mode": "Manual"}}}"#
            let inner = #"{"type": "Microsoft.Resources/deployments", "name": "inner", "properties": {"mode": "Incremental","#
                + #" "expressionEvaluationOptions": {"scope": "inner"},"# + (parameters.map { #" "parameters": \#($0),"# } ?? "")
                + #" "template": {"resources": [\#(scaleSet)]}}}"#
            let outer = #"{"type": "Microsoft.Resources/deployments", "name": "outer", "copy": {"name": "c", "count": \#(outerCopies)},"#
                + #" "properties": {"mode": "Incremental", "template": {"resources": [\#(inner)]}}}"#
            return try JSON.parse(#"{"$schema": "https://schema.management.azure.com/schemas/2019-04-01/deploymentTemplate.json#","#
                                  + #" "contentVersion": "1.0.0.0", "resources": [\#(outer)]}"#)
        }
        // Nothing passed: imported (3 instances, from a copy loop of one).
        XCTAssertEqual(try ScaleSetImport.read(try template(passing: nil), resource: "web").definition.capacity, 3)
        XCTAssertEqual(try ScaleSetImport.read(try template(passing: "{}"), resource: "web").definition.capacity, 3)
        // An undeclared name passed by each of three copies: one problem.
        // (Three copies of one scale set: a label chooses one, `web` alone would name three.)
        XCTAssertThrowsError(try ScaleSetImport.read(try template(passing: #"{"zz": {"value": 1}}"#, outerCopies: 3), resource: "outer/inner/web")) { error in
            XCTAssertEqual((error as? ValidationFailure)?.problems.map(\.field),
                           ["resources[0].properties.template.resources[0].properties.parameters.zz"])
        }
        // Parameters that are a list: no object of names to bind.
        XCTAssertThrowsError(try ScaleSetImport.read(try template(passing: "[1, 2]"), resource: "web")) { error in
            XCTAssertEqual((error as? ValidationFailure)?.problems.map(\.field), ["resources[0].properties.template.resources[0].properties.parameters"])
        }
    }

    /// An undeclared name a nested deployment passes is reported beside the scale set's own
    /// problems, not instead of them; a parameter the inner template needs and the deployment
    /// does not pass is to be given in the deployment, not in a parameters file.
    func testANestedDeploymentsProblemsComeTogetherAndSayWhereToGiveAValue() throws {
        func template(passing parameters: String, capacity: String, mode: String, declares: String = "{}") throws -> JSON {
            let scaleSet = #"{"type": "Microsoft.Compute/virtualMachineScaleSets", "name": "web", "sku": {"capacity": \#(capacity)},"#
                + #" "properties": {"upgradePolicy": {"mode": "\#(mode)"}}}"#
            let inner = #"{"type": "Microsoft.Resources/deployments", "name": "inner", "properties": {"mode": "Incremental","#
                + #" "expressionEvaluationOptions": {"scope": "inner"}, "parameters": \#(parameters),"#
                + #" "template": {"parameters": \#(declares), "resources": [\#(scaleSet)]}}}"#
            return try JSON.parse(#"{"$schema": "https://schema.management.azure.com/schemas/2019-04-01/deploymentTemplate.json#","#
                                  + #" "contentVersion": "1.0.0.0", "resources": [\#(inner)]}"#)
        }
        XCTAssertThrowsError(try ScaleSetImport.read(try template(passing: #"{"zzz": {"value": 1}}"#, capacity: "-1", mode: "Bogus"))) { error in
            let fields = (error as? ValidationFailure)?.problems.map(\.field) ?? []
            XCTAssertEqual(fields.first, "resources[0].properties.parameters.zzz")
            XCTAssertTrue(fields.contains("resources[0].properties.template.resources[0].sku.capacity"), "\(fields)")
            XCTAssertTrue(fields.contains("resources[0].properties.template.resources[0].properties.upgradePolicy.mode"), "\(fields)")
        }
        // The inner template declares `cap` without a default and the deployment passes none.
        let declares = #"{"cap": {"type": "int"}}"#
        XCTAssertThrowsError(try ScaleSetImport.read(try template(passing: "{}", capacity: #""[parameters('cap')]""#, mode: "Manual", declares: declares))) { error in
            let problems = (error as? ValidationFailure)?.problems ?? []
            XCTAssertEqual(problems.map(\.field), ["resources[0].properties.template.parameters.cap"])
            XCTAssertNil(problems.first?.remedy, "a parameters file cannot give it")
            XCTAssertTrue(problems.first?.message.contains("resources[0].properties.parameters.cap") ?? false, problems.first?.message ?? "")
        }
        // Passing it there imports.
        let passed = try ScaleSetImport.read(try template(passing: #"{"cap": {"value": 7}}"#, capacity: #""[parameters('cap')]""#, mode: "Manual", declares: declares))
        XCTAssertEqual(passed.definition.capacity, 7)
        // A value not wrapped in {"value": …}, and the same name in two cases, are refused (one was left at its default silently).
        for (passing, field) in [(#"{"cap": 7}"#, "resources[0].properties.parameters.cap"),
                                 (#"{"cap": {"value": 7}, "CAP": {"value": 8}}"#, "resources[0].properties.parameters.cap")] {
            XCTAssertThrowsError(try ScaleSetImport.read(try template(passing: passing, capacity: #""[parameters('cap')]""#, mode: "Manual", declares: declares))) { error in
                // One problem: the parameter the template reads is not said to be missing as well.
                XCTAssertEqual((error as? ValidationFailure)?.problems.map(\.field), [field], passing)
            }
        }
        // Thousands of undeclared names: the first 1,000 listed, then one count of the rest.
        let many = "{" + (0..<1_500).map { #""n\#($0)": {"value": 1}"# }.joined(separator: ", ") + "}"
        XCTAssertThrowsError(try ScaleSetImport.read(try template(passing: many, capacity: "2", mode: "Manual"))) { error in
            let problems = (error as? ValidationFailure)?.problems ?? []
            XCTAssertEqual(problems.count, 1_001)
            XCTAssertEqual(problems.last?.field, "resources[0].properties.parameters")
            XCTAssertTrue(problems.last?.message.contains("500 more") ?? false, problems.last?.message ?? "")
        }
        // Eleven levels, each passing an undeclared name: the nesting limit stops the walk, alone.
        var nested = #"{"type": "Microsoft.Compute/virtualMachineScaleSets", "name": "web", "sku": {"capacity": -1}, "properties": {"upgradePolicy": {"mode": "Manual"}}}"#
        for level in 0..<11 {
            nested = #"{"type": "Microsoft.Resources/deployments", "name": "d\#(level)", "properties": {"mode": "Incremental", "#
                + #""expressionEvaluationOptions": {"scope": "inner"}, "parameters": {"u": {"value": 1}}, "template": {"resources": [\#(nested)]}}}"#
        }
        let deep = try JSON.parse(#"{"$schema": "https://schema.management.azure.com/schemas/2019-04-01/deploymentTemplate.json#", "#
                                  + #""contentVersion": "1.0.0.0", "resources": [\#(nested)]}"#)
        XCTAssertThrowsError(try ScaleSetImport.read(deep)) { error in
            let problems = (error as? ValidationFailure)?.problems ?? []
            XCTAssertEqual(problems.count, 1)
            XCTAssertTrue(problems.first?.field.hasSuffix(".properties.template") ?? false, problems.first?.field ?? "")
        }
        // The inner template's declarations as a list: said so, not "the template declares none".
        XCTAssertThrowsError(try ScaleSetImport.read(try template(passing: #"{"cap": {"value": 7}}"#, capacity: "2", mode: "Manual", declares: "[1]"))) { error in
            XCTAssertEqual((error as? ValidationFailure)?.problems.first?.field, "resources[0].properties.template.parameters")
        }
    }

    func testABicepModuleNestedDeploymentWithLambdasAndAParametersFileWithComments() throws {
        let template = try document("bicep-module-nested.json")
        let parameters = try document("bicep-module.parameters.json")
        let imported = try ScaleSetImport.read(template, parameters: parameters)
        let d = imported.definition
        XCTAssertEqual(imported.resource, "vmss")
        XCTAssertEqual(d.name, "orders")
        XCTAssertEqual(d.capacity, 6, "mul(2 instances, 3 zones), passed into the module")
        XCTAssertEqual(d.zones, ["1", "2", "3"], "map(…, lambda(…)) of the zones")
        XCTAssertEqual(d.policy.mode, .rolling)
        XCTAssertEqual(d.policy.rolling.maxBatchInstancePercent, 50)
        XCTAssertEqual(d.healthExtension?.port, 80)
        // The NIC configurations nobody gave are never evaluated: the rollout does not read them.
        XCTAssertEqual(imported.warnings, [])
        // Without the parameters file the defaults hold; the name nobody gave is the symbolic one.
        let defaults = try ScaleSetImport.read(template).definition
        XCTAssertEqual(defaults.name, "vmss")
        XCTAssertEqual(defaults.capacity, 4)
        XCTAssertEqual(defaults.zones, ["1", "2"])
        // 50% of 6 is 3, one zone at a time: batches of 2.
        let record = try run("from = \"bicep-module-nested.json\", parameters = \"bicep-module.parameters.json\"")
        XCTAssertEqual(batches(record), [[0, 3], [1, 4], [2, 5]])
        XCTAssertEqual(record.summary.status?.code, .completed)
    }

    func testANestedDeploymentInTheOuterScopeReadsTheOuterParameters() throws {
        let inner: JSON = .object(["resources": .array([.object([
            "type": .string("Microsoft.Compute/virtualMachineScaleSets"), "name": .string("[parameters('name')]"),
            "sku": .object(["capacity": .string("[add(parameters('count'), 1)]")]),
            "properties": .object(["upgradePolicy": .object(["mode": .string("Automatic")])]),
        ])])])
        let template: JSON = .object([
            "$schema": .string("https://schema.management.azure.com/schemas/2019-04-01/deploymentTemplate.json#"), "contentVersion": .string("1.0.0.0"),
            "parameters": .object(["name": .object(["type": .string("string"), "defaultValue": .string("batch")]),
                                   "count": .object(["type": .string("int"), "defaultValue": .int(4)])]),
            "resources": .array([.object(["type": .string("Microsoft.Resources/deployments"), "name": .string("nested"),
                                          "properties": .object(["mode": .string("Incremental"), "template": inner])])]),
        ])
        let d = try ScaleSetImport.read(template).definition
        XCTAssertEqual(d.name, "batch")
        XCTAssertEqual(d.capacity, 5)
        XCTAssertEqual(d.policy.mode, .automatic)
        // Another deployment whose condition depends on a deployed resource only warns; alone,
        // it is the problem.
        var members = template.object!
        let unreadable: JSON = .object(["type": .string("Microsoft.Resources/deployments"), "name": .string("other"),
                                        "condition": .string("[reference('flag').enabled]"),
                                        "properties": .object(["template": .object(["resources": .array([])])])])
        guard case .array(let resources)? = members["resources"] else { return XCTFail("no resources") }
        members["resources"] = .array([resources[0], unreadable])
        XCTAssertEqual(try ScaleSetImport.read(.object(members)).warnings.map(\.field), ["resources[1].condition"])
        members["resources"] = .array([unreadable])
        XCTAssertThrowsError(try ScaleSetImport.read(.object(members))) { error in
            XCTAssertEqual((error as? ValidationFailure)?.problems.map(\.field), ["resources[0].condition"])
        }
    }

    func testAFieldTheRolloutDoesNotReadNeverStopsAnImport() throws {
        // location from a parameter nobody gave, a reference() in the OS profile, an unknown function in a tag.
        let template: JSON = .object([
            "$schema": .string("https://schema.management.azure.com/schemas/2019-04-01/deploymentTemplate.json#"), "contentVersion": .string("1.0.0.0"),
            "parameters": .object(["where": .object(["type": .string("string")])]),
            "resources": .array([.object([
                "type": .string("Microsoft.Compute/virtualMachineScaleSets"), "name": .string("web"),
                "location": .string("[parameters('where')]"), "tags": .object(["x": .string("[noSuchFunction()]")]),
                "sku": .object(["capacity": .int(2)]),
                "properties": .object(["upgradePolicy": .object(["mode": .string("Manual")]),
                                       "virtualMachineProfile": .object(["osProfile": .object(["customData": .string("[reference('kv').secret]")])])]),
            ])]),
        ])
        XCTAssertEqual(try ScaleSetImport.read(template).definition.capacity, 2)
    }

    func testARESTListPageAndAnAPIExampleWrapper() throws {
        let fleet = try InstanceList.read(try document("rest-list-instances-page.json"))
        XCTAssertEqual(fleet.map(\.id), [0, 1, 2, 3, 4, 5])
        XCTAssertEqual(fleet.filter { !$0.latestModelApplied }.map(\.id), [4])
        // A page with a next page leaves instances out: refused at nextLink.
        var page = try document("rest-list-instances-page.json").object!
        page["nextLink"] = .string("https://management.azure.com/…&$skiptoken=2")
        XCTAssertThrowsError(try InstanceList.read(.object(page))) { error in
            XCTAssertEqual((error as? ValidationFailure)?.problems.map(\.field), ["nextLink"])
        }
        // Without instanceId, the id ends the instance's resource id (as the API's examples write it).
        let byResourceID: JSON = .object(["value": .array([.object(["location": .string("westus"),
                                                                     "id": .string("/subscriptions/s/resourceGroups/g/providers/Microsoft.Compute/virtualMachineScaleSets/v/virtualMachines/7")])])])
        XCTAssertTrue(InstanceList.matches(byResourceID))
        XCTAssertEqual(try InstanceList.read(byResourceID).map(\.id), [7])
        let example = try ScaleSetImport.read(try document("rest-example-create.json"))
        XCTAssertEqual(example.format, .restExample)
        XCTAssertEqual(example.definition.capacity, 3)
        XCTAssertEqual(example.definition.policy.mode, .manual)
        XCTAssertEqual(example.definition.name, "vmss")
        XCTAssertEqual(example.warnings.map(\.field), ["responses.200.body.name"])
        // The fleet as the page lists it, with the typePropertiesType scale set: only instance 4
        // is behind the latest model, so a generic update upgrades it alone.
        let record = try run("from = \"az-vmss-show-typepropertiestype.json\", instances = \"rest-list-instances-page.json\"",
                             update: "at(\"PT1M\", function() update_model() end)")
        XCTAssertEqual(batches(record), [[4]])
    }

    func testAHealthProbeIdThatIsNotALoadBalancerProbeIsAWarningNotAHealthSource() throws {
        var document = try document("az-vmss-show-zonal.json").object!
        var profile = document["virtualMachineProfile"]!.object!
        let disk = "/subscriptions/0/resourceGroups/shop-prod/providers/Microsoft.Compute/disks/data-0"
        profile["networkProfile"] = .object(["healthProbe": .object(["id": .string(disk)])])
        document["virtualMachineProfile"] = .object(profile)
        document["upgradePolicy"] = .object(["mode": .string("Manual")])
        let imported = try ScaleSetImport.read(.object(document))
        XCTAssertFalse(imported.definition.loadBalancerProbe)
        XCTAssertEqual(imported.warnings.map(\.field), ["virtualMachineProfile.networkProfile.healthProbe.id"])
    }

    func testAnEmptyRequestPathWithTCPIsNoPathAsTheVerifiedModuleWritesIt() throws {
        let (settings, _) = try HealthExtensionSettings.parse(.object(["protocol": .string("tcp"), "port": .int(22), "requestPath": .string("")]))
        XCTAssertEqual(settings.protocol, .tcp)
        XCTAssertNil(settings.requestPath)
        XCTAssertThrowsError(try HealthExtensionSettings.parse(.object(["protocol": .string("tcp"), "requestPath": .string("/")])))
    }

    func testAnInstanceListThatDisagreesWithTheCapacityIsAWarningAndTheListIsTaken() throws {
        let path = folder + "/.arm-\(UUID().uuidString).lua"
        try "scaleset { from = \"az-vmss-show-zonal.json\", instances = \"rest-list-instances-page.json\" }\n".write(toFile: path, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let scenario = try ScenarioDefinition(luaScript: path, options: options())
        XCTAssertEqual(scenario.warnings.filter { $0.hasPrefix("scaleset.instances:") }.count, 1, "capacity 9, six instances listed")
        XCTAssertEqual(scenario.scaleSet.capacity, 6)
    }

    func testTheDeploymentContextOfImportIsTheScenariosToo() throws {
        let template = try document("arm-copy-per-zone.json")
        let settings = ["resourceGroup=shop-prod", "location=westeurope"]
        let context = try ARMDeploymentContext.parse(settings, field: "--context")
        let name = "shop-zone2-" + String(ARMHash.uniqueString(["/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/shop-prod"]).prefix(6))
        let imported = try ScaleSetImport.read(template, resource: name, context: context)
        // The starter carries the context: its resource is found again when it runs.
        let path = folder + "/.arm-\(UUID().uuidString).lua"
        try StarterScenario.text(imported, path: "arm-copy-per-zone.json", resource: name, parameters: nil, context: settings)
            .write(toFile: path, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let scenario = try ScenarioDefinition(luaScript: path, options: options())
        XCTAssertEqual(scenario.scaleSet.zones, ["2"])
        XCTAssertEqual(scenario.scaleSet.location, "westeurope")
        XCTAssertEqual(try Rehearsal.run(scenario, seed: 0).summary.status?.code, .completed)
        // A name the context does not know is refused, naming the field.
        XCTAssertThrowsError(try ARMDeploymentContext.parse(["region=x"], field: "--context")) { error in
            XCTAssertEqual((error as? ValidationFailure)?.problems.map(\.field), ["--context region=x"])
        }
    }

    func testUniqueStringMatchesTheValuesPublishedForBicep() {
        XCTAssertEqual(ARMHash.uniqueString(["test"]), "rbgf3xv4ufgzg")
        XCTAssertEqual(ARMHash.uniqueString(["hello", "world"]), "a7wkljktk6wne")
        XCTAssertEqual(ARMHash.uniqueString(["abc"]), "cgtzqvhu4i23s")
        XCTAssertEqual(ARMHash.uniqueString(["/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/my-rg"]), "bmg7c6xu4tw46")
        XCTAssertEqual(ARMHash.uniqueString(["foo", "bar", "baz"]), "xzi4ioaxtmth4")
    }
}
