import Foundation
import LuaHost
import Plugins
import Scenario
import UpgradeEngine
import XCTest

/// A bundle that declares its options checks what a script passes it: the shipped slow-boot
/// reads `boot` (health) and `duration`, `failure_rate` (fault); anything else, or a value of
/// another type, stops the load at the script's line naming the bundle, its version and the
/// options it reads.
final class BundleOptionTests: XCTestCase {
    /// The Lua error loading `body` (after the base scale set) raised, with its location.
    func refusal(_ body: String) throws -> LuaError {
        let path = try writeScenario(baseScaleSet + "\nlocal sb = require 'slow-boot'\n" + body)
        do {
            _ = try load(path: path, options: options())
        } catch let ScenarioError.script(error, _) {
            return error
        }
        XCTFail("loaded: \(body)")
        return LuaError(kind: .runtime, message: "")
    }

    func testTheShippedBundlesDeclareTheOptionsTheirExamplesPass() throws {
        let catalog = PluginCatalog(searchPath: [repositoryRoot + "/plugins"])
        let declared = catalog.bundles.map { b in (b.manifest.name, (b.manifest.options ?? []).map(\.name)) }
        XCTAssertEqual(declared.map(\.0), ["alarm-rollback", "batch-approval", "primary-replica", "slow-boot", "zone-outage-drill"])
        XCTAssertEqual(declared.map(\.1), [["datapoints", "every", "from", "metric", "periods", "rollback", "threshold", "until"], ["after", "hold"],
                                           ["primaries", "witnesses"], ["boot", "duration", "failure_rate"], ["from", "to", "zone"]])
        let slowBoot = try XCTUnwrap(catalog.versions(of: "slow-boot").first?.manifest)
        XCTAssertEqual(slowBoot.options(of: "fault")?.map(\.name), ["duration", "failure_rate"])
        XCTAssertEqual(slowBoot.options(of: "health")?.map(\.name), ["boot"])
        // The right options still load and run (the example passes boot and duration).
        let (result, _) = try runScenario(repositoryRoot + "/plugins/slow-boot/example.lua")
        XCTAssertEqual(result.failedExpectations, [])
    }

    func testAnOptionTheExportDoesNotReadIsRefusedAtTheScriptsLine() throws {
        let error = try refusal("fault(sb.fault { duration = \"PT4M\", hang_rate = 0.05 })")
        XCTAssertEqual(error.location.map { URL(fileURLWithPath: $0).lastPathComponent }, "scenario.lua:7")
        XCTAssertTrue(error.message.hasPrefix("slow-boot 1.2.0: fault has no option 'hang_rate'"), error.message)
        XCTAssertTrue(error.message.contains("duration (duration, default \"PT4M\"), failure_rate (number, default 0)"), error.message)
        // boot is slow-boot's, but health's, not fault's.
        XCTAssertTrue(try refusal("fault(sb.fault { boot = 60 })").message.hasPrefix("slow-boot 1.2.0: fault has no option 'boot'"))
    }

    func testAValueOfAnotherTypeIsRefused() throws {
        let error = try refusal("health(sb.health { boot = true }(function() return { applicationHealthState = \"Healthy\" } end))")
        XCTAssertTrue(error.message.hasPrefix("slow-boot 1.2.0: option 'boot' of health takes a duration, not a boolean"), error.message)
        XCTAssertTrue(try refusal("fault(sb.fault { failure_rate = \"often\" })").message.contains("takes a number, not a string"))
    }

    /// Options given through a table with a metatable passed the guard: `__pairs` hid the typo
    /// from its walk and `__index` answered the bundle's reads. Both are refused at the script's
    /// line, naming the export's option table; a `__metatable` field does not hide one.
    func testAnOptionTableWithAMetatableIsRefused() throws {
        let cases = [
            "fault(sb.fault(setmetatable({}, { __index = { hang_rate = 0.05 } })))",
            "fault(sb.fault(setmetatable({ hang_rate = 0.05 }, { __pairs = function(t) return next, {}, nil end })))",
            "fault(sb.fault(setmetatable({ duration = \"PT4M\" }, { __metatable = false })))",
        ]
        for body in cases {
            let error = try refusal(body)
            XCTAssertEqual(error.location.map { URL(fileURLWithPath: $0).lastPathComponent }, "scenario.lua:7", body)
            XCTAssertTrue(error.message.hasPrefix("slow-boot 1.2.0: the option table passed to fault has a metatable; metatables are not allowed"),
                          error.message)
        }
    }

    /// A positional value is no option: it was skipped by the walk, now refused naming its key.
    func testAPositionalValueIsRefused() throws {
        let error = try refusal("fault(sb.fault { \"PT4M\", failure_rate = 0.1 })")
        XCTAssertTrue(error.message.hasPrefix("slow-boot 1.2.0: fault has no option [1]: options are named"), error.message)
    }

    func testManifestOptionsAreChecked() throws {
        let manifest = #"""
            {"name": "x", "version": "1.0.0", "api": "^1", "description": "d", "exports": {"f": "f{}"},
             "options": {"a": {"type": "number", "default": "fast", "doc": "a"}, "b": {"type": "colour", "doc": "b"},
                         "c": {"type": "string", "doc": "c", "exports": ["g"]}, "d": {"type": "integer", "default": 3}}}
            """#
        XCTAssertThrowsError(try PluginManifest.parse(manifest, file: "x/rehearse-plugin.json")) { error in
            let message = "\(error)"
            for fragment in ["options.a.default is a string; expected a number", "options.b.type is missing or not one of string, number",
                             "options.c.exports names \"g\", which the manifest does not export", "options.d.doc needs a one-line description"] {
                XCTAssertTrue(message.contains(fragment), "«\(message)» lacks «\(fragment)»")
            }
        }
    }
}
