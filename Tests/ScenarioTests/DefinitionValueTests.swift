import AzureWire
import Formats
import Foundation
import Scenario
import UpgradeEngine
import XCTest

/// A definition is a value from any source: built in Swift without any Lua text, run with
/// separate inputs, and the same as the Lua loader's reading of the same scenario.
final class DefinitionValueTests: XCTestCase {
    /// Seed 001's fleet: 10 instances, batches of 20%, the health extension probing every 5 s.
    static var tenAtTwenty: ScaleSetDefinition {
        var scaleSet = ScaleSetDefinition(name: "web", capacity: 10)
        scaleSet.model = ["image": "v1"]
        scaleSet.policy.mode = .rolling
        scaleSet.policy.rolling.maxBatchInstancePercent = 20
        scaleSet.healthExtension = HealthExtensionSettings(protocol: .http, port: 8000, requestPath: "/health", gracePeriod: 600)
        return scaleSet
    }

    /// Apps that answer Initializing until `boot` ms after their instance (re)started, then Healthy.
    static func booting(after boot: Millis) -> SwiftBehaviours {
        SwiftBehaviours { _ in Behaviours(health: app(booting: boot)) }
    }

    /// A health source whose apps answer Initializing (as a rich state) until `boot` ms after their
    /// instance (re)started, then Healthy.
    static func app(booting boot: Millis) -> ClosureHealthSource {
        ClosureHealthSource { vm, now in
            now - vm.health.startedAt >= boot ? .named(.healthy) : .structured(state: "Initializing", metrics: .deferred)
        }
    }

    /// The fleet, apps booting in 90 s, the model updated at two minutes, expecting a completed upgrade.
    static func swiftDefinition() -> ScenarioDefinition {
        var expectation = Expectation(location: "DefinitionValueTests")
        expectation.code = .completed
        expectation.successful = 10
        expectation.failed = 0
        expectation.upgrades = 1
        return ScenarioDefinition(path: "ten-at-twenty (Swift)", scaleSet: tenAtTwenty, behaviour: .swift(booting(after: 90_000)),
                                  timeline: [.init(time: 120_000, action: .perform(.updateModel(["image": "v2"])))],
                                  expectations: [expectation])
    }

    /// The batch start times, in seconds, from the typed events.
    func batchStarts(_ events: [Event]) -> [Millis] {
        events.compactMap { event in
            if case .batchStarted = event.payload { return event.time / 1000 }
            return nil
        }
    }

    func testASwiftDefinitionWithoutLuaRunsFiveBatchesOfTwo() throws {
        let record = try Rehearsal.run(Self.swiftDefinition(), RunInputs(seed: 1))
        // SPEC seed 001: 20% of 10 is 2 instances a batch, 5 batches, one per fault domain pair.
        XCTAssertEqual(batches(record.events), ["0, 5", "1, 6", "2, 7", "3, 8", "4, 9"])
        let status = try XCTUnwrap(record.summary.status)
        XCTAssertEqual(status.code, .completed)
        XCTAssertEqual(status.progress.successfulInstanceCount, 10)
        XCTAssertEqual(status.progress.failedInstanceCount, 0)
        XCTAssertEqual(record.upgrades, 1)
        XCTAssertEqual(record.failedExpectations, [])
        XCTAssertEqual(record.instances.filter(\.exists).map(\.modelVersion), Array(repeating: 2, count: 10))
        // The first batch starts at the model update (PT2M); each takes the default 120 s upgrade,
        // then the 90 s until its two apps answer Healthy (probed every 5 s): 210 s a batch.
        XCTAssertEqual(batchStarts(record.events), [120, 330, 540, 750, 960])
        XCTAssertEqual(status.startTime, 120_000)
        XCTAssertEqual(record.summary.endTime, 1_170_000)
    }

    func testTheSwiftDefinitionGivesTheEventsOfTheLuaScriptDescribingTheSameScenario() throws {
        let path = try writeScenario("""
            scaleset {
              name = "web", capacity = 10, model = { image = "v1" },
              upgradePolicy = { mode = "Rolling", rollingUpgradePolicy = { maxBatchInstancePercent = 20 } },
              healthExtension = { protocol = "http", port = 8000, requestPath = "/health", gracePeriod = 600 },
            }
            health(function(vm, now)
              if now - vm.startedAt >= 90 then return { applicationHealthState = "Healthy" } end
              return { applicationHealthState = "Initializing" }
            end)
            at("PT2M", function() update_model { image = "v2" } end)
            """)
        let lua = try ScenarioDefinition(luaScript: path, options: options())
        XCTAssertEqual(lua.scaleSet, Self.tenAtTwenty)
        let fromLua = try Rehearsal.run(lua, RunInputs(seed: 1))
        let fromSwift = try Rehearsal.run(Self.swiftDefinition(), RunInputs(seed: 1))
        // The same events but the action's name: a script's `at` names its line, a typed action its time.
        XCTAssertEqual(fromSwift.events.map(\.payload), fromLua.events.map(\.payload))
        XCTAssertEqual(fromSwift.events.map(\.time), fromLua.events.map(\.time))
        XCTAssertEqual(fromSwift.summary.status, fromLua.summary.status)
    }

    func testOneDefinitionRunsWithTwoInputsWithoutReloading() throws {
        let definition = Self.swiftDefinition()
        let twenty = try Rehearsal.run(definition, RunInputs(seed: 1))
        let ten = try Rehearsal.run(definition, RunInputs(seed: 1, overrides: [PolicyOverride(path: "rollingUpgradePolicy.maxBatchInstancePercent", value: "10")]))
        XCTAssertEqual(batches(twenty.events).count, 5)
        // 10% of 10 is 1 instance a batch: ten batches.
        XCTAssertEqual(batches(ten.events).count, 10)
        XCTAssertTrue(batches(ten.events).allSatisfy { !$0.contains(",") })
        XCTAssertEqual(ten.policy.rolling.maxBatchInstancePercent, 10)
        XCTAssertEqual(definition.scaleSet.policy.rolling.maxBatchInstancePercent, 20, "the definition is unchanged")
        let kept = try Rehearsal.run(definition, RunInputs(seed: 2, recordEvents: false))
        XCTAssertEqual(kept.events, [])
        XCTAssertEqual(kept.summary.status?.code, .completed)
    }

    func testSwiftBehavioursTakeTheRunsParameterValues() throws {
        var definition = Self.swiftDefinition()
        definition.parameters = ["boot": ScenarioParameter(name: "boot", kind: .integer, defaultValue: "90", location: "test")]
        definition.behaviour = .swift(SwiftBehaviours { context in
            let boot = Millis(context.parameterValues["boot"] ?? "90")! * 1000
            return Behaviours(health: Self.app(booting: boot))
        })
        let quick = try Rehearsal.run(definition, RunInputs(seed: 1))
        let slow = try Rehearsal.run(definition, RunInputs(seed: 1, parameterValues: ["boot": "300"]))
        XCTAssertEqual(batches(quick.events), batches(slow.events))
        XCTAssertTrue(zip(batchStarts(slow.events), batchStarts(slow.events).dropFirst()).allSatisfy { $1 - $0 >= 300 })
        XCTAssertLessThan(quick.summary.endTime, slow.summary.endTime)
        XCTAssertThrowsError(try Rehearsal.run(definition, RunInputs(seed: 1, parameterValues: ["bot": "1"]))) { error in
            guard let failure = error as? RunFailure, case .definition(let problems, _) = failure.error else { return XCTFail("\(error)") }
            XCTAssertEqual(problems.map(\.location), [.setting(.parameter("bot"), value: nil)])
        }
    }

    func testAScriptCallbackOnASwiftTimelineIsRefused() throws {
        var definition = Self.swiftDefinition()
        definition.timeline.append(.init(time: 60_000, action: .script(location: "nowhere.lua:1")))
        XCTAssertThrowsError(try Rehearsal.run(definition, RunInputs(seed: 1))) { error in
            guard let failure = error as? RunFailure, case .definition(let problems, _) = failure.error else { return XCTFail("\(error)") }
            XCTAssertEqual(problems.map(\.field), ["timeline[1]"])
        }
    }

    func testALuaDefinitionRunsOtherParameterValuesWithoutReloadingTheScript() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("rehearse-params-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let path = folder + "/scenario.lua"
        try """
            scaleset { name = "web", capacity = param("capacity", 10), model = { image = "v1" },
                       upgradePolicy = { mode = "Rolling", rollingUpgradePolicy = { maxBatchInstancePercent = 20 } },
                       healthExtension = { protocol = "http", port = 8000, requestPath = "/health" } }
            at("PT1M", function() update_model { image = "v2" } end)
            expect { successful = param("capacity", 10) }
            """.write(toFile: path, atomically: true, encoding: .utf8)
        let definition = try ScenarioDefinition(luaScript: path, options: options())
        // The file is gone: runs read the definition, never the script.
        try FileManager.default.removeItem(atPath: folder)
        let ten = try Rehearsal.run(definition, RunInputs(seed: 0))
        let twenty = try Rehearsal.run(definition, RunInputs(seed: 0, parameterValues: ["capacity": "20"]))
        XCTAssertEqual(batches(ten.events).count, 5)
        XCTAssertEqual(batches(twenty.events).count, 5)
        XCTAssertEqual(twenty.summary.status?.progress.successfulInstanceCount, 20)
        XCTAssertEqual(twenty.failedExpectations, [], "the expectation read for capacity 20")
        let described = try Rehearsal.definition(definition, for: RunInputs(parameterValues: ["capacity": "20"]))
        XCTAssertEqual(described.scaleSet.capacity, 20)
        XCTAssertEqual(definition.scaleSet.capacity, 10)
    }

    func testASwiftDefinitionIsSteppedAndCancelledFromOutside() throws {
        let session = try RehearsalSession(Self.swiftDefinition(), RunInputs(seed: 1))
        // PT2M: the model update starts the first batch; PT3M: it is still upgrading.
        try session.advance(to: 180_000)
        XCTAssertEqual(session.status?.code, .rollingForward)
        XCTAssertEqual(session.instances.filter { $0.lifecycle != .running }.map(\.id), [0, 5])
        XCTAssertNil(try session.perform(.cancel))
        let record = try session.finish()
        XCTAssertEqual(record.summary.status?.code, .cancelled)
        XCTAssertEqual(batches(record.events), ["0, 5"])
        XCTAssertEqual(record.failedExpectations.map(\.key).sorted(), [.code, .successful])
    }

    func testTheImportersDefinitionRunsAndHoldsItsExpectation() throws {
        let text = try String(contentsOfFile: repositoryRoot + "/Tests/Import/az-vmss-show-zonal.json", encoding: .utf8)
        let imported = try ScaleSetImport.read(try JSON.parse(text, maxBytes: 16 << 20))
        let definition = ScenarioDefinition(imported: imported, path: "az-vmss-show-zonal.json")
        XCTAssertEqual(definition.timeline, [.init(time: 60_000, action: .perform(.updateModel(["imageReference.version": "next"])))], "the document's image version, latest, becomes next")
        let record = try Rehearsal.run(definition, RunInputs(seed: 0))
        XCTAssertEqual(record.upgrades, imported.definition.policy.mode == .rolling ? 1 : 0)
        XCTAssertEqual(record.failedExpectations, [])
    }

    /// A Flexible scale set's record says so and keeps its VMs' own names (the text shows them
    /// beside the ids); the same fleet as Uniform is named `<scale set>_<id>`.
    func testARunRecordCarriesTheOrchestrationAndAFlexibleFleetsNames() throws {
        let list = try JSON.parse(#"[{"instanceId": "web_a1b2c3", "latestModelApplied": true}, {"instanceId": "web_d4e5f6", "latestModelApplied": true}]"#)
        func record(_ orchestration: Orchestration) throws -> RunRecord {
            var scaleSet = Self.tenAtTwenty
            scaleSet.capacity = 2
            scaleSet.orchestration = orchestration
            if orchestration == .flexible { scaleSet.fleet = try InstanceList.read(list) }
            return try Rehearsal.run(ScenarioDefinition(path: "two (Swift)", scaleSet: scaleSet, behaviour: .swift(Self.booting(after: 90_000)),
                                                        timeline: [.init(time: 120_000, action: .perform(.updateModel(["image": "v2"])))]),
                                     RunInputs(seed: 1))
        }
        let flexible = try record(.flexible), uniform = try record(.uniform)
        XCTAssertEqual(flexible.orchestration, .flexible)
        XCTAssertEqual(flexible.instances.map(\.name), ["web_a1b2c3", "web_d4e5f6"])
        XCTAssertEqual(uniform.orchestration, .uniform)
        XCTAssertEqual(uniform.instances.map(\.name), ["web_0", "web_1"])
        // Both upgrade the two VMs one a batch (20% of 2 rounds up to 1).
        XCTAssertEqual(batches(flexible.events), ["0", "1"])
        XCTAssertEqual(batches(uniform.events), ["0", "1"])
    }

    /// An id an `instances` list skips was never in the fleet: the record keeps its place (ids
    /// index the instances) but the fleet's instances leave it out; one deleted in the run stays.
    func testAnIdTheInstanceListSkipsIsNoDeletedInstance() throws {
        var scaleSet = Self.tenAtTwenty
        scaleSet.fleet = [ExistingInstance(id: 1), ExistingInstance(id: 2), ExistingInstance(id: 4)]
        scaleSet.capacity = 3
        // Scale in to 2 at PT1M: one of the three listed is deleted in the run.
        let record = try Rehearsal.run(ScenarioDefinition(path: "gaps (Swift)", scaleSet: scaleSet, behaviour: .swift(Self.booting(after: 90_000)),
                                                          timeline: [.init(time: 60_000, action: .perform(.scale(to: 2)))]),
                                       RunInputs(seed: 1))
        XCTAssertEqual(record.instances.map(\.id), [0, 1, 2, 3, 4])
        XCTAssertEqual(record.start?.versions, [nil, 1, 1, nil, 1])
        let deleted = record.fleetInstances.filter { !$0.exists }.map(\.id)
        XCTAssertEqual(deleted.count, 1)
        XCTAssertEqual(record.fleetInstances.map(\.id), [1, 2, 4])
        XCTAssertEqual(record.fleetInstances.count(where: \.exists), 2)
    }
}
