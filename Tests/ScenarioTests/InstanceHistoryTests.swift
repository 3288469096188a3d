import Formats
import Foundation
import LuaHost
import Scenario
import UpgradeEngine
import XCTest

/// What a health, phase or fault script can see of an instance's history (`vm.startedAt`,
/// `vm.lastOperation`, `vm.replaces`), and the small things a new user met.
final class InstanceHistoryTests: XCTestCase {
    let rolling = """
        scaleset { name = "web", capacity = 4, updateDomains = 1, model = { image = "v1" },
          upgradePolicy = { mode = "Rolling", rollingUpgradePolicy = { maxBatchInstancePercent = 50, maxUnhealthyInstancePercent = 50,
                                                                        maxUnhealthyUpgradedInstancePercent = 50 } },
          healthExtension = { protocol = "http", port = 80, requestPath = "/", gracePeriod = 600 } }
        """

    /// A failed reimage restarts the instance on its previous model: the script sees the restart
    /// and the failed operation, though the model version did not change.
    func testFailedReimageIsVisibleAsARestartAndAFailedOperation() throws {
        var printed: [String] = []
        let path = try writeScenario(rolling + """

            fault(function(vm, op) if op == "upgrade" and vm.id == 1 then return { fail = true } end end)
            health(function(vm, now)
              local op = vm.lastOperation
              if vm.id == 1 and op and not vm.state.seen then
                vm.state.seen = true
                print(vm.startedAt, op.kind, op.outcome, op.endedAt, vm.model.version)
              end
              return { applicationHealthState = "Healthy" }
            end)
            at("PT1M", function() update_model { image = "v2" } end)
            """)
        _ = try load(path: path, options: options(printed: { printed.append($0) })).run()
        // Upgrade from 60 s, 2 minutes: it fails at 180 s and the instance restarts then, on v1.
        XCTAssertEqual(printed, ["180\tupgrade\tfailed\t180\t1"])
    }

    /// The shipped slow-boot bundle keys on the restart: after a failed reimage the application
    /// boots again (90 s) before it answers, so the instance is not Healthy before 270 s.
    func testSlowBootWaitsAfterAFailedReimageToo() throws {
        let path = try writeScenario(rolling + """

            local sb = require "slow-boot"
            health(sb.health { boot = "PT90S" }(function() return { applicationHealthState = "Healthy" } end))
            fault(function(vm, op) if op == "upgrade" and vm.id == 1 then return { fail = true } end end)
            at("PT2M", function() update_model { image = "v2" } end)
            """)
        let (_, events) = try runScenario(path)
        let healthyAgain = events.first { event in
            guard event.instance == 1, event.time > 120_000, case .healthChanged(_, let to, _) = event.payload else { return false }
            return to == .healthy
        }
        // The upgrade runs 120–240 s and fails; the application answers 90 s after the restart.
        XCTAssertEqual(healthyAgain?.time, 330_000)
    }

    /// An instance MaxSurge created names the one it replaces, so logic keyed on ids survives.
    func testSurgeInstanceNamesTheInstanceItReplaces() throws {
        var printed: [String] = []
        let path = try writeScenario("""
            scaleset { name = "web", capacity = 2, updateDomains = 1, model = { image = "v1" },
              upgradePolicy = { mode = "Rolling", rollingUpgradePolicy = { maxBatchInstancePercent = 50, maxSurge = true } },
              healthExtension = { protocol = "http", port = 80, requestPath = "/" } }
            health(function(vm)
              if vm.replaces and not vm.state.seen then
                vm.state.seen = true
                print(vm.id, vm.replaces, vm.lastOperation.kind)
              end
              return { applicationHealthState = "Healthy" }
            end)
            at("PT1M", function() update_model { image = "v2" } end)
            """)
        _ = try load(path: path, options: options(printed: { printed.append($0) })).run()
        XCTAssertEqual(printed, ["2\t0\tcreate", "3\t1\tcreate"])
    }

    /// A bad expect key is reported at the expect line, not at the scaleset.
    func testBadExpectKeyIsLocatedAtTheExpectLine() throws {
        let path = try writeScenario(rolling + "\n\n\nexpect { code = \"Completed\", bogus = 3 }\n")
        XCTAssertThrowsError(try load(path: path, options: options())) { error in
            guard case ScenarioError.definition(let problems, _) = error else { return XCTFail("\(error)") }
            // Lua shortens long chunk names from the left; the line is the expect call's.
            XCTAssertEqual(problems.count, 1)
            guard case .call("expect", at: let line) = problems[0].location else { return XCTFail("\(problems)") }
            XCTAssertEqual(line.line, 7)
            XCTAssertTrue(line.file.hasSuffix("scenario.lua"), line.file)
        }
    }

    /// The VM size and the image's SKU are spelled as Azure's documents spell them; a bare
    /// `sku` (or `publisher`, `offer`, `imageVersion`) is refused as ambiguous.
    func testModelSpellsImageReferenceAndVMSizeApart() throws {
        let bare = try writeScenario("""
            scaleset { name = "web", capacity = 2, model = { image = "v1", sku = "Standard_D2s_v3", imageVersion = "1.2.3" },
              upgradePolicy = { mode = "Manual" } }
            """)
        XCTAssertThrowsError(try load(path: bare, options: options())) { error in
            guard case ScenarioError.definition(let problems, _) = error else { return XCTFail("\(error)") }
            XCTAssertEqual(problems.map(\.location), [.document(path: nil, field: "scaleset.model.imageVersion"),
                                                      .document(path: nil, field: "scaleset.model.sku")])
        }
        let nested = try writeScenario("""
            scaleset { name = "web", capacity = 2, model = { image = "v1", sku = { name = "Standard_D2s_v3" },
                                                              imageReference = { sku = "22_04-lts-gen2", version = "1.2.3" } },
              upgradePolicy = { mode = "Manual" } }
            """)
        let scenario = try load(path: nested, options: options())
        XCTAssertEqual(scenario.definition.scaleSet.model, ["image": "v1", "sku.name": "Standard_D2s_v3",
                                                   "imageReference.sku": "22_04-lts-gen2", "imageReference.version": "1.2.3"])
    }

    /// A missing bundle's error names every folder searched, as absolute paths.
    func testMissingBundleNamesTheFoldersSearchedAbsolute() throws {
        let path = try writeScenario(rolling + "\nrequire 'no-such-bundle'\n")
        var o = options()
        o.pluginPath = ["Tests/../plugins"]
        let cwd = FileManager.default.currentDirectoryPath
        XCTAssertThrowsError(try load(path: path, options: o)) { error in
            guard case ScenarioError.script(let lua, _) = error else { return XCTFail("\(error)") }
            XCTAssertEqual(lua.refusal, .module(name: "no-such-bundle", .notFound(tried: ["\(cwd)/plugins", "\(cwd)/plugins"])))
        }
    }
}
