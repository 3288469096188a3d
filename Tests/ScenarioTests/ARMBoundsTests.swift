import AzureWire
import Formats
import Foundation
import Scenario
import UpgradeEngine
import XCTest

/// Hostile templates (issue 27): cycles, chains deeper than any real template, values that
/// double at every reference. Each ends in milliseconds with a problem naming its path.
final class ARMBoundsTests: XCTestCase {
    /// A template whose scale set reads its capacity from `capacity` (an expression).
    static func template(parameters: [String: JSON] = [:], variables: [String: JSON] = [:], capacity: String) -> JSON {
        .object([
            "$schema": .string("https://schema.management.azure.com/schemas/2019-04-01/deploymentTemplate.json#"),
            "contentVersion": .string("1.0.0.0"), "parameters": .object(parameters), "variables": .object(variables),
            "resources": .array([.object(["type": .string("Microsoft.Compute/virtualMachineScaleSets"), "name": .string("web"),
                                          "sku": .object(["capacity": .string(capacity)]),
                                          "properties": .object(["upgradePolicy": .object(["mode": .string("Manual")])])])]),
        ])
    }

    static func parameter(_ defaultValue: String) -> JSON { .object(["type": .string("int"), "defaultValue": .string(defaultValue)]) }

    /// The problems reading `template` gives, timed: it must end within 15 s.
    func problems(_ template: JSON, file: StaticString = #filePath, line: UInt = #line) -> [Problem] {
        let start = Date()
        defer { XCTAssertLessThan(Date().timeIntervalSince(start), 15, file: file, line: line) }
        do {
            _ = try ScaleSetImport.read(template)
            XCTFail("the template was read", file: file, line: line)
            return []
        } catch {
            return error.problems
        }
    }

    func testAParameterCycleIsAProblemNamingTheParameter() {
        let cycle = problems(Self.template(parameters: ["a": Self.parameter("[parameters('b')]"), "b": Self.parameter("[parameters('a')]")],
                                           capacity: "[parameters('a')]"))
        XCTAssertEqual(cycle.map(\.field), ["parameters.a"])
        XCTAssertEqual(cycle[0].cycle, ["parameters('a')", "parameters('b')", "parameters('a')"])
        let own = problems(Self.template(parameters: ["a": Self.parameter("[add(parameters('a'), 1)]")], capacity: "[parameters('a')]"))
        XCTAssertEqual(own.map(\.field), ["parameters.a"])
        XCTAssertEqual(own[0].cycle, ["parameters('a')", "parameters('a')"])
    }

    func testAVariableAndParameterCycleThroughEachOther() {
        let found = problems(Self.template(parameters: ["p": Self.parameter("[variables('v')]")], variables: ["v": .string("[parameters('p')]")],
                                           capacity: "[variables('v')]"))
        XCTAssertEqual(found.map(\.field), ["variables.v"])
        XCTAssertEqual(found[0].cycle, ["variables('v')", "parameters('p')", "variables('v')"])
    }

    func testAChainOfTwentyThousandVariablesIsRefusedNotFollowedDownTheStack() {
        var variables: [String: JSON] = ["v20000": .int(3)]
        for i in 0..<20_000 { variables["v\(i)"] = .string("[variables('v\(i + 1)')]") }
        let found = problems(Self.template(variables: variables, capacity: "[variables('v0')]"))
        XCTAssertEqual(found.count, 1)
        XCTAssertTrue(found[0].field.hasPrefix("variables.v"), found[0].field)
        XCTAssertEqual(found[0].limit, .referenceDepth(64))
        // A chain within the bound evaluates.
        var short: [String: JSON] = ["v40": .int(3)]
        for i in 0..<40 { short["v\(i)"] = .string("[variables('v\(i + 1)')]") }
        XCTAssertEqual(try ScaleSetImport.read(Self.template(variables: short, capacity: "[variables('v0')]")).definition.capacity, 3)
    }

    func testAChainOfTwentyThousandParameterDefaults() {
        var parameters: [String: JSON] = ["p20000": .object(["type": .string("int"), "defaultValue": .int(2)])]
        for i in 0..<20_000 { parameters["p\(i)"] = Self.parameter("[parameters('p\(i + 1)')]") }
        let found = problems(Self.template(parameters: parameters, capacity: "[parameters('p0')]"))
        XCTAssertEqual(found.count, 1)
        XCTAssertTrue(found[0].field.hasPrefix("parameters.p"), found[0].field)
    }

    func testFortyVariablesEachReferringTwiceToTheNextAreEvaluatedOnceEach() {
        // Memoised: 40 evaluations, not 2^40.
        var equal: [String: JSON] = ["v40": .int(1)]
        for i in 0..<40 { equal["v\(i)"] = .string("[if(equals(variables('v\(i + 1)'), variables('v\(i + 1)')), variables('v\(i + 1)'), 0)]") }
        let start = Date()
        XCTAssertEqual(try ScaleSetImport.read(Self.template(variables: equal, capacity: "[variables('v0')]")).definition.capacity, 1)
        XCTAssertLessThan(Date().timeIntervalSince(start), 15)
        // Values that double at every level are refused by size, naming where.
        for doubling in ["concat(variables('v{n}'), variables('v{n}'))", "createArray(variables('v{n}'), variables('v{n}'))"] {
            var variables: [String: JSON] = ["v40": .string("abcdefgh")]
            for i in 0..<40 { variables["v\(i)"] = .string("[" + doubling.replacingOccurrences(of: "{n}", with: "\(i + 1)") + "]") }
            let found = problems(Self.template(variables: variables, capacity: "[length(variables('v0'))]"))
            XCTAssertEqual(found.count, 1, doubling)
            XCTAssertTrue(found[0].field.hasPrefix("variables.v"), found[0].field)
        }
    }

    func testManyLargeValuesStopAtTheBudgetWithOneProblem() {
        // 3,000 strings of about 200 KB each: 600 MB if all were built; the budget stops it.
        var variables: [String: JSON] = [:]
        for i in 0..<3_000 { variables["w\(i)"] = .string("[concat(string(\(i)), replace(string(range(0, 9000)), '1', 'abcdefghabcdefghabcdefghabcdefgh'))]") }
        variables["all"] = .string("[createArray(" + (0..<3_000).map { "variables('w\($0)')" }.joined(separator: ", ") + ")]")
        var template = Self.template(variables: variables, capacity: "[length(variables('all'))]").object!
        template["resources"] = .array([.object(["type": .string("Microsoft.Compute/virtualMachineScaleSets"), "name": .string("web"),
                                                 "sku": .object(["capacity": .string("[length(variables('all'))]")]),
                                                 "properties": .object(["upgradePolicy": .string("[variables('w1')]")])])])
        let found = problems(.object(template))
        XCTAssertEqual(found.count, 1, "the budget is said once, not for every field read after it")
        XCTAssertTrue(found.first?.field.hasPrefix("variables.w") == true, found.first?.field ?? "")
    }

    func testTheSameBoundsHoldThroughAScenariosFrom() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("rehearse-arm-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        var variables: [String: JSON] = ["v20000": .int(3)]
        for i in 0..<20_000 { variables["v\(i)"] = .string("[variables('v\(i + 1)')]") }
        try Self.template(variables: variables, capacity: "[variables('v0')]").serialized().write(toFile: folder + "/chain.json", atomically: true, encoding: .utf8)
        try "scaleset { from = \"chain.json\" }\n".write(toFile: folder + "/s.lua", atomically: true, encoding: .utf8)
        XCTAssertThrowsError(try ScenarioDefinition(luaScript: folder + "/s.lua", options: options())) { error in
            guard case ScenarioError.definition(let problems, _) = error else { return XCTFail("\(error)") }
            XCTAssertEqual(problems.count, 1)
            XCTAssertTrue(problems[0].field.hasPrefix("scaleset.from chain.json: variables.v"), problems[0].field)
        }
    }
}
