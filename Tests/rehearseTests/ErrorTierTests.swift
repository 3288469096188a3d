import ArgumentParser
import AzureWire
import Formats
import Foundation
import FoundationXML
import LuaHost
@testable import rehearse
import Reports
import Scenario
import Serve
import UpgradeEngine
import XCTest

/// The two tiers of errors as the command line sees them: options checked into typed errors
/// located at the option, lower modules' errors turned into diagnostics (tier two) whose
/// locations stay typed, and the flags spelled only here.
final class ErrorTierTests: XCTestCase {
    /// A scenario file in a fresh temporary folder.
    func scenario(_ text: String) throws -> String {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("rehearse-tier-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let path = dir.appendingPathComponent("scenario.lua").path
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    let scaleSet = """
        scaleset {
          name = "web", capacity = 4, model = { image = "v1" },
          upgradePolicy = { mode = "Rolling" },
          healthExtension = { protocol = "http", port = 8000, requestPath = "/health" },
        }
        """

    func testBadMaxProbesIsLocatedAtItsOptionAndExitsTwo() throws {
        let arguments = try ScenarioArguments.parse(["x.lua", "--max-probes", "0"])
        XCTAssertThrowsError(try arguments.loading.loader(seed: 0, overrides: [], parameters: [:], print: { _ in })) { error in
            let refused = error as? any UserFacingError
            XCTAssertEqual(refused?.place, .option("--max-probes"))
            XCTAssertEqual(refused?.exitCode, 2)
            XCTAssertEqual(Diagnostic.of(error).map(\.exitCode), [2])
        }
    }

    func testEveryRunLimitHasTheOptionTheCommandLineDeclares() throws {
        let options = RunLimit.allCases.map { Diagnostics.option(for: $0) } + [LuaRunLimit.instructions, .cpuTime].map { Diagnostics.option(for: $0) }
        XCTAssertEqual(Set(options).count, 7)
        for option in options {
            // Each spelling is an option ScenarioArguments takes: a value of 0 is refused at it.
            let arguments = try ScenarioArguments.parse(["x.lua", option, "0"])
            XCTAssertThrowsError(try arguments.loading.loader(seed: 0, overrides: [], parameters: [:], print: { _ in })) { error in
                XCTAssertEqual((error as? any UserFacingError)?.place, .option(option))
            }
        }
    }

    func testBadParameterOptionIsLocatedAtItsOption() throws {
        let arguments = try ScenarioArguments.parse(["x.lua", "--param", "noequals"])
        XCTAssertThrowsError(try arguments.loading.loader(seed: 0, overrides: [], parameters: [:], print: { _ in })) { error in
            XCTAssertEqual((error as? InputError)?.place, .option("--param"))
            XCTAssertEqual((error as? InputError)?.value, "noequals")
            XCTAssertEqual((error as? InputError)?.exitCode, 2)
        }
    }

    func testScriptErrorBecomesADiagnosticAtItsFileAndLine() throws {
        let path = try scenario(scaleSet + "\nhealth(function(vm) error('down') end)\nat('PT1M', function() end)")
        let definition = try ScenarioDefinition(luaScript: path, options: ScenarioOptions())
        XCTAssertThrowsError(try Rehearsal.run(definition, seed: 0)) { error in
            let diagnostics = Diagnostic.of(error)
            XCTAssertEqual(diagnostics.count, 1)
            guard case .script(let line)? = diagnostics.first?.location else { return XCTFail("\(diagnostics)") }
            XCTAssertEqual(line.line, 6)
            XCTAssertTrue(line.file.hasSuffix("scenario.lua"), line.file)
            XCTAssertEqual(diagnostics.first?.context, "health of web_0 at PT0S")
            XCTAssertEqual(diagnostics.first?.exitCode, 2)
        }
    }

    func testDefinitionProblemsKeepTheirFieldAndTheDefinitionAsContext() {
        let definition = ScenarioError.definition([Problem(field: "scaleset.capacity", "is required"),
                                                   Problem(at: .call("expect", at: ScriptLine(file: "x.lua", line: 9)), "unknown key bogus")],
                                                  location: "x.lua:1")
        var required = Diagnostic("is required", location: .document(path: nil, field: "scaleset.capacity"), context: "x.lua:1")
        // The scaleset call's line, typed for JSON.
        required.definedAt = ScriptLine(file: "x.lua", line: 1)
        XCTAssertEqual(Diagnostic.of(definition), [
            required,
            // A call's problem is at the call, not under the scaleset the definition names.
            Diagnostic("unknown key bogus", location: .call("expect", at: ScriptLine(file: "x.lua", line: 9))),
        ])
    }

    func testFailedExpectationExitsOneAtItsCall() {
        let failed = ExpectationResult(location: "x.lua:9", key: .code, expected: .equal(.text("Faulted")), actual: .text("Completed"), held: false)
        let diagnostics = Diagnostic.of(failed)
        XCTAssertEqual(diagnostics.map(\.location), [.call("expect", at: ScriptLine(file: "x.lua", line: 9))])
        XCTAssertEqual(diagnostics.map(\.exitCode), [1])
        XCTAssertEqual(CommandFailure(diagnostics, exitCode: 1).exitCode, 1)
    }

    func testRunFailureKeepsItsErrorsLocationAndExitCode() {
        let lua = LuaError(kind: .runtime, message: "boom", location: "x.lua:3")
        let failure = RunFailure(seed: 11, error: .script(lua, context: nil))
        XCTAssertEqual(failure.place, .script(ScriptLine(file: "x.lua", line: 3)))
        XCTAssertEqual(Diagnostic.of(failure).map(\.location), [.script(ScriptLine(file: "x.lua", line: 3))])
        XCTAssertEqual(Diagnostic.of(failure).map(\.exitCode), [2])
    }

    func testBadDocumentFieldCarriesItsPathAndField() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("rehearse-tier-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let path = dir.appendingPathComponent("vmss.json").path
        // Azure's own example with two fields broken: a percent out of range, a capacity as text.
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        var text = try String(contentsOfFile: root.appendingPathComponent("Import/az-vmss-show-zonal.json").path, encoding: .utf8)
        text = text.replacingOccurrences(of: "\"maxBatchInstancePercent\": 34", with: "\"maxBatchInstancePercent\": 340")
        text = text.replacingOccurrences(of: "\"capacity\": 9", with: "\"capacity\": \"nine\"")
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        XCTAssertThrowsError(try importScaleSet(path, resource: nil, parameters: nil)) { error in
            guard let failure = error as? CommandFailure else { return XCTFail("\(error)") }
            XCTAssertEqual(failure.exitCode, 2)
            XCTAssertEqual(Set(failure.diagnostics.compactMap(\.location)),
                           [.document(path: path, field: "upgradePolicy.rollingUpgradePolicy.maxBatchInstancePercent"),
                            .document(path: path, field: "sku.capacity")])
        }
    }

    func testLowerSettingsAreSpelledAsFlagsOnlyByTheCommandLine() {
        XCTAssertEqual(Diagnostics.text(of: .setting(.parameter("boots"), value: "many")), "--param boots=many")
        XCTAssertEqual(Diagnostics.text(of: .setting(.policyOverride("upgradePolicy.mode"), value: nil)), "--set upgradePolicy.mode")
        XCTAssertEqual(Diagnostics.text(of: .setting(.jobs, value: "4")), "--jobs 4")
        XCTAssertEqual(Diagnostics.text(of: .call("expect", at: ScriptLine(file: "x.lua", line: 9))), "x.lua:9: expect")
        XCTAssertEqual(Diagnostics.text(of: .call("expect", at: ScriptLine(file: "x.lua", line: 9)), expectation: true), "expect at x.lua:9")
        XCTAssertEqual(Diagnostics.text(of: .document(path: "vmss.json", field: "sku.capacity")), "vmss.json: sku.capacity")
        XCTAssertEqual(Diagnostics.text(of: .setting(.caCertificate, value: "/x/ca.pem")), "--ca-cert /x/ca.pem")
        XCTAssertEqual(Diagnostics.text(of: .setting(.resource, value: "web")), "--resource web")
    }

    func testServeErrorsNameTheirInputTypedAndKeepTheRunsError() {
        let port = ServeError.input(.port, value: "8443", problem: "cannot listen on 127.0.0.1")
        XCTAssertEqual(port.place, .setting(.port, value: "8443"))
        XCTAssertEqual(port.exitCode, 2)
        XCTAssertFalse(port.description.contains("--"))
        let limit = RunLimitExceeded(limit: .probes, allowed: 5, time: 0, detail: "")
        let run = ServeError.run(.runLimit(limit))
        XCTAssertEqual(Diagnostic.of(run), Diagnostic.of(ScenarioError.runLimit(limit)))
    }

    func testAChoiceAmongScaleSetsCarriesItsRemedyAsData() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        let path = root.appendingPathComponent("Import/arm-copy-per-zone.json").path
        XCTAssertThrowsError(try importScaleSet(path, resource: nil, parameters: nil)) { error in
            guard let failure = error as? CommandFailure else { return XCTFail("\(error)") }
            XCTAssertEqual(failure.diagnostics.map(\.location), [.document(path: path, field: "resources")])
        }
        let document = try JSON.parse(String(contentsOfFile: path, encoding: .utf8), comments: true)
        XCTAssertThrowsError(try ScaleSetImport.read(document, resource: nil, parameters: nil, context: ARMDeploymentContext())) { error in
            let problems = (error as? ValidationFailure)?.problems ?? []
            XCTAssertEqual(problems.map(\.remedy), [Remedy(.resource, placeholder: "NAME", scriptForm: "resource = \"NAME\"")])
        }
        XCTAssertThrowsError(try ScaleSetImport.read(document, resource: "nope", parameters: nil, context: ARMDeploymentContext())) { error in
            XCTAssertEqual((error as? ValidationFailure)?.place, .setting(.resource, value: "nope"))
        }
    }

    func testJUnitTakesTheLineFromTheTypedLocation() throws {
        // A chunk name with colons of its own: only the typed location knows which part is the line.
        let failed = ExpectationResult(location: "C:/ci/x.lua:12", key: .code, expected: .equal(.text("Faulted")), actual: .text("Completed"), held: false)
        XCTAssertEqual(failed.place, .call("expect", at: ScriptLine(file: "C:/ci/x.lua", line: 12)))
        let xml = try JUnit.xml([JUnit.Scenario(path: "x.lua", results: [failed], error: nil, seconds: 0)])
        let names = try XMLDocument(xmlString: xml).nodes(forXPath: "//testcase/failure/../@name").map(\.stringValue)
        XCTAssertEqual(names, ["expect at line 12: code = Faulted"])
    }

    func testOutcomesTheOutputShowsRenderNothingButKeepTheirCode() {
        let shown = CommandFailure.shown(exitCode: 1)
        XCTAssertEqual(Diagnostic.of(shown), [])
        XCTAssertEqual(Diagnostics.render(shown), 1)
        XCTAssertEqual(Diagnostics.render(CommandFailure.shown(exitCode: 2)), 2)
    }
}
