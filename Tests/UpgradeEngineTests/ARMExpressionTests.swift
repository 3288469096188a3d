@testable import AzureWire
import Formats
import XCTest

/// The template expression language and its functions, value by value, as the ARM template
/// function reference documents them.
final class ARMExpressionTests: XCTestCase {
    /// The value of `[expression]` in a template with a few parameters and variables.
    func value(_ expression: String, copy: [String: Int] = [:]) throws -> JSON {
        let template: JSON = .object([
            "parameters": .object(["zones": .object(["type": .string("array"), "defaultValue": .array([.int(1), .int(2), .int(3)])]),
                                   "prefix": .object(["type": .string("string"), "defaultValue": .string("Web")])]),
            "variables": .object(["config": .object(["port": .int(8080), "tags": .object(["team": .string("pay")])]),
                                  "copy": .array([.object(["name": .string("disks"), "count": .int(2),
                                                            "input": .object(["lun": .string("[copyIndex('disks')]")])])])]),
        ])
        let evaluator = ARMEvaluator(scope: ARMScope(template: template, path: "", given: [:]), context: ARMDeploymentContext())
        evaluator.copy = copy
        return try evaluator.value(.string("[\(expression)]"), at: "test")
    }

    func assertValue(_ expression: String, _ expected: JSON, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(try value(expression), expected, expression, file: file, line: line)
    }

    func testLiteralsAccessAndEscapes() throws {
        assertValue("'it''s'", .string("it's"))
        assertValue("-42", .int(-42))
        assertValue("variables('config').port", .int(8080))
        assertValue("variables('config')['tags'].team", .string("pay"))
        assertValue("parameters('zones')[1]", .int(2))
        assertValue("variables('disks')[1].lun", .int(1))
        let evaluator = ARMEvaluator(scope: ARMScope(template: .object([:]), path: "", given: [:]), context: ARMDeploymentContext())
        XCTAssertEqual(try evaluator.value(.string("[[not an expression]"), at: "x"), .string("[not an expression]"))
        XCTAssertEqual(try evaluator.value(.string("[half"), at: "x"), .string("[half"))
    }

    func testStringFunctions() {
        assertValue("concat(toLower(parameters('prefix')), '-', string(3))", .string("web-3"))
        assertValue("format('{0}-{1:D3}-{2}', 'vm', 7, true())", .string("vm-007-True"))
        assertValue("toUpper(substring('abcdef', 1, 3))", .string("BCD"))
        assertValue("take('abcdef', 2)", .string("ab"))
        assertValue("skip('abcdef', 4)", .string("ef"))
        assertValue("split('a,b;c', createArray(',', ';'))[2]", .string("c"))
        assertValue("replace('a-b-c', '-', '')", .string("abc"))
        assertValue("trim('  x ')", .string("x"))
        assertValue("indexOf('abcABC', 'C')", .int(2))
        assertValue("lastIndexOf('abcABC', 'c')", .int(5))
        assertValue("startsWith('Hello', 'he')", .bool(true))
        assertValue("length('héllo')", .int(5))
        assertValue("string(variables('config').tags)", .string("{\"team\":\"pay\"}"))
        assertValue("uri('https://a.blob/x/y.json', 'z.sh')", .string("https://a.blob/x/z.sh"))
        assertValue("padLeft('7', 3, '0')", .string("007"))
    }

    func testCollectionsAndLogic() {
        assertValue("concat(createArray(1), parameters('zones'))", .array([.int(1), .int(1), .int(2), .int(3)]))
        assertValue("union(createArray(1, 2), createArray(2, 3))", .array([.int(1), .int(2), .int(3)]))
        assertValue("union(createObject('a', 1), createObject('b', 2)).b", .int(2))
        assertValue("length(parameters('zones'))", .int(3))
        assertValue("empty(createArray())", .bool(true))
        assertValue("contains(variables('config'), 'PORT')", .bool(true))
        assertValue("contains(parameters('zones'), 2)", .bool(true))
        assertValue("first(parameters('zones'))", .int(1))
        assertValue("last(parameters('zones'))", .int(3))
        assertValue("range(5, 3)", .array([.int(5), .int(6), .int(7)]))
        assertValue("coalesce(null(), null(), 'x')", .string("x"))
        assertValue("if(equals(1, 1), 'yes', reference('never-evaluated'))", .string("yes"))
        assertValue("and(true(), or(false(), not(false())))", .bool(true))
        assertValue("greaterOrEquals(3, 3)", .bool(true))
        assertValue("less('a', 'b')", .bool(true))
        assertValue("add(mul(3, 4), sub(10, div(9, 2)))", .int(18))
        assertValue("mod(-7, 3)", .int(-1))
        assertValue("min(parameters('zones'))", .int(1))
        assertValue("max(4, 9, 2)", .int(9))
        assertValue("int('42')", .int(42))
        assertValue("bool('TRUE')", .bool(true))
        assertValue("json('{\"a\": [1]}').a[0]", .int(1))
        assertValue("createObject('k', 'v')", .object(["k": .string("v")]))
    }

    func testLambdas() {
        assertValue("map(parameters('zones'), lambda('z', string(lambdaVariables('z'))))", .array([.string("1"), .string("2"), .string("3")]))
        assertValue("filter(parameters('zones'), lambda('z', greater(lambdaVariables('z'), 1)))", .array([.int(2), .int(3)]))
        assertValue("reduce(parameters('zones'), 0, lambda('sum', 'z', add(lambdaVariables('sum'), lambdaVariables('z'))))", .int(6))
        assertValue("sort(createArray(3, 1, 2), lambda('a', 'b', less(lambdaVariables('a'), lambdaVariables('b'))))", .array([.int(1), .int(2), .int(3)]))
        assertValue("toObject(parameters('zones'), lambda('z', format('zone{0}', lambdaVariables('z')))).zone2", .int(2))
    }

    func testDeploymentFunctionsAndCopyIndex() throws {
        assertValue("resourceGroup().location", .string("eastus"))
        assertValue("subscription().subscriptionId", .string("00000000-0000-0000-0000-000000000000"))
        assertValue("deployment().name", .string("rehearse"))
        assertValue("environment().name", .string("AzureCloud"))
        assertValue("resourceId('Microsoft.Network/loadBalancers/probes', 'lb', 'http')",
                    .string("/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/rehearse-rg/providers/Microsoft.Network/loadBalancers/lb/probes/http"))
        XCTAssertEqual(try value("copyIndex(1)", copy: ["": 2]), .int(3))
        XCTAssertEqual(try value("copyIndex('loop')", copy: ["loop": 4]), .int(4))
        XCTAssertEqual(try value("guid('a', 'b')"), try value("guid('a', 'b')"), "deterministic")
    }

    func testFailuresArePlacedAtTheirPath() {
        for expression in ["reference('x').id", "noSuch()", "div(1, 0)", "add(9223372036854775807, 1)", "parameters('zones')[7]",
                           "concat('a'", "copyIndex()", "range(0, 100000)", "lambda('x', 1)"] {
            XCTAssertThrowsError(try value(expression), expression) { error in
                XCTAssertEqual((error as? ARMFailure)?.path, "test", expression)
            }
        }
        // An undeclared name is placed where names are declared.
        XCTAssertThrowsError(try value("variables('missing')")) { error in XCTAssertEqual((error as? ARMFailure)?.path, "variables") }
    }
}
