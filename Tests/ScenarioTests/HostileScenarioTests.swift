import Formats
import Foundation
import LuaHost
import Plugins
import Reports
import Scenario
import UpgradeEngine
import XCTest

/// Hostile scenario scripts and bundles: every one ends as a script error naming the callback,
/// the line, the instance and the virtual time (or is made harmless), never as a crash, a hang or
/// a silently wrong run.
final class HostileScenarioTests: XCTestCase {
    /// The script error a scenario ends with (loading or running it), or nil when it ran.
    func scriptError(_ body: String, file: StaticString = #filePath, line: UInt = #line) throws -> (LuaError, ScriptContext?)? {
        let path = try writeScenario(baseScaleSet + "\n" + body)
        do {
            _ = try runScenario(path)
            return nil
        } catch ScenarioError.script(let error, let context) {
            return (error, context)
        } catch {
            XCTFail("not a script error: \(error)", file: file, line: line)
            return nil
        }
    }

    func testDeepTablesAreRefusedWhereverTheHostReadsThem() throws {
        let deep = "local t = {} for i = 1, 40 do t = { k = t } end"
        for use in ["expect(t)", "update_model(t)", "manual_upgrade(t)"] {
            let script = deep + "\n" + (use == "expect(t)" ? use : "at('PT1M', function() \(use) end)")
            let (error, _) = try XCTUnwrap(scriptError(script), use)
            XCTAssertEqual(error.refusal, .value(path: "value" + String(repeating: ".k", count: 32), .tooDeep(32)), "\(use): \(error)")
            XCTAssertTrue(error.location?.hasSuffix("scenario.lua:7") ?? false, "\(use): \(String(describing: error.location))")
        }
        // The same inside scaleset { model = ... }.
        let path = try writeScenario("local t = 'v1' for i = 1, 40 do t = { k = t } end\nscaleset { name = 'web', capacity = 2, model = t }")
        XCTAssertThrowsError(try load(path: path, options: options())) { error in
            guard case ScenarioError.script(let e, _) = error else { return XCTFail("\(error)") }
            XCTAssertEqual(e.refusal, .value(path: "value.model" + String(repeating: ".k", count: 31), .tooDeep(32)), "\(e)")
        }
    }

    /// A refusal the script catches is its own business: the error it raises after is its own,
    /// with no refusal attached; one it lets through keeps the refusal.
    func testARefusalTheScriptCatchesIsNotCarriedIntoItsOwnError() throws {
        let deep = "local t = {} for i = 1, 40 do t = { k = t } end\n"
        let (caught, _) = try XCTUnwrap(scriptError(deep + "at('PT1M', function() local ok = pcall(update_model, t) error('mine: ' .. tostring(ok)) end)"))
        XCTAssertNil(caught.refusal)
        XCTAssertEqual(caught.kind, .runtime)
        let (through, _) = try XCTUnwrap(scriptError(deep + "at('PT1M', function() local ok, e = pcall(update_model, t) error(e, 0) end)"))
        XCTAssertEqual(through.refusal, .value(path: "value" + String(repeating: ".k", count: 32), .tooDeep(32)))
    }

    func testFaultResultTooDeepNamesFaultInstanceAndTime() throws {
        let (error, context) = try XCTUnwrap(scriptError("""
            fault(function(vm, op) local t = {} for i = 1, 40 do t = { t } end return t end)
            at("PT1M", function() update_model { image = "v2" } end)
            """))
        XCTAssertEqual(error.function, "fault")
        XCTAssertEqual(error.refusal, .value(path: "value" + String(repeating: "[1]", count: 32), .tooDeep(32)), "\(error)")
        XCTAssertEqual(context, .callback("fault", instance: "web_0", at: 60_000))
    }

    func testCyclicCustomMetricsNameHealthInstanceAndTime() throws {
        let (error, context) = try XCTUnwrap(scriptError("""
            health(function(vm) local c = {} c.rollingUpgrade = c return { applicationHealthState = "Healthy", customMetrics = c } end)
            at("PT1M", function() update_model { image = "v2" } end)
            """))
        XCTAssertEqual(error.function, "health")
        XCTAssertEqual(error.refusal, .value(path: "value.rollingUpgrade", .cycle), "\(error)")
        XCTAssertEqual(context, .callback("health", instance: "web_0", at: 60_000))
    }

    func testPhaseCalledDuringAnActionRunsUnderTheMemoryCap() throws {
        let (error, context) = try XCTUnwrap(scriptError("""
            phase(function(vm) local s = string.rep("x", 1e9) return 0 end)
            at("PT1M", function() update_model { image = "v2" } end)
            """))
        XCTAssertEqual(error.kind, .memory(64 << 20))
        XCTAssertEqual(error.function, "phase")
        XCTAssertEqual(context, .callback("phase", instance: "web_0", at: 60_000))
    }

    func testNestedFailureEndsTheRunEvenWhenTheScriptCatchesIt() throws {
        let (error, context) = try XCTUnwrap(scriptError("""
            phase(function(vm)
              while true do end
            end)
            at("PT1M", function() local ok = pcall(update_model, { image = "v2" }) print("caught", ok) end)
            """))
        XCTAssertEqual(error.kind, .budget(10_000_000))
        XCTAssertTrue(error.location?.hasSuffix("scenario.lua:7") ?? false, "\(String(describing: error.location))")
        XCTAssertEqual(context, .callback("phase", instance: "web_0", at: 60_000))
    }

    func testNestedBudgetIsTheSameOnEveryRun() throws {
        // The action's own work plus the phase calls would exceed one shared budget; each call
        // has its own, so this passes every time (it failed 11 of 15 runs when budgets were shared).
        let path = try writeScenario(baseScaleSet + """

            phase(function(vm) local x = 0 for i = 1, 600000 do x = x + i end return 0 end)
            at("PT1M", function() local x = 0 for i = 1, 3000000 do x = x + i end update_model { image = "v2" } end)
            expect { code = "Completed" }
            """)
        for _ in 0..<5 {
            let (result, _) = try runScenario(path)
            XCTAssertEqual(result.failedExpectations, [])
        }
    }

    func testActionsOnlyInsideAtAndDefinitionsOnlyAtTopLevel() throws {
        let inPhase = try XCTUnwrap(scriptError("""
            phase(function(vm) update_model { image = "v" .. vm.id } return 0 end)
            at("PT1M", function() update_model { image = "v2" } end)
            """))
        XCTAssertEqual(inPhase.0.function, "phase")
        XCTAssertEqual(inPhase.0.refusal, .misplaced(function: "update_model", during: "phase"))
        XCTAssertEqual(inPhase.1, .callback("phase", instance: "web_0", at: 60_000))

        let atInHealth = try XCTUnwrap(scriptError("""
            health(function(vm) at("PT9M", function() end) return { applicationHealthState = "Healthy" } end)
            at("PT1M", function() end)
            """))
        XCTAssertEqual(atInHealth.0.refusal, .misplaced(function: "at", during: "health"))

        let healthInAt = try XCTUnwrap(scriptError("at('PT1M', function() health(function() return nil end) end)"))
        XCTAssertEqual(healthInAt.0.refusal, .misplaced(function: "health", during: "at"))
    }

    func testAtInsideAtIsScheduled() throws {
        var printed: [String] = []
        var o = options(printed: { printed.append($0) })
        o.pluginPath = []
        let path = try writeScenario(baseScaleSet + """

            at("PT1M", function() at("PT3M", function() print("inner at", os.clock()) end) end)
            at("PT2M", function() print("outer at", os.clock()) end)
            """)
        _ = try load(path: path, options: o).run()
        XCTAssertEqual(printed, ["outer at\t120.0", "inner at\t180.0"])
        let past = try XCTUnwrap(scriptError("at('PT2M', function() at('PT1M', function() end) end)"))
        XCTAssertEqual(past.0.refusal, .past(time: 60_000, now: 120_000))
    }

    func testCapacityOfOneHundredThousandRuns() throws {
        let path = try writeScenario("""
            scaleset { name = "web", capacity = 100000, upgradePolicy = { mode = "Rolling" },
                       healthExtension = { protocol = "http", port = 80, requestPath = "/" } }
            health(function(vm, now) return { applicationHealthState = "Healthy" } end)
            at("PT1M", function() update_model { image = "v2" } end)
            """)
        let result = try load(path: path, options: options()) { $0.timeLimit = 5_000 }.run()
        // Every instance has its vm table and answered its first probe: the host's tables do not
        // eat the script's 64 MiB.
        XCTAssertGreaterThanOrEqual(result.summary.probes, 100_000)
        XCTAssertTrue(result.summary.hitTimeLimit)
    }

    func testOutputIsTheSameOnEveryRun() throws {
        let path = try writeScenario(baseScaleSet + """

            local seen = {}
            health(function(vm, now)
              if now == 0 then
                local t = { zeta = 1, alpha = 2, mid = 3, [vm.id + 1] = true }
                local keys = {}
                for k in pairs(t) do keys[#keys + 1] = tostring(k) end
                print(vm.id, tostring({}), table.concat(keys, ","))
              end
              return { applicationHealthState = "Healthy" }
            end)
            at("PT1M", function() update_model { image = "v2" } end)
            """)
        func run() throws -> [String] {
            var lines: [String] = []
            _ = try load(path: path, options: options(printed: { lines.append($0) })).run { lines.append($0.jsonLine) }
            return lines
        }
        let first = try run()
        XCTAssertEqual(first.first, "0\ttable: #1\t1,alpha,mid,zeta")
        XCTAssertEqual(try run(), first)
    }

    // MARK: Bundles

    func pluginRoot(_ bundles: [String: [String: String]]) throws -> String {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("rehearse-plugins-\(UUID().uuidString)").path
        for (folder, files) in bundles {
            for (name, text) in files {
                let path = root + "/" + folder + "/" + name
                try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
                try text.write(toFile: path, atomically: true, encoding: .utf8)
            }
        }
        return root
    }

    func manifest(_ name: String, version: String = "1.0.0") -> String {
        #"{ "name": "\#(name)", "version": "\#(version)", "api": ">=1.0.0 <2.0.0", "description": "test", "exports": {} }"#
    }

    func run(_ script: String, pluginPath: [String]) throws -> RunRecord {
        var o = options()
        o.pluginPath = pluginPath
        return try load(path: try writeScenario(baseScaleSet + "\n" + script), options: o).run()
    }

    func testHugeManifestIsNotReadAndBundlesAreReadOnlyWhenRequired() throws {
        let root = try pluginRoot(["good": ["rehearse-plugin.json": manifest("good"), "init.lua": "return { answer = 42 }"]])
        try FileManager.default.createDirectory(atPath: root + "/huge", withIntermediateDirectories: true)
        _ = FileManager.default.createFile(atPath: root + "/huge/rehearse-plugin.json", contents: nil)
        let handle = FileHandle(forWritingAtPath: root + "/huge/rehearse-plugin.json")!
        try handle.truncate(atOffset: 1 << 30)
        try handle.close()
        let catalog = PluginCatalog(searchPath: [root])
        XCTAssertEqual(catalog.bundles.map(\.manifest.name), ["good"])
        XCTAssertEqual(catalog.problems, ["manifest \(root)/huge/rehearse-plugin.json is 1073741824 bytes; at most 65536 are read"])
        // A run that requires the good bundle works; one that requires nothing never reads a manifest.
        XCTAssertEqual(try run("local g = require 'good' assert(g.answer == 42)", pluginPath: [root]).failedExpectations, [])
        let scenario = try load(path: try writeScenario(baseScaleSet), options: { var o = options(); o.pluginPath = [root]; return o }())
        _ = try scenario.run()
    }

    func testAVersionClaimedByTwoFoldersIsRefusedNamingBoth() throws {
        let first = try pluginRoot(["evil": ["rehearse-plugin.json": manifest("slow-boot", version: "1.2.0"), "init.lua": "return 'evil'"]])
        do {
            _ = try run("require 'slow-boot'", pluginPath: [first, repositoryRoot + "/plugins"])
            XCTFail("ran")
        } catch ScenarioError.script(let error, _) {
            XCTAssertEqual(error.location.map { URL(fileURLWithPath: $0).lastPathComponent }, "scenario.lua:6")
        }
        let catalog = PluginCatalog(searchPath: [first, repositoryRoot + "/plugins"])
        XCTAssertThrowsError(try catalog.resolver(lock: nil).select("slow-boot", by: "the scenario")) { error in
            // Both copies are turned down, each naming both folders.
            let folders = ["\(first)/evil", "\(repositoryRoot)/plugins/slow-boot"]
            XCTAssertEqual((error as? PluginProblem)?.resolution, .noVersionFits(name: "slow-boot", folders.map {
                .init(label: "slow-boot 1.2.0", folder: $0, reasons: [.claimed(folders: folders)])
            }))
        }
    }

    func testAnOlderVersionEarlierOnThePathDoesNotTakeOver() throws {
        let first = try pluginRoot(["old": ["rehearse-plugin.json": manifest("slow-boot", version: "1.0.0"), "init.lua": "return 'old'"]])
        let result = try run("local sb = require 'slow-boot' assert(type(sb) == 'table' and sb.health, 'got the old one')",
                             pluginPath: [first, repositoryRoot + "/plugins"])
        XCTAssertEqual(result.failedExpectations, [])
    }

    func testSymbolicLinksLeadingOutOfABundleAreRefused() throws {
        let root = try pluginRoot(["leaky": ["rehearse-plugin.json": manifest("leaky"), "init.lua": "return require 'leaky.secret'"]])
        try FileManager.default.createSymbolicLink(atPath: root + "/leaky/secret.lua", withDestinationPath: "/etc/hostname")
        do {
            _ = try run("require 'leaky'", pluginPath: [root])
            XCTFail("ran")
        } catch ScenarioError.script(let error, _) {
            XCTAssertEqual(error.refusal, .file(BoundedFile.Refusal(path: root + "/leaky/secret.lua", .leadsOutOfFolder(root + "/leaky"))), "\(error)")
        }
        let problems = PluginCatalog(searchPath: [root]).check()
        // The link itself, and the require that meets it when the entry module loads.
        XCTAssertEqual(problems.map(\.kind), [.file, .missingModule])
        XCTAssertEqual(problems.first?.folder, root + "/leaky")
    }
}
