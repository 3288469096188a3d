import AzureWire
import Foundation
import LuaHost
import Scenario
import UpgradeEngine
import XCTest

/// Sweeps: many seeds of one definition, in parallel, the same result whatever the jobs.
final class SweepTests: XCTestCase {
    func definition() throws -> ScenarioDefinition {
        try ScenarioDefinition(luaScript: repositoryRoot + "/scripts/rolling-boot-failures.lua", options: options())
    }

    func testASweepGivesTheSameDigestsWhateverTheJobs() throws {
        let definition = try definition()
        let seeds = Array(UInt64(0)..<40)
        let one = try Sweep.run(definition, seeds: seeds, jobs: 1)
        let three = try Sweep.run(definition, seeds: seeds, jobs: 3)
        XCTAssertEqual(one, three)
        XCTAssertEqual(one.map(\.seed), seeds)
        // Each digest is its run's: the same as a run on its own.
        let seven = try Rehearsal.run(definition, seed: 7)
        XCTAssertEqual(one[7], RunDigest(seven))
        // The seeds differ: some roll out, some fault on the upgraded-unhealthy threshold.
        XCTAssertTrue(one.contains { $0.code == .completed })
        XCTAssertTrue(one.contains { $0.errorCode == .unhealthyUpgraded })
        for digest in one where digest.code == .faulted {
            // Faulted only once more than 3 of 30 upgraded instances (10%) were unhealthy.
            XCTAssertGreaterThan(digest.failed.count, 3, "seed \(digest.seed)")
        }
        XCTAssertTrue(one.allSatisfy { $0.lowestHealthy == 24 }, "batches of 6 of 30 take 6 down at once")
    }

    func testTheFirstFailedSeedStopsTheSweepAndIsNamedWhateverTheJobs() throws {
        let text = baseScaleSet + """

            health(function(vm, now)
              if now > 60 and math.random(1, 400) == 1 then error("probe handler crashed") end
              return { applicationHealthState = "Healthy" }
            end)
            at("PT1M", function() update_model { image = "v2" } end)
            """
        let path = try writeScenario(text)
        // The line of the script's error().
        let line = text[..<text.range(of: "error(")!.lowerBound].filter { $0 == "\n" }.count + 1
        let definition = try ScenarioDefinition(luaScript: path, options: options())
        var failedSeeds: Set<UInt64> = []
        for jobs in [1, 2, 4] {
            XCTAssertThrowsError(try Sweep.run(definition, seeds: Array(0..<30), jobs: jobs)) { error in
                guard let failure = error as? RunFailure, case .script(let lua, _) = failure.error else { return XCTFail("\(error)") }
                // The script's own error(), raised on its line inside health().
                XCTAssertEqual(lua.kind, .runtime)
                XCTAssertEqual(lua.location?.split(separator: ":").last, "\(line)")
                XCTAssertEqual(lua.function, "health")
                failedSeeds.insert(failure.seed)
            }
        }
        XCTAssertEqual(failedSeeds.count, 1, "the same seed is named whatever the jobs: \(failedSeeds)")
        // It is the lowest seed whose run fails on its own.
        let first = try XCTUnwrap(failedSeeds.first)
        XCTAssertThrowsError(try Rehearsal.run(definition, seed: first))
        for seed in 0..<first { XCTAssertNoThrow(try Rehearsal.run(definition, seed: seed), "seed \(seed)") }
    }
}
