import AzureWire
import Formats
import Foundation
import Scenario
import UpgradeEngine
import XCTest

/// Issue 37's attacks on the ARM evaluator and the import's context: copies of nested
/// deployments, searches over long generated text, a resource id with an empty type, and a
/// context name given twice in two cases. Each ends with problems naming the place.
final class HostileARMTests: XCTestCase {
    static let scaleSetType = "Microsoft.Compute/virtualMachineScaleSets"

    /// A scale set resource with capacity 2 (named `name`).
    static func scaleSet(name: String = "web") -> JSON {
        .object(["type": .string(scaleSetType), "name": .string(name), "sku": .object(["capacity": .int(2)]),
                 "properties": .object(["upgradePolicy": .object(["mode": .string("Manual")])])])
    }

    static func template(_ resources: [JSON], variables: [String: JSON] = [:]) -> JSON {
        .object(["$schema": .string("https://schema.management.azure.com/schemas/2019-04-01/deploymentTemplate.json#"),
                 "contentVersion": .string("1.0.0.0"), "variables": .object(variables), "resources": .array(resources)])
    }

    /// `inner` wrapped in `levels` inline deployments, each copied `count` times.
    static func nested(_ inner: JSON, levels: Int, count: Int) -> JSON {
        var resource = inner
        for level in 0..<levels {
            resource = .object(["type": .string("Microsoft.Resources/deployments"), "name": .string("[concat('d\(level)-', copyIndex())]"),
                                "copy": .object(["name": .string("d\(level)"), "count": .int(count)]),
                                "properties": .object(["mode": .string("Incremental"), "template": .object(["resources": .array([resource])])])])
        }
        return resource
    }

    func problems(_ template: JSON, context: ARMDeploymentContext = ARMDeploymentContext(), file: StaticString = #filePath, line: UInt = #line) -> [Problem] {
        do {
            _ = try ScaleSetImport.read(template, context: context)
            XCTFail("the template was read", file: file, line: line)
            return []
        } catch {
            return error.problems
        }
    }

    func testCopiesOfNestedDeploymentsStopAtAzuresDeploymentLimit() throws {
        // Four levels of 800 copies would be 800⁴ scale sets; Azure keeps 800 deployments in a
        // resource group's history, and the walk stops at the 801st.
        let found = problems(Self.template([Self.nested(Self.scaleSet(), levels: 4, count: 800)]))
        XCTAssertEqual(found.count, 1)
        // Depth first: the first copy of each outer level, then the innermost level's copies; the 801st is there.
        XCTAssertEqual(found[0].field, "resources[0]" + String(repeating: ".properties.template.resources[0]", count: 3))
        XCTAssertEqual(found[0].limit, .deployments(800))
        // One level of 800 copies is within Azure's limits: 800 scale sets to choose from.
        let wide = problems(Self.template([Self.nested(Self.scaleSet(), levels: 1, count: 800)]))
        XCTAssertEqual(wide.map(\.field), ["resources"])
        XCTAssertEqual(wide[0].allowed?.count, 800)
        // Each copy is told apart by its deployment's name, and that label chooses it.
        XCTAssertEqual(Set(wide[0].allowed ?? []).count, 800)
        XCTAssertEqual(wide[0].allowed?.prefix(2), ["d0-0/web", "d0-1/web"])
        XCTAssertEqual(wide[0].remedy?.setting, .resource)
        let chosen = try ScaleSetImport.read(Self.template([Self.nested(Self.scaleSet(), levels: 1, count: 800)]), resource: "d0-799/web")
        XCTAssertEqual(chosen.resource, "d0-799/web")
        XCTAssertEqual(chosen.definition.name, "web")
        // The scale set's name alone names 800: refused, with the labels that choose one.
        XCTAssertThrowsError(try ScaleSetImport.read(Self.template([Self.nested(Self.scaleSet(), levels: 1, count: 3)]), resource: "web")) { error in
            let problem = (error as? ValidationFailure)?.problems.first
            XCTAssertEqual(problem?.location, .setting(.resource, value: "web"))
            XCTAssertEqual(problem?.allowed, ["d0-0/web", "d0-1/web", "d0-2/web"])
        }
        // Two deployments of one name: the second copy's label is numbered, and chooses it.
        guard case .object(var fixed) = Self.nested(Self.scaleSet(), levels: 1, count: 2) else { return XCTFail("not an object") }
        fixed["name"] = .string("same")
        let twice = Self.template([.object(fixed)])
        XCTAssertEqual(problems(twice).first?.allowed, ["same/web", "same/web#2"])
        XCTAssertEqual(try ScaleSetImport.read(twice, resource: "same/web#2").resource, "same/web#2")
    }

    func testATemplateOfMoreThan800ResourcesOnceExpandedIsRefused() {
        var copied = Self.scaleSet()
        if case .object(var members) = copied {
            members["name"] = .string("[concat('web', copyIndex())]")
            members["copy"] = .object(["name": .string("web"), "count": .int(500)])
            copied = .object(members)
        }
        let found = problems(Self.template([copied, copied]))
        XCTAssertEqual(found.map(\.field), ["resources[1].copy.count"])
        XCTAssertEqual(found[0].limit, .resourcesPerTemplate(800))
    }

    /// Every resource counts towards the 800, not only scale sets and deployments: 799 storage
    /// accounts and a scale set import; a storage copy loop of 800 beside it is refused at its
    /// count; a count that needs a deployment to evaluate counts as one; a count over 800 is named.
    func testEveryResourceCountsTowardsThe800() {
        func storage(_ count: JSON?) -> JSON {
            var members: [String: JSON] = ["type": .string("Microsoft.Storage/storageAccounts"), "name": .string("s")]
            if let count { members["copy"] = .object(["name": .string("s"), "count": count]) }
            return .object(members)
        }
        XCTAssertNoThrow(try ScaleSetImport.read(Self.template([storage(.int(799)), Self.scaleSet()])))
        let over = problems(Self.template([Self.scaleSet(), storage(.int(800))]))
        XCTAssertEqual(over.map(\.field), ["resources[1].copy.count"])
        XCTAssertEqual(over.first?.limit, .resourcesPerTemplate(800))
        let plain = problems(Self.template(Array(repeating: storage(nil), count: 800) + [Self.scaleSet()]))
        XCTAssertEqual(plain.map(\.field), ["resources[800]"])
        XCTAssertNoThrow(try ScaleSetImport.read(Self.template([storage(.string("[length(reference('x').y)]")), Self.scaleSet()])))
        // A whole count written 400.0 counts as 400.
        XCTAssertNoThrow(try ScaleSetImport.read(Self.template([storage(.double(400)), storage(.int(399)), Self.scaleSet()])))
        XCTAssertEqual(problems(Self.template([storage(.double(400)), storage(.int(400)), Self.scaleSet()])).map(\.field), ["resources[2]"])
        // A copy count Azure refuses is named, whatever the resource.
        XCTAssertEqual(problems(Self.template([storage(.int(5_000)), Self.scaleSet()])).map(\.field), ["resources[0].copy.count"])
    }

    func testSearchesOverLongGeneratedTextAreChargedNotQuadratic() throws {
        // A text of 512 KiB of 'a' searched for 256 KiB of 'a' then 'b': a naive search compares
        // 2^36 characters; a linear one reads each once. Every search is charged to the budget.
        let variables: [String: JSON] = ["long": .string("[padLeft('', 16000, 'a')]"),
                                         "t": .string("[replace(replace(replace(replace(replace(variables('long'), 'a', 'aa'), 'a', 'aa'), 'a', 'aa'), 'a', 'aa'), 'a', 'aa')]"),
                                         "n": .string("[concat(substring(variables('t'), 0, 200000), 'b')]")]
        for (function, expected) in [("indexOf", -1), ("lastIndexOf", -1)] {
            var resource = Self.scaleSet()
            if case .object(var members) = resource {
                members["sku"] = .object(["capacity": .string("[add(3, \(function)(variables('t'), variables('n')))]")])
                resource = .object(members)
            }
            let imported = try ScaleSetImport.read(Self.template([resource], variables: variables))
            XCTAssertEqual(imported.definition.capacity, 3 + expected, function)
        }
        // lastIndexOf finds the last place: 'ab' in 'abab' is at 2, 'a' in 'aaa' at 2.
        XCTAssertEqual(ARMEvaluatorProbe.lastIndex("ab", in: "abab"), 2)
        XCTAssertEqual(ARMEvaluatorProbe.lastIndex("aa", in: "aaa"), 1)
        XCTAssertEqual(ARMEvaluatorProbe.firstIndex("aab", in: "aaaab"), 2)
        // split by many separators over a long text charges each pass: the budget ends it.
        let splitter: [String: JSON] = ["long": .string("[padLeft('', 16000, 'a')]"),
                                        "t": .string("[replace(replace(replace(replace(replace(replace(variables('long'), 'a', 'aa'), 'a', 'aa'), 'a', 'aa'), 'a', 'aa'), 'a', 'aa'), 'a', 'aa')]"),
                                        "seps": .string("[map(range(0, 10000), lambda('i', concat('x', string(lambdaVariables('i')))))]")]
        var resource = Self.scaleSet()
        if case .object(var members) = resource {
            members["sku"] = .object(["capacity": .string("[length(split(variables('t'), variables('seps')))]")])
            resource = .object(members)
        }
        let found = problems(Self.template([resource], variables: splitter))
        XCTAssertEqual(found.count, 1)
        XCTAssertEqual(found[0].limit, .values(4 << 20))
    }

    func testAnExtensionResourceIdWithAnEmptyTypeIsAProblemNotATrap() {
        for (arguments, allowed) in [("'a', '', 'b'", "expects a resource type Namespace/type as argument 2"),
                                     ("'a', 'Microsoft.Authorization/locks'", "takes at least 3 argument(s), not 2"),
                                     ("'a', 'Microsoft.Authorization/locks', 'x', 'y'", "takes 1 name(s), not 2"),
                                     ("'a', 'Microsoft.Authorization', 'b'", "expects a resource type Namespace/type as argument 2"),
                                     ("'a', 'Microsoft.Authorization/locks', ''", "has an empty name")] {
            var resource = Self.scaleSet()
            if case .object(var members) = resource {
                members["sku"] = .object(["capacity": .string("[length(extensionResourceId(\(arguments)))]")])
                resource = .object(members)
            }
            let found = problems(Self.template([resource]))
            XCTAssertEqual(found.map(\.field), ["resources[0].sku.capacity"], arguments)
            XCTAssertTrue(found.first?.message.contains(allowed) == true, "\(arguments): \(found)")
        }
        // A well-formed one evaluates.
        var resource = Self.scaleSet()
        if case .object(var members) = resource {
            members["sku"] = .object(["capacity": .string("[length(extensionResourceId('/s', 'Microsoft.Authorization/locks', 'l'))]")])
            resource = .object(members)
        }
        // "/s/providers/Microsoft.Authorization/locks/l" is 44 characters.
        XCTAssertEqual(try ScaleSetImport.read(Self.template([resource])).definition.capacity, 44)
    }

    func testAContextNameGivenTwiceInAnyCaseIsRefused() throws {
        XCTAssertThrowsError(try ARMDeploymentContext.parse(["location=eastus", "Location=westeurope"], field: "--context")) { error in
            let problems = (error as? ValidationFailure)?.problems ?? []
            XCTAssertEqual(problems.map(\.field), ["--context Location=westeurope"])
        }
        XCTAssertEqual(try ARMDeploymentContext.parse(["LOCATION=westeurope", "resourceGroup=rg"], field: "--context").location, "westeurope")
    }
}

/// The evaluator's text search, seen from a test (the search is internal to AzureWire).
enum ARMEvaluatorProbe {
    static func lastIndex(_ needle: String, in text: String) -> Int { evaluate("lastIndexOf('\(text)', '\(needle)')") }
    static func firstIndex(_ needle: String, in text: String) -> Int { evaluate("indexOf('\(text)', '\(needle)')") }

    static func evaluate(_ expression: String) -> Int {
        var resource = HostileARMTests.scaleSet()
        if case .object(var members) = resource {
            members["sku"] = .object(["capacity": .string("[add(100, \(expression))]")])
            resource = .object(members)
        }
        return ((try? ScaleSetImport.read(HostileARMTests.template([resource])).definition.capacity) ?? -1000) - 100
    }
}
