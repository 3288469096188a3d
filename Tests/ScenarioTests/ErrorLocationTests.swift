import Formats
import AzureWire
import Foundation
import LuaHost
import Plugins
import Scenario
import UpgradeEngine
import XCTest

/// Tier one of the errors: every error a person sees carries where it is as a typed location
/// and the exit status it leads to; lower modules name what was wrong (a limit, a parameter, an
/// override), never a command-line flag.
final class ErrorLocationTests: XCTestCase {
    func testLuaLocationIsReadOnceIntoFileAndLine() {
        XCTAssertEqual(ScriptLine(lua: "scripts/rolling.lua:12"), ScriptLine(file: "scripts/rolling.lua", line: 12))
        // A chunk name may hold colons itself: the last one separates the line.
        XCTAssertEqual(ScriptLine(lua: "C:/work/x.lua:7"), ScriptLine(file: "C:/work/x.lua", line: 7))
        XCTAssertNil(ScriptLine(lua: "scripts/rolling.lua"))
        XCTAssertNil(ScriptLine(lua: "x.lua:seven"))
    }

    func testScriptErrorCarriesItsFileAndLineAndExitsTwo() throws {
        let path = try writeScenario(baseScaleSet + "\nhealth(function(vm) error('down') end)\nat('PT1M', function() end)")
        let definition = try ScenarioDefinition(luaScript: path, options: options())
        XCTAssertThrowsError(try Rehearsal.run(definition, seed: 3)) { error in
            guard let failure = error as? RunFailure, case .script(let lua, let context) = failure.error else { return XCTFail("\(error)") }
            guard case .script(let line)? = failure.place else { return XCTFail("\(String(describing: failure.place))") }
            XCTAssertEqual(line.line, 6)
            XCTAssertTrue(line.file.hasSuffix("scenario.lua"), line.file)
            XCTAssertEqual(lua.place, failure.place)
            XCTAssertEqual(failure.exitCode, 2)
            XCTAssertEqual(context, .callback("health", instance: "web_0", at: 0))
        }
    }

    func testDefinitionProblemsCarryTheirFieldOrCall() throws {
        let path = try writeScenario(baseScaleSet + "\n\n\nexpect { code = \"Completed\", bogus = 3 }\n")
        XCTAssertThrowsError(try ScenarioDefinition(luaScript: path, options: options())) { error in
            guard let scenario = error as? ScenarioError, case .definition(let problems, _) = scenario else { return XCTFail("\(error)") }
            XCTAssertEqual(scenario.exitCode, 2)
            guard case .call("expect", at: let line)? = scenario.place else { return XCTFail("\(problems)") }
            XCTAssertEqual(line.line, 8)
        }
        let missing = ScenarioError.definition([Problem(field: "scaleset.capacity", "is required")], location: "x.lua:1")
        XCTAssertEqual(missing.place, .document(path: nil, field: "scaleset.capacity"))
        // Lua gave no line: the call is named with the text it gave.
        XCTAssertEqual(Problem(call: "phase", at: "scenario", "needs rich states").location, .document(path: nil, field: "phase at scenario"))
    }

    /// Closed sets are checked when the scenario loads: a misspelt final code or error code is bad
    /// input (exit 2) at its `expect`, naming the values allowed, not a run that fails its expectation.
    func testAMisspeltCodeInAnExpectationIsRefusedWhenTheScenarioLoads() throws {
        for (field, value, allowed) in [("code", "Complete", RunningCode.allCases.map(\.rawValue)),
                                        ("errorCode", "MaxUnhealthy", UpgradeErrorCode.allCases.map(\.rawValue))] {
            let path = try writeScenario(baseScaleSet + "\n\nexpect { \(field) = \"\(value)\" }\n")
            XCTAssertThrowsError(try ScenarioDefinition(luaScript: path, options: options())) { error in
                guard let scenario = error as? ScenarioError, case .definition(let problems, _) = scenario else { return XCTFail("\(error)") }
                XCTAssertEqual(scenario.exitCode, 2)
                guard case .call("expect", at: let line)? = scenario.place else { return XCTFail("\(problems)") }
                XCTAssertEqual(line.line, 7)
                XCTAssertEqual(problems.count, 1)
                for name in allowed { XCTAssertTrue(problems[0].message.contains(name), "\(name) missing from \(problems[0].message)") }
            }
        }
        // Spelt right, the same table loads, typed.
        let path = try writeScenario(baseScaleSet + "\nexpect { code = \"Completed\", errorCode = \"MaxUnhealthyInstancePercentExceededInRollingUpgrade\" }\n")
        let expectation = try XCTUnwrap(try ScenarioDefinition(luaScript: path, options: options()).expectations.first)
        XCTAssertEqual(expectation.code, .completed)
        XCTAssertEqual(expectation.errorCode, .unhealthyDuringUpgrade)
    }

    func testParametersAndOverridesAreNamedNotSpelledAsFlags() throws {
        let path = try writeScenario(baseScaleSet + "\nlocal boots = param(\"boots\", 0.1)\n")
        var o = options()
        o.parameters = ["boots": "many", "other": "1"]
        XCTAssertThrowsError(try ScenarioDefinition(luaScript: path, options: o)) { error in
            guard case ScenarioError.definition(let problems, _) = error else { return XCTFail("\(error)") }
            XCTAssertEqual(problems.map(\.location), [.setting(.parameter("boots"), value: "many"), .setting(.parameter("other"), value: nil)])
            XCTAssertFalse(problems.contains { $0.field.contains("--") || $0.message.contains("--") }, "\(problems)")
        }
        let definition = try ScenarioDefinition(luaScript: try writeScenario(baseScaleSet), options: options())
        XCTAssertThrowsError(try Rehearsal.scaleSet(definition, overrides: [PolicyOverride(path: "rollingUpgradePolicy.maxBatchSize", value: "3")])) { error in
            guard case ScenarioError.definition(let problems, _) = error else { return XCTFail("\(error)") }
            XCTAssertEqual(problems.map(\.location), [.setting(.policyOverride("upgradePolicy.rollingUpgradePolicy.maxBatchSize"), value: nil)])
        }
    }

    func testRunLimitIsNamedByTheEngineAndExitsTwo() throws {
        let path = try writeScenario(baseScaleSet + "\nat('PT1M', function() update_model { image = 'v2' } end)\n")
        let definition = try ScenarioDefinition(luaScript: path, options: options())
        var inputs = RunInputs(seed: 0)
        inputs.runLimits.probes = 50
        XCTAssertThrowsError(try Rehearsal.run(definition, inputs)) { error in
            guard let failure = error as? RunFailure, case .runLimit(let limit) = failure.error else { return XCTFail("\(error)") }
            XCTAssertEqual(limit.limit, .probes)
            XCTAssertEqual(limit.allowed, 50)
            XCTAssertNil(limit.place)
            XCTAssertEqual(failure.exitCode, 2)
            XCTAssertFalse(limit.description.contains("--"), limit.description)
        }
    }

    func testRunWideScriptLimitsAreNamedByKind() {
        XCTAssertEqual(LuaError(kind: .runBudget(1_000), message: "").runLimit, .instructions)
        XCTAssertEqual(LuaError(kind: .runCPUTime(5_000), message: "").runLimit, .cpuTime)
        XCTAssertNil(LuaError(kind: .budget(1_000), message: "").runLimit)
        let limited = LuaError(kind: .runBudget(1_000), message: "", location: "x.lua:4")
        XCTAssertFalse(limited.description.contains("--"), limited.description)
        XCTAssertEqual(limited.place, .script(ScriptLine(file: "x.lua", line: 4)))
        XCTAssertEqual(limited.exitCode, 2)
    }

    func testExpectationResultIsAtItsCallAndExitsOne() {
        let failed = ExpectationResult(location: "x.lua:9", key: .code, expected: .equal(.text("Faulted")), actual: .text("Completed"), held: false)
        XCTAssertEqual(failed.place, .call("expect", at: ScriptLine(file: "x.lua", line: 9)))
        XCTAssertEqual(failed.exitCode, 1)
    }

    func testEveryLowerErrorCarriesItsPlaceAndExitCode() throws {
        let cases: [(any UserFacingError, Location?, Int32)] = [
            (NumberOutOfRange(field: "runs[3].lowestHealthy", value: "-1", allowed: "a whole number"), .document(path: nil, field: "runs[3].lowestHealthy"), 2),
            (ValidationFailure([Problem(field: "upgradePolicy.mode", "is required")]), .document(path: nil, field: "upgradePolicy.mode"), 2),
            (SweepPart.Failure(field: "runs[0].seed", "expected a whole number"), .document(path: nil, field: "runs[0].seed"), 2),
            (SweepThreadFailure(threads: 8, started: 3), .setting(.jobs, value: nil), 2),
            (PluginProblem(at: .setting(.repository, value: "ftp://x"), problem: "not a folder", allowed: nil), .setting(.repository, value: "ftp://x"), 2),
            (PluginProblem("the bundle x has no manifest"), nil, 2),
            (ScenarioError.file(path: "big.lua", problem: "is too large"), .file("big.lua"), 2),
            (ScenarioError.host("no Lua state"), nil, 2),
            (EngineError("no such instance"), nil, 2),
        ]
        for (error, place, code) in cases {
            XCTAssertEqual(error.place, place, "\(error)")
            XCTAssertEqual(error.exitCode, code, "\(error)")
        }
        XCTAssertThrowsError(try BoundedFile.read("/no/such/file", maxBytes: 10)) { error in
            XCTAssertEqual((error as? any UserFacingError)?.place, .file("/no/such/file"))
            XCTAssertEqual((error as? any UserFacingError)?.exitCode, 2)
        }
        XCTAssertThrowsError(try JSONDocument.read("/no/such/document.json")) { error in
            XCTAssertEqual((error as? any UserFacingError)?.place, .file("/no/such/document.json"))
        }
        guard case .failure(let refused) = Requirement.parse("Faulted <= lots") else { return XCTFail("parsed") }
        XCTAssertEqual(refused.exitCode, 2)
        XCTAssertEqual(refused.allowed, Requirement.allowedForm)
    }
}
