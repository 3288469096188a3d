import Foundation
import LuaHost
import Reports
@testable import Scenario
import UpgradeEngine
import XCTest

/// The engine asks the health function for runs of probes due at one instant and handles only
/// the answers that change something; a run must give exactly what probing one instance at a
/// time gives: the same events, prints, summary and failures, byte for byte, on every seed.
final class ProbeRunTests: XCTestCase {
    /// Thirty instances in three zones with everything that ends a run early: boots of two to six
    /// minutes, 8% of boots that never answer, Healthy instances that flap (two probes needed, so
    /// a lone Unhealthy answer changes nothing but the streak), answers the fast path does not
    /// read (another casing, a body string), random draws in the health function and in faults,
    /// and a health function that reads other instances' tables (so a table refreshed out of
    /// turn would show).
    static let flappingFleet = """
        scaleset {
          name = "shop", capacity = 30, zones = { "1", "2", "3" }, model = { image = "v1" },
          upgradePolicy = { mode = "Rolling", rollingUpgradePolicy = {
            maxBatchInstancePercent = 20, maxUnhealthyUpgradedInstancePercent = 20, pauseTimeBetweenBatches = "PT10S" } },
          healthExtension = { protocol = "http", port = 8080, requestPath = "/health",
                              intervalInSeconds = 5, gracePeriod = 600, numberOfProbes = 2 },
        }
        local seen = {}
        calls = 0
        health(function(vm, now)
          calls = calls + 1
          seen[vm.id] = vm
          -- When a neighbour's table shows its restart tells whether tables change in probe order.
          local neighbour = seen[(vm.id + 1) % 30]
          local ended = neighbour and neighbour.lastOperation and neighbour.lastOperation.endedAt
          if ended ~= vm.state.neighbourEnded then
            vm.state.neighbourEnded = ended
            print(vm.name .. " sees its neighbour's operation that ended at " .. tostring(ended))
          end
          if vm.model.version == 2 then
            if vm.state.boot == nil then
              vm.state.boot = math.random(120, 360)
              vm.state.silent = math.random() < 0.08
            end
            if vm.state.silent or now - vm.startedAt < vm.state.boot then return nil end
          end
          local draw = math.random()
          if draw < 0.04 then return { applicationHealthState = "Unhealthy" } end
          if draw < 0.06 then return { applicationHealthState = "Healthy", CustomMetrics = { rollingUpgrade = { PhaseOrderingNumber = 0 } } } end
          if draw < 0.07 then return '{"ApplicationHealthState": "Healthy"}' end
          return { applicationHealthState = "Healthy", customMetrics = { rollingUpgrade = { PhaseOrderingNumber = vm.id % 2 } } }
        end)
        fault(function(vm, op) if op == "upgrade" and math.random() < 0.05 then return { fail = true } end end)
        at("PT1M", function() update_model { image = "v2" } end)
        """

    /// MaxSurge: new instances join the probe rounds while old ones leave them.
    static let surgingFleet = """
        scaleset {
          name = "surge", capacity = 12, zones = { "1", "2", "3" }, model = { image = "v1" }, quota = 20,
          upgradePolicy = { mode = "Rolling", rollingUpgradePolicy = { maxBatchInstancePercent = 25, MaxSurge = "true" } },
          healthExtension = { protocol = "http", port = 8000, requestPath = "/health", gracePeriod = 300 },
          timings = { create = "PT2M", delete = "PT30S" },
        }
        health(function(vm, now)
          vm.state.seen = vm.state.seen or now
          if now - vm.state.seen < math.random(30, 90) then return nil end
          if math.random() < 0.03 then return { applicationHealthState = "Unhealthy" } end
          return { applicationHealthState = "Healthy" }
        end)
        at("PT2M", function() update_model { image = "v2" } end)
        """

    func testRunsGiveTheEventsPrintsAndSummariesOfOneProbeAtATimeOnEverySeed() throws {
        var endedEarly = 0, faulted = 0
        for script in [Self.flappingFleet, Self.surgingFleet] {
            for runs in try recordsInRunsAndAlone(path: try writeScenario(script), seeds: 0..<40) {
                if runs.summary.status?.code == .faulted { faulted += 1 }
                endedEarly += runs.events.filter { if case .healthChanged(.healthy, .unhealthy, _) = $0.payload { true } else { false } }.count
            }
        }
        // The seeds exercised what ends runs: healthy instances turning unhealthy, faulted upgrades.
        XCTAssertGreaterThan(endedEarly, 20)
        XCTAssertGreaterThan(faulted, 0)
    }

    func testEveryShippedScenarioGivesTheSameRecordsInRunsOnTwelveSeeds() throws {
        let folder = repositoryRoot + "/scripts"
        let scripts = try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.hasSuffix(".lua") }.sorted()
        XCTAssertGreaterThanOrEqual(scripts.count, 13)
        for script in scripts { _ = try recordsInRunsAndAlone(path: folder + "/" + script, seeds: 0..<12) }
    }

    func testAScriptErrorInTheMiddleOfARunFailsAsItDoesOneProbeAtATime() throws {
        // The 700th health call fails: an instance in the middle of a round of thirty.
        let script = """
            scaleset {
              name = "shop", capacity = 30, zones = { "1", "2", "3" }, model = { image = "v1" },
              upgradePolicy = { mode = "Rolling", rollingUpgradePolicy = { maxBatchInstancePercent = 20 } },
              healthExtension = { protocol = "http", port = 8080, requestPath = "/health", intervalInSeconds = 5 },
            }
            local count = 0
            health(function(vm, now)
              count = count + 1
              if count == 700 then error("probe " .. count .. " of " .. vm.name) end
              return { applicationHealthState = "Healthy" }
            end)
            at("PT1M", function() update_model { image = "v2" } end)
            """
        let path = try writeScenario(script)
        var alone = RunInputs(seed: 3)
        alone.probesInRuns = false
        let definition = try ScenarioDefinition(luaScript: path, options: options())
        let failures = try [RunInputs(seed: 3), alone].map { (inputs: RunInputs) -> (ScriptContext?, String?, [String]) in
            var events: [String] = []
            do {
                _ = try Rehearsal.run(definition, inputs, onEvent: { events.append($0.jsonLine) })
                XCTFail("the run should fail")
            } catch let failure as RunFailure {
                if case .script(let lua, let context) = failure.error { return (context, lua.message, events) }
                XCTFail("\(failure)")
            }
            return (nil, nil, events)
        }
        // The 700th probe fails, in its health call for the instance it asks, in both ways of asking.
        guard case .callback("health", let instance, _)? = failures[0].0 else { return XCTFail("\(failures[0])") }
        XCTAssertEqual(failures[0].1, "probe 700 of \(instance)")
        XCTAssertEqual(failures[0].0, failures[1].0)
        XCTAssertEqual(failures[0].1, failures[1].1)
        XCTAssertEqual(failures[0].2, failures[1].2)
    }

    func testTheProbeLimitIsReachedAtTheSameProbe() throws {
        let path = try writeScenario(Self.flappingFleet)
        var messages: [String] = []
        for inRuns in [true, false] {
            var limited = RunInputs(seed: 5)
            limited.probesInRuns = inRuns
            limited.runLimits.probes = 1_234
            let definition = try ScenarioDefinition(luaScript: path, options: options())
            do {
                _ = try Rehearsal.run(definition, limited)
                XCTFail("the run should reach the probe limit")
            } catch {
                guard case .runLimit(let reached) = error.error else { return XCTFail("\(error.error)") }
                XCTAssertEqual(reached.limit, .probes)
                XCTAssertEqual(reached.allowed, 1_234)
                messages.append("\(reached)")
            }
        }
        XCTAssertEqual(messages.count, 2)
        XCTAssertEqual(messages.first, messages.last)
    }

    /// Runs the scenario at `path` on each of `seeds` in runs and one probe at a time, asserts
    /// that both give the same events, records and prints, and returns the records made in runs.
    private func recordsInRunsAndAlone(path: String, seeds: Range<UInt64>) throws -> [RunRecord] {
        let definition = try ScenarioDefinition(luaScript: path, options: options())
        let name = (path as NSString).lastPathComponent
        return try seeds.map { seed in
            var alone = RunInputs(seed: seed)
            alone.probesInRuns = false
            let (runs, runsPrinted) = try record(definition, RunInputs(seed: seed))
            let (single, singlePrinted) = try record(definition, alone)
            XCTAssertEqual(runs.events.map(\.jsonLine), single.events.map(\.jsonLine), "\(name) seed \(seed)")
            XCTAssertEqual(runs, single, "\(name) seed \(seed)")
            XCTAssertEqual(runsPrinted, singlePrinted, "\(name) seed \(seed)")
            XCTAssertEqual(runs.summary.probes, single.summary.probes)
            return runs
        }
    }

    /// Runs `definition` with `inputs`: its record, and what it printed with the virtual time.
    private func record(_ definition: ScenarioDefinition, _ inputs: RunInputs) throws -> (RunRecord, [String]) {
        var printed: [String] = []
        let record = try Rehearsal.run(definition, inputs, printAt: { printed.append("\($0) \($1)") })
        return (record, printed)
    }
}
