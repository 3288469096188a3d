import Foundation
import LuaHost
import Plugins
import Scenario
import UpgradeEngine
import XCTest

final class PluginTests: XCTestCase {
    func runExample(_ bundle: String) throws -> (RunRecord, [Event]) {
        let (result, events) = try runScenario(repositoryRoot + "/plugins/\(bundle)/example.lua")
        XCTAssertEqual(result.failedExpectations, [], bundle)
        XCTAssertGreaterThan(result.expectations.count, 0)
        return (result, events)
    }

    func testPrimaryReplicaUpgradesReplicasFirstAndSkipsWitness() throws {
        let (result, events) = try runExample("primary-replica")
        XCTAssertEqual(batches(events), ["1, 2", "4", "0, 3"])
        XCTAssertEqual(events.filter { $0.kind == .batchStarted }.map(\.phase), [0, 0, 1])
        XCTAssertEqual(result.summary.skipped, [5])
    }

    /// `phase(tier.phase)` and `health(tier.metrics(...))` are the bundle's two documented forms:
    /// they must plan the same upgrade, witness skipped in both.
    func testPrimaryReplicaPhaseAndMetricsFormsAgree() throws {
        let example = try String(contentsOfFile: repositoryRoot + "/plugins/primary-replica/example.lua", encoding: .utf8)
        let phaseForm = example.replacingOccurrences(
            of: "health(tier.metrics(function(vm, now) return { applicationHealthState = \"Healthy\" } end))",
            with: "health(function(vm, now) return { applicationHealthState = \"Healthy\" } end)\nphase(tier.phase)")
        XCTAssertNotEqual(phaseForm, example)
        let (metricsResult, metricsEvents) = try runExample("primary-replica")
        let (phaseResult, phaseEvents) = try runScenario(try writeScenario(phaseForm))
        XCTAssertEqual(phaseResult.failedExpectations, [])
        XCTAssertEqual(batches(phaseEvents), batches(metricsEvents))
        XCTAssertEqual(phaseResult.summary.skipped, [5])
        XCTAssertEqual(phaseResult.summary.skipped, metricsResult.summary.skipped)
    }

    func testSlowBootWaitsForTheApplication() throws {
        let (_, events) = try runExample("slow-boot")
        // Each batch: 4 minutes of upgrade, then 90 s until the application answers.
        let starts = events.filter { $0.kind == .batchStarted }.map(\.time)
        XCTAssertEqual(starts, [180_000, 510_000, 840_000, 1_170_000, 1_500_000])
    }

    /// The shipped approval policy answers each event 12 minutes after it is raised: the upgrade
    /// is scheduled 12 minutes late, and its four batches of two (25% of 8) start 24, 36, 48 and
    /// 60 minutes later than on the same scale set without hooks; the held instance 3 is taken
    /// out of the second batch and keeps its image, with the hook as its reason.
    func testBatchApprovalAnswersEachBatchAfterItsChecks() throws {
        let (result, events) = try runExample("batch-approval")
        let example = try String(contentsOfFile: repositoryRoot + "/plugins/batch-approval/example.lua", encoding: .utf8)
        var plain = example.replacingOccurrences(of: "on_hook(approval.approve { after = \"PT12M\", hold = \"3\" })", with: "")
        plain = plain.replacingOccurrences(of: "lifecycleHooksProfile = { lifecycleHooks = hooks },", with: "")
        plain = plain.replacingOccurrences(of: "successful = 7", with: "successful = 8")
        XCTAssertNotEqual(plain, example)
        let (plainResult, plainEvents) = try runScenario(try writeScenario(plain))
        XCTAssertEqual(plainResult.failedExpectations, [])
        let hooked = events.filter { $0.kind == .batchStarted }
        let unhooked = plainEvents.filter { $0.kind == .batchStarted }
        XCTAssertEqual(hooked.count, 4)
        XCTAssertEqual(zip(hooked, unhooked).map { $0.time - $1.time }, [2, 3, 4, 5].map { $0 * 12 * 60_000 })
        XCTAssertEqual(batches(events), ["0, 1", "2", "4, 5", "6, 7"])
        XCTAssertEqual(batches(plainEvents), ["0, 1", "2, 3", "4, 5", "6, 7"])
        XCTAssertEqual(result.instances.filter { $0.leftBehind != nil }.map(\.id), [3])
        XCTAssertEqual(result.instances[3].leftBehind, .rejectedByHook)
    }

    func testZoneOutageDrillFaultsTheUpgrade() throws {
        let (result, _) = try runExample("zone-outage-drill")
        XCTAssertEqual(result.summary.status?.error?.details.count, 3)
    }

    func testCatalogListsTheBundles() {
        let catalog = PluginCatalog(searchPath: [repositoryRoot + "/plugins"])
        XCTAssertEqual(catalog.bundles.map(\.manifest.name), ["alarm-rollback", "batch-approval", "primary-replica", "slow-boot", "zone-outage-drill"])
        XCTAssertEqual(catalog.problems, [])
        XCTAssertEqual(catalog.check(), [])
    }

    func makeBundle(_ name: String, manifest: String, files: [String: String] = ["init.lua": "return {}"]) throws -> String {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("plugins-\(UUID().uuidString)").path
        let folder = root + "/" + name
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try manifest.write(toFile: folder + "/rehearse-plugin.json", atomically: true, encoding: .utf8)
        for (file, text) in files { try text.write(toFile: folder + "/" + file, atomically: true, encoding: .utf8) }
        return root
    }

    func testIncompatibleBundleIsAClearError() throws {
        let root = try makeBundle("future", manifest: #"{"name": "future", "version": "3.0.0", "api": ">=2.0.0", "description": "needs API 2", "exports": {}}"#)
        var o = options()
        o.pluginPath = [root]
        let path = try writeScenario(baseScaleSet + "\nlocal f = require 'future'")
        XCTAssertThrowsError(try load(path: path, options: o)) { error in
            guard case ScenarioError.script(let lua, _) = error else { return XCTFail("\(error)") }
            XCTAssertEqual(lua.location.map { URL(fileURLWithPath: $0).lastPathComponent }, "scenario.lua:6")
        }
        XCTAssertThrowsError(try PluginCatalog(searchPath: [root]).resolver(lock: nil).select("future", by: "the scenario")) { error in
            let turnedDown = PluginResolution.TurnedDown(label: "future 3.0.0", folder: root + "/future", reasons: [.hostAPI(needs: ">=2.0.0", provides: "1.2.0")])
            XCTAssertEqual((error as? PluginProblem)?.resolution, .noVersionFits(name: "future", [turnedDown]))
        }
        XCTAssertEqual(PluginCatalog(searchPath: [root]).check().map(\.kind), [.incompatible])
    }

    func testMissingBundleIsAClearError() throws {
        let path = try writeScenario(baseScaleSet + "\nlocal f = require 'nowhere'")
        XCTAssertThrowsError(try load(path: path, options: options())) { error in
            guard case ScenarioError.script(let lua, _) = error else { return XCTFail("\(error)") }
            XCTAssertEqual(lua.location.map { URL(fileURLWithPath: $0).lastPathComponent }, "scenario.lua:6")
            // The path given, then the working folder's plugins folder.
            let searched = [repositoryRoot + "/plugins", FileManager.default.currentDirectoryPath + "/plugins"]
            XCTAssertEqual(lua.refusal, .module(name: "nowhere", .notFound(tried: searched)))
        }
    }

    func testManifestProblemsAreAllReported() throws {
        let root = try makeBundle("bad", manifest: #"{"name": "Bad Name", "version": "1.0", "api": "around 1", "extra": 1}"#)
        let catalog = PluginCatalog(searchPath: [root])
        XCTAssertEqual(catalog.bundles.count, 0)
        let problem = try XCTUnwrap(catalog.problems.first)
        for fragment in ["unknown field \"extra\"", "name \"Bad Name\" is not allowed", "version \"1.0\" is not SemVer",
                         "api: \"around\" in \"around 1\" is not a version comparator", "\"exports\" is missing", "\"description\" is missing"] {
            XCTAssertTrue(problem.contains(fragment), "«\(problem)» lacks «\(fragment)»")
        }
    }

    func testBundleFilesAreSandboxedAndCannotEscape() throws {
        let root = try makeBundle("sneaky", manifest: #"{"name": "sneaky", "version": "1.0.0", "api": "^1", "description": "tries to leave", "exports": {}}"#,
                                  files: ["init.lua": "return require 'sneaky.../../etc/passwd'"])
        var o = options()
        o.pluginPath = [root]
        let path = try writeScenario(baseScaleSet + "\nrequire 'sneaky'")
        XCTAssertThrowsError(try load(path: path, options: o)) { error in
            guard case ScenarioError.script(let lua, _) = error else { return XCTFail("\(error)") }
            XCTAssertEqual(lua.refusal, .module(name: "../../etc/passwd", .badName), "\(error)")
        }
    }

    func testSemVerRanges() throws {
        let v = SemVer(1, 4, 2)
        XCTAssertTrue(try SemVerRange(">=1.0.0 <2.0.0").contains(v))
        XCTAssertTrue(try SemVerRange("^1.2").contains(v))
        XCTAssertFalse(try SemVerRange("~1.3").contains(v))
        XCTAssertFalse(try SemVerRange("^2").contains(v))
        XCTAssertTrue(try SemVerRange("=1.4.2").contains(v))
        XCTAssertTrue(SemVer("1.0.0-beta")! < SemVer("1.0.0")!)
        XCTAssertNil(SemVer("1.0"))
        XCTAssertThrowsError(try SemVerRange(""))
    }
}
