import Formats
import Foundation
import LuaHost
import Scenario
import UpgradeEngine
import XCTest

/// What a health source can see of an instance's history (its restart, its last operation, the
/// instance MaxSurge replaced), built as Swift definitions; one test checks that a script's `vm`
/// table (`vm.startedAt`, `vm.lastOperation`, `vm.replaces`) shows the same; and the small
/// things a new user met.
final class InstanceHistoryTests: XCTestCase {
    let rolling = """
        scaleset { name = "web", capacity = 4, updateDomains = 1, model = { image = "v1" },
          upgradePolicy = { mode = "Rolling", rollingUpgradePolicy = { maxBatchInstancePercent = 50, maxUnhealthyInstancePercent = 50,
                                                                        maxUnhealthyUpgradedInstancePercent = 50 } },
          healthExtension = { protocol = "http", port = 80, requestPath = "/", gracePeriod = 600 } }
        """

    /// `capacity` instances in one update domain on v1, Rolling in batches of half, probed over http.
    static func halves(_ capacity: Int) -> ScaleSetDefinition {
        var scaleSet = ScaleSetDefinition(name: "web", capacity: capacity)
        scaleSet.updateDomainCount = 1
        scaleSet.model = ["image": "v1"]
        scaleSet.policy.mode = .rolling
        scaleSet.policy.rolling.maxBatchInstancePercent = 50
        scaleSet.healthExtension = HealthExtensionSettings(protocol: .http, port: 80, requestPath: "/")
        return scaleSet
    }

    /// `rolling` as a Swift definition.
    static var rollingScaleSet: ScaleSetDefinition {
        var scaleSet = halves(4)
        scaleSet.policy.rolling.maxUnhealthyInstancePercent = 50
        scaleSet.policy.rolling.maxUnhealthyUpgradedInstancePercent = 50
        scaleSet.healthExtension?.gracePeriod = 600
        return scaleSet
    }

    /// Two instances in one update domain, batches of half, MaxSurge.
    static var surgingScaleSet: ScaleSetDefinition {
        var scaleSet = halves(2)
        scaleSet.policy.rolling.maxSurge = true
        return scaleSet
    }

    /// Upgrades of instance 1 fail; every other operation succeeds in its default time.
    static let instanceOneFailsUpgrades: @Sendable () -> ClosureFaultInjector? = { ClosureFaultInjector { op, vm, _ in op == .upgrade && vm.id == 1 ? OperationOutcome(fail: true) : nil } }

    /// `scaleSet` with `health` and `faults` (made once per run), the model updated to v2 at PT1M.
    static func definition(_ scaleSet: ScaleSetDefinition, health: @escaping @Sendable () -> ClosureHealthSource,
                           faults: @escaping @Sendable () -> ClosureFaultInjector? = { nil }) -> ScenarioDefinition {
        ScenarioDefinition(path: "instance history (Swift)", scaleSet: scaleSet,
                           behaviour: .swift(SwiftBehaviours { _ in Behaviours(health: health(), faults: faults()) }),
                           timeline: [.init(time: 60_000, action: .perform(.updateModel(["image": "v2"])))])
    }

    /// What a health source saw of an instance at its first probe after `lastOperation` or
    /// `replaces` was set.
    struct Sighting: Equatable, Sendable {
        var id: Int
        var startedAt: Millis
        var operation: OperationKind?
        var succeeded: Bool?
        var endedAt: Millis?
        var modelVersion: Int
        var replaces: Int?

        init(_ vm: Instance) {
            id = vm.id
            startedAt = vm.health.startedAt
            operation = vm.lastOperation?.kind
            succeeded = vm.lastOperation?.succeeded
            endedAt = vm.lastOperation?.endedAt
            modelVersion = vm.modelVersion
            replaces = vm.replaces
        }
    }

    /// A health source that answers Healthy and notes each instance the first time `shows` holds.
    static func noting(_ notes: Notes<Sighting>, when shows: @escaping @Sendable (Instance) -> Bool) -> @Sendable () -> ClosureHealthSource {
        {
            var seen = Set<Int>()
            return ClosureHealthSource { vm, _ in
                if shows(vm), seen.insert(vm.id).inserted { notes.append(Sighting(vm)) }
                return .named(.healthy)
            }
        }
    }

    /// A failed upgrade restarts the instance on its previous model: a health source sees the
    /// restart and the failed operation, though the model version did not change.
    func testFailedUpgradeIsVisibleAsARestartAndAFailedOperation() throws {
        let notes = Notes<Sighting>()
        let health = Self.noting(notes) { $0.id == 1 && $0.lastOperation != nil }
        _ = try Rehearsal.run(Self.definition(Self.rollingScaleSet, health: health, faults: Self.instanceOneFailsUpgrades), RunInputs(seed: 0))
        // Upgrade from 60 s, 2 minutes: it fails at 180 s and the instance restarts then, on v1.
        let seen = try XCTUnwrap(notes.all.first)
        XCTAssertEqual(notes.all.count, 1)
        XCTAssertEqual(seen.startedAt, 180_000)
        XCTAssertEqual(seen.operation, .upgrade)
        XCTAssertEqual(seen.succeeded, false)
        XCTAssertEqual(seen.endedAt, 180_000)
        XCTAssertEqual(seen.modelVersion, 1)
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
        let notes = Notes<Sighting>()
        _ = try Rehearsal.run(Self.definition(Self.surgingScaleSet, health: Self.noting(notes) { $0.replaces != nil }), RunInputs(seed: 0))
        XCTAssertEqual(notes.all.map(\.id), [2, 3])
        XCTAssertEqual(notes.all.map(\.replaces), [0, 1])
        XCTAssertEqual(notes.all.map(\.operation), [.create, .create])
    }

    /// A script's `vm.startedAt`, `vm.lastOperation` (kind, outcome, endedAt), `vm.model.version`
    /// and `vm.replaces` are the instance's own: a health function deciding on them gives the
    /// events of the Swift source deciding on the instance.
    func testTheScriptsVMTableGivesTheEventsOfTheSwiftSourceReadingTheInstance() throws {
        let failing = rolling + """

            fault(function(vm, op) if op == "upgrade" and vm.id == 1 then return { fail = true } end end)
            health(function(vm, now)
              local op = vm.lastOperation
              if op and op.kind == "upgrade" and op.outcome == "failed" and now - op.endedAt < 30 then
                return { applicationHealthState = "Unhealthy" }
              end
              if vm.model.version == 2 and now - vm.startedAt < 45 then return nil end
              return { applicationHealthState = "Healthy" }
            end)
            at("PT1M", function() update_model { image = "v2" } end)
            """
        let failingHealth: @Sendable () -> ClosureHealthSource = {
            ClosureHealthSource { vm, now in
                if let op = vm.lastOperation, op.kind == .upgrade, !op.succeeded, now - op.endedAt < 30_000 { return .named(.unhealthy) }
                return vm.modelVersion == 2 && now - vm.health.startedAt < 45_000 ? .noAnswer : .named(.healthy)
            }
        }
        let surging = """
            scaleset { name = "web", capacity = 2, updateDomains = 1, model = { image = "v1" },
              upgradePolicy = { mode = "Rolling", rollingUpgradePolicy = { maxBatchInstancePercent = 50, maxSurge = true } },
              healthExtension = { protocol = "http", port = 80, requestPath = "/" } }
            health(function(vm, now)
              if vm.replaces and vm.lastOperation.kind == "create" and now - vm.startedAt < 20 + 10 * vm.replaces then return nil end
              return { applicationHealthState = "Healthy" }
            end)
            at("PT1M", function() update_model { image = "v2" } end)
            """
        let surgingHealth: @Sendable () -> ClosureHealthSource = {
            ClosureHealthSource { vm, now in
                guard let replaced = vm.replaces, vm.lastOperation?.kind == .create else { return .named(.healthy) }
                return now - vm.health.startedAt < 20_000 + 10_000 * Millis(replaced) ? .noAnswer : .named(.healthy)
            }
        }
        // Instance 1's upgrade (60–180 s) fails: Unhealthy from 180 s until 30 s after it ended;
        // instance 0, upgraded to v2 at 180 s, answers 45 s after its restart.
        let failed = try sameEvents(failing, Self.definition(Self.rollingScaleSet, health: failingHealth, faults: Self.instanceOneFailsUpgrades))
        XCTAssertEqual(healthChanges(failed, 1).filter { $0.time > 60_000 }.map(\.time), [180_000, 210_000])
        XCTAssertEqual(healthChanges(failed, 1).filter { $0.time > 60_000 }.map(\.state), [.unhealthy, .healthy])
        XCTAssertEqual(healthChanges(failed, 0).last?.time, 225_000)
        // With 600 s of grace, the instance replacing 0 answers 20 s after its creation ends, the one replacing 1 30 s after.
        var surge = Self.surgingScaleSet
        surge.healthExtension?.gracePeriod = 600
        let surged = try sameEvents(surging.replacingOccurrences(of: #"requestPath = "/" }"#, with: #"requestPath = "/", gracePeriod = 600 }"#),
                                    Self.definition(surge, health: surgingHealth))
        for (id, boot) in [(2, 20_000), (3, 30_000)] {
            let created = try XCTUnwrap(surged.first { $0.instance == id && $0.kind == .operationFinished }?.time)
            XCTAssertEqual(healthChanges(surged, id).first { $0.state == .healthy }?.time, created + Millis(boot))
        }
    }

    /// The events of `script`, asserted equal to those of `definition` (whose scale set it describes).
    private func sameEvents(_ script: String, _ definition: ScenarioDefinition) throws -> [Event] {
        let lua = try load(path: try writeScenario(script), options: options())
        XCTAssertEqual(lua.definition.scaleSet, definition.scaleSet)
        let fromSwift = try Rehearsal.run(definition, RunInputs(seed: 0)).events
        XCTAssertEqual(try lua.run().events, fromSwift)
        return fromSwift
    }

    /// Instance `id`'s health changes: when, and to what.
    private func healthChanges(_ events: [Event], _ id: Int) -> [(time: Millis, state: HealthState)] {
        events.compactMap { event in
            guard event.instance == id, case .healthChanged(_, let to, _) = event.payload else { return nil }
            return (event.time, to)
        }
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
