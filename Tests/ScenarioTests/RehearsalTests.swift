import AzureWire
import Formats
import Foundation
import LuaHost
import Reports
import Scenario
import UpgradeEngine
import XCTest

/// A rehearsal is a function of a definition, a seed and overrides: every run builds its own Lua
/// state, runtime and simulation, so runs repeat exactly, run side by side, and never see each
/// other's globals or random numbers.
final class RehearsalTests: XCTestCase {
    /// Thirty instances in three zones whose application takes two to six minutes to answer
    /// after a restart (grace 600 s), 8% of boots never answering, batches of 20% with a pause.
    /// Boot times and silent boots are drawn per seed inside the health function.
    static let realisticFleet = """
        scaleset {
          name = "shop", capacity = 30, zones = { "1", "2", "3" }, model = { image = "v1" },
          upgradePolicy = { mode = "Rolling", rollingUpgradePolicy = {
            maxBatchInstancePercent = 20, maxUnhealthyUpgradedInstancePercent = 10, pauseTimeBetweenBatches = "PT10S" } },
          healthExtension = { protocol = "http", port = 8080, requestPath = "/health", intervalInSeconds = 5, gracePeriod = 600 },
        }
        calls = 0
        health(function(vm, now)
          calls = calls + 1
          if vm.model.version == 1 then return { applicationHealthState = "Healthy" } end
          if vm.state.boot == nil then
            vm.state.boot = math.random(120, 360)
            vm.state.silent = math.random() < 0.08
          end
          if vm.state.silent or now - vm.startedAt < vm.state.boot then return nil end
          return { applicationHealthState = "Healthy" }
        end)
        at("PT1M", function() update_model { image = "v2" } end)
        expect { code = "Completed" }
        """

    func realisticDefinition() throws -> ScenarioDefinition {
        try ScenarioDefinition(luaScript: try writeScenario(Self.realisticFleet), options: options())
    }

    func testSixteenSeedsOnFourThreadsGiveTheRecordsOfSixteenSequentialRuns() throws {
        let definition = try realisticDefinition()
        let seeds: [UInt64] = Array(1...16)
        let sequential = try seeds.map { try Rehearsal.run(definition, seed: $0) }
        let parallel = Records(count: seeds.count)
        DispatchQueue.concurrentPerform(iterations: 4) { worker in
            for index in stride(from: worker, to: seeds.count, by: 4) {
                parallel.set(index, Result { () throws(RunFailure) in try Rehearsal.run(definition, seed: seeds[index]) })
            }
        }
        for (index, record) in sequential.enumerated() {
            let other = try XCTUnwrap(parallel.get(index)).get()
            XCTAssertEqual(other, record, "seed \(seeds[index])")
            XCTAssertEqual(other.events.map(\.jsonLine), record.events.map(\.jsonLine), "seed \(seeds[index])")
            XCTAssertEqual(record.seed, seeds[index])
        }
        // The seeds really differ: the drawn boot times and silent boots change the outcome.
        XCTAssertGreaterThan(Set(sequential.map { $0.summary.status?.progress.failedInstanceCount }).count, 2)
        XCTAssertTrue(sequential.contains { $0.summary.status?.code == .faulted })
        XCTAssertTrue(sequential.contains { $0.summary.status?.code == .completed })
        // Every record agrees with itself: the status counts every instance once.
        for record in sequential {
            let progress = try XCTUnwrap(record.summary.status).progress
            XCTAssertEqual(progress.successfulInstanceCount + progress.failedInstanceCount + progress.inProgressInstanceCount
                           + progress.pendingInstanceCount, 30, "seed \(record.seed)")
        }
    }

    func testTheSameDefinitionRunTwiceGivesTheSameRecordAndNoRunSeesAnother() throws {
        let definition = try realisticDefinition()
        let first = try Rehearsal.run(definition, seed: 9)
        let second = try Rehearsal.run(definition, seed: 9)
        XCTAssertEqual(first, second)
        XCTAssertGreaterThan(first.events.count, 100)
        // A global the health function counts up starts from zero in every run: the second run
        // prints the same count as the first, not twice it.
        let path = try writeScenario(Self.realisticFleet + "\nat(\"PT5M\", function() print(calls) end)\n")
        let counting = try ScenarioDefinition(luaScript: path, options: options())
        var printed: [String] = []
        _ = try Rehearsal.run(counting, seed: 9, print: { printed.append($0) })
        _ = try Rehearsal.run(counting, seed: 9, print: { printed.append($0) })
        XCTAssertEqual(printed.count, 2)
        XCTAssertEqual(printed[0], printed[1])
        // 30 instances probed every 5 s for five minutes, less those upgrading: over a thousand.
        XCTAssertGreaterThan(Int(printed[0]) ?? 0, 1_000)
    }

    /// An expectation written at line `line` of the realistic fleet, set by `configure`.
    static func expectation(atLine line: Int, _ configure: (inout Expectation) -> Void) -> Expectation {
        var expectation = Expectation(location: "realistic fleet (Swift):\(line)")
        configure(&expectation)
        return expectation
    }

    /// RealisticFleet (the Swift definition of `realisticFleet`) with the script's own expectation
    /// (`expect { code = "Completed" }`, line 19) and `more`.
    static func swiftFleet(expecting more: [Expectation]) -> ScenarioDefinition {
        var definition = RealisticFleet.definition
        definition.expectations = [expectation(atLine: 19) { $0.code = .completed }] + more
        return definition
    }

    /// `expect { upgrades = 1, minHealthy = 30 }` (line 20).
    static let upgradesAndMinHealthy = expectation(atLine: 20) {
        $0.upgrades = 1
        $0.minHealthy = 30
    }

    /// `expect { finishedWithin = "PT45M", maxUnavailable = 100000 }` at `line` and
    /// `expect { finishedWithin = 600 }` on the next.
    static func pipelineQuestions(atLine line: Int) -> [Expectation] {
        [expectation(atLine: line) {
            $0.finishedWithin = 2_700_000
            $0.maxUnavailable = 100_000
        }, expectation(atLine: line + 1) { $0.finishedWithin = 600_000 }]
    }

    func testTheRecordCarriesTheSeedThePolicyAndEveryExpectationTyped() throws {
        let record = try Rehearsal.run(Self.swiftFleet(expecting: [Self.upgradesAndMinHealthy]), seed: 2)
        XCTAssertEqual(record.seed, 2)
        XCTAssertEqual(record.policy.rolling.maxBatchInstancePercent, 20)
        XCTAssertEqual(record.policy.rolling.pauseTimeBetweenBatches, 10_000)
        XCTAssertEqual(record.expectations.map(\.key), [.code, .minHealthy, .upgrades])
        XCTAssertEqual(record.expectations.map(\.location.suffix2), ["19", "20", "20"])
        let upgrades = try XCTUnwrap(record.expectations.first { $0.key == .upgrades })
        XCTAssertEqual(upgrades.actual, .count(1))
        XCTAssertTrue(upgrades.held)
        // Six instances are down at once in a 20% batch: the fewest serving is 24, not 30.
        let minHealthy = try XCTUnwrap(record.expectations.first { $0.key == .minHealthy })
        XCTAssertEqual(minHealthy.expected, .atLeast(30))
        XCTAssertEqual(minHealthy.actual, .count(24))
        XCTAssertFalse(minHealthy.held)
        XCTAssertEqual(record.failedExpectations.map(\.key).contains(.minHealthy), true)
    }

    func testFinishedWithinAndMaxUnavailableCheckThePipelinesQuestions() throws {
        let record = try Rehearsal.run(Self.swiftFleet(expecting: Self.pipelineQuestions(atLine: 20)), seed: 3)
        let availability = try XCTUnwrap(record.summary.availability)
        let finished = record.expectations.filter { $0.key == .finishedWithin }
        XCTAssertEqual(finished.map(\.expected), [.within(2_700_000), .within(600_000)])
        // Thirty slow-booting instances in batches of six take far longer than ten minutes.
        XCTAssertGreaterThan(availability.timeToFinishSeconds, 600)
        XCTAssertEqual(finished[0].held, availability.timeToFinishSeconds <= 2_700)
        XCTAssertFalse(finished[1].held)
        XCTAssertEqual(finished[1].actual, .duration(Millis((availability.timeToFinishSeconds * 1000).rounded())))
        let unavailable = try XCTUnwrap(record.expectations.first { $0.key == .maxUnavailable })
        XCTAssertEqual(unavailable.actual, .count(Int(availability.unavailableInstanceSeconds.rounded())))
        XCTAssertTrue(unavailable.held)
    }

    /// The script's `expect` reads the typed expectations the two tests above build: each call a
    /// value at its own line, an ISO 8601 duration or a number of seconds for `finishedWithin`.
    func testTheScriptsExpectGivesTheTypedExpectations() throws {
        let script = Self.realisticFleet + "\nexpect { upgrades = 1, minHealthy = 30 }\n"
            + "expect { finishedWithin = \"PT45M\", maxUnavailable = 100000 }\nexpect { finishedWithin = 600 }\n"
        let lua = try ScenarioDefinition(luaScript: try writeScenario(script), options: options())
        let typed = Self.swiftFleet(expecting: [Self.upgradesAndMinHealthy] + Self.pipelineQuestions(atLine: 21))
        XCTAssertEqual(lua.expectations.map(\.location.suffix2), ["19", "20", "21", "22"])
        func lines(_ expectations: [Expectation]) -> [Expectation] {
            expectations.map { expectation in
                var kept = expectation
                kept.location = expectation.location.suffix2
                return kept
            }
        }
        XCTAssertEqual(lines(lua.expectations), lines(typed.expectations))
        XCTAssertEqual(lua.scaleSet, typed.scaleSet)
    }

    func testOverridesChangeThePolicyAndAreCheckedLikeTheDefinition() throws {
        let definition = RealisticFleet.definition
        let base = try Rehearsal.run(definition, seed: 4)
        let halves = try Rehearsal.run(definition, seed: 4, overrides: [
            PolicyOverride(path: "rollingUpgradePolicy.maxBatchInstancePercent", value: "50"),
            PolicyOverride(path: "upgradePolicy.rollingUpgradePolicy.maxUnhealthyUpgradedInstancePercent", value: "100"),
            PolicyOverride(path: "rollingUpgradePolicy.maxUnhealthyInstancePercent", value: "50"),
        ])
        XCTAssertEqual(halves.policy.rolling.maxBatchInstancePercent, 50)
        XCTAssertEqual(halves.policy.rolling.maxUnhealthyUpgradedInstancePercent, 100)
        // 30 instances, 3 zones of 10: batches of 20% hold 6; of 50% (15) they stop at a zone's 10.
        let batchSizes = { (record: RunRecord) in
            record.events.compactMap { event -> Int? in
                if case .batchStarted(let ids, _) = event.payload { return ids.count }
                return nil
            }
        }
        XCTAssertEqual(batchSizes(base).max(), 6)
        XCTAssertEqual(batchSizes(halves).max(), 10)
        XCTAssertEqual(halves.summary.status?.code, .completed)
        XCTAssertEqual(definition.scaleSet.policy.rolling.maxBatchInstancePercent, 20, "the definition is a value: a run never changes it")

        XCTAssertThrowsError(try Rehearsal.run(definition, seed: 4, overrides: [
            PolicyOverride(path: "rollingUpgradePolicy.maxBatchInstancePercent", value: "150"),
            PolicyOverride(path: "rollingUpgradePolicy.maxBatchSize", value: "3"),
        ])) { error in
            guard let failure = error as? RunFailure, case .definition(let problems, _) = failure.error else { return XCTFail("\(error)") }
            XCTAssertEqual(failure.seed, 4)
            // Every problem at once: the unknown field and the value out of range.
            XCTAssertEqual(problems.map(\.location), [.setting(.policyOverride("upgradePolicy.rollingUpgradePolicy.maxBatchSize"), value: nil),
                                                      .setting(.policyOverride("upgradePolicy.rollingUpgradePolicy.maxBatchInstancePercent"), value: nil)])
        }
        XCTAssertThrowsError(try Rehearsal.run(definition, seed: 4, overrides: [
            PolicyOverride(path: "rollingUpgradePolicy.maxBatchInstancePercent", value: "150"),
            PolicyOverride(path: "rollingUpgradePolicy.pauseTimeBetweenBatches", value: "soon"),
        ])) { error in
            guard let failure = error as? RunFailure, case .definition(let problems, _) = failure.error else { return XCTFail("\(error)") }
            XCTAssertEqual(problems.map(\.location), [.setting(.policyOverride("upgradePolicy.rollingUpgradePolicy.maxBatchInstancePercent"), value: nil),
                                                      .setting(.policyOverride("upgradePolicy.rollingUpgradePolicy.pauseTimeBetweenBatches"), value: nil)])
        }
        XCTAssertEqual(PolicyOverride(parsing: "mode=Manual"), PolicyOverride(path: "mode", value: "Manual"))
        XCTAssertNil(PolicyOverride(parsing: "=3"))
    }

    func testAScriptErrorOfOneRunIsATypedFailureNamingTheSeed() throws {
        let path = try writeScenario(baseScaleSet + """

            health(function(vm, now)
              if now > 60 and math.random(1, 4) == 1 then error("probe handler crashed") end
              return { applicationHealthState = "Healthy" }
            end)
            at("PT1M", function() update_model { image = "v2" } end)
            """)
        let definition = try ScenarioDefinition(luaScript: path, options: options())
        XCTAssertThrowsError(try Rehearsal.run(definition, seed: 11)) { error in
            guard let failure = error as? RunFailure, case .script(let lua, let context) = failure.error else { return XCTFail("\(error)") }
            XCTAssertEqual(failure.seed, 11)
            XCTAssertEqual(lua.location?.suffix2, "7")
            guard case .callback("health", _, _)? = context else { return XCTFail("\(String(describing: context))") }
            XCTAssertEqual(failure.place, lua.place)
            XCTAssertEqual(failure.exitCode, 2)
        }
        // The definition is not spoiled by a failed run.
        XCTAssertThrowsError(try Rehearsal.run(definition, seed: 11))
    }

    func testATopLevelThatDrawsRandomNumbersIsRefusedOnARunWithAnotherSeed() throws {
        let path = try writeScenario("""
            scaleset { name = "web", capacity = 4 + math.random(1, 1000), model = { image = "v1" },
                       upgradePolicy = { mode = "Rolling" }, loadBalancerProbe = true }
            at("PT1M", function() update_model { image = "v2" } end)
            """)
        let o = options(seed: 5)
        let definition = try ScenarioDefinition(luaScript: path, options: o)
        XCTAssertNoThrow(try Rehearsal.run(definition, seed: 5))
        XCTAssertThrowsError(try Rehearsal.run(definition, seed: 6)) { error in
            guard let failure = error as? RunFailure, case .definition(let problems, _) = failure.error else { return XCTFail("\(error)") }
            XCTAssertEqual(problems.map(\.field), ["top level"])
        }
    }

    func testTheTopLevelPrintsOnceWhenLoadedAndRunsReadModulesFromTheDefinition() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("rehearse-mods-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: root + "/greeter", withIntermediateDirectories: true)
        try #"{ "name": "greeter", "version": "1.0.0", "api": "^1.0", "entry": "init", "description": "says hello", "dependencies": {}, "exports": {} }"#
            .write(toFile: root + "/greeter/rehearse-plugin.json", atomically: true, encoding: .utf8)
        try "return { word = 'hello' }".write(toFile: root + "/greeter/init.lua", atomically: true, encoding: .utf8)
        let path = try writeScenario(baseScaleSet + """

            local greeter = require "greeter"
            print("top " .. greeter.word)
            at("PT1M", function() print("action " .. greeter.word) update_model { image = "v2" } end)
            """)
        var loadPrints: [String] = []
        var o = options(printed: { loadPrints.append($0) })
        o.pluginPath = [root]
        let definition = try ScenarioDefinition(luaScript: path, options: o)
        XCTAssertEqual(loadPrints, ["top hello"])
        XCTAssertEqual(definition.program?.bundles.map(\.name), ["greeter"])
        XCTAssertEqual(definition.program?.modules.keys.sorted(), ["greeter"])
        // The bundle's files are gone: runs read the module from the definition.
        try FileManager.default.removeItem(atPath: root)
        var runPrints: [String] = []
        let record = try Rehearsal.run(definition, seed: 0, print: { runPrints.append($0) })
        XCTAssertEqual(runPrints, ["action hello"])
        XCTAssertEqual(record.summary.status?.code, .completed)
    }
}

/// Records written by several threads, each slot once.
private final class Records: @unchecked Sendable {
    // Safe: every access holds `lock`.
    private let lock = NSLock()
    private var slots: [Result<RunRecord, RunFailure>?]

    init(count: Int) { slots = Array(repeating: nil, count: count) }

    func set(_ index: Int, _ result: Result<RunRecord, RunFailure>) {
        lock.withLock { slots[index] = result }
    }

    func get(_ index: Int) -> Result<RunRecord, RunFailure>? {
        lock.withLock { slots[index] }
    }
}

private extension String {
    /// The line number after the last colon of a `file:line` location.
    var suffix2: String { String(split(separator: ":").last ?? "") }
}

/// `param(name, default)`: scenario parameters, typed like their defaults.
final class ScenarioParameterTests: XCTestCase {
    let script = baseScaleSet + """

        local share = param("silentBoots", 0.08)
        local extra = param("extraInstances", 2)
        local slow = param("slowUpgrades", false)
        local wait = duration(param("upgradeAt", "PT1M"))
        local label = param("label", "baseline")
        at(wait, function()
          print(string.format("%s %s %s %s %s", math.type(share), share, extra, tostring(slow), label))
          scale(10 + extra)
          update_model { image = "v2" }
        end)
        """

    func load(_ values: [String: String]) throws -> ScenarioDefinition {
        var o = options()
        o.parameters = values
        return try ScenarioDefinition(luaScript: try writeScenario(script), options: o)
    }

    func testParametersTakeTheirDefaultsOrTheValuesGivenTypedLikeTheDefault() throws {
        var printed: [String] = []
        let defaults = try load([:])
        XCTAssertEqual(defaults.parameters.keys.sorted(), ["extraInstances", "label", "silentBoots", "slowUpgrades", "upgradeAt"])
        XCTAssertEqual(defaults.parameters["silentBoots"]?.kind, .number)
        XCTAssertEqual(defaults.parameters["extraInstances"]?.kind, .integer)
        XCTAssertEqual(defaults.parameters["upgradeAt"]?.kind, .duration)
        XCTAssertEqual(defaults.timeline.map(\.time), [60_000])
        _ = try Rehearsal.run(defaults, seed: 0, print: { printed.append($0) })
        let given = try load(["silentBoots": "0.1", "extraInstances": "5", "slowUpgrades": "true", "upgradeAt": "PT5M", "label": "b"])
        XCTAssertEqual(given.timeline.map(\.time), [300_000])
        let record = try Rehearsal.run(given, seed: 0, print: { printed.append($0) })
        XCTAssertEqual(printed, ["float 0.08 2 false baseline", "float 0.1 5 true b"])
        XCTAssertEqual(record.summary.capacity, 15)
    }

    func testUnknownAndMistypedParametersAreRefusedBeforeAnythingRuns() throws {
        XCTAssertThrowsError(try load(["silentboots": "0.1", "extraInstances": "2.5", "slowUpgrades": "yes", "upgradeAt": "5 minutes"])) { error in
            guard case ScenarioError.definition(let problems, _) = error else { return XCTFail("\(error)") }
            XCTAssertEqual(problems.map(\.location), [.setting(.parameter("extraInstances"), value: "2.5"), .setting(.parameter("slowUpgrades"), value: "yes"),
                                                      .setting(.parameter("upgradeAt"), value: "5 minutes"), .setting(.parameter("silentboots"), value: nil)])
            XCTAssertEqual(problems.map(\.allowed), [nil, nil, nil, ["extraInstances", "label", "silentBoots", "slowUpgrades", "upgradeAt"]])
        }
    }
}
