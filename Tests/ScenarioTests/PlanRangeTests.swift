import Formats
import Scenario
import UpgradeEngine
import XCTest

/// `plan`'s duration range: the p50 and p95 of upgrades drawn from what bounded runs of the
/// scenario measured, against a sweep of the same scenario.
final class PlanRangeTests: XCTestCase {
    func testTheRangeOfThirtyInstancesWithSlowBootsHoldsTheSweepsPercentiles() throws {
        // scripts/slow-boots.lua: 30 instances in 3 zones, the application answering 240–360 s after a restart.
        let definition = try ScenarioDefinition(luaScript: repositoryRoot + "/scripts/slow-boots.lua", options: options())
        let plan = try Rehearsal.plan(definition, seed: 0)
        XCTAssertEqual(plan.batches.map(\.instances.count), [6, 4, 6, 4, 6, 4])
        let range = Rehearsal.range(of: plan, pause: 10_000, definition, RunInputs(seed: 0))
        XCTAssertEqual(range.runs, 20)
        XCTAssertEqual(range.upgradesEnded, 20)
        XCTAssertEqual(range.instances, 600)
        XCTAssertEqual(range.trials, 1_000)
        XCTAssertEqual(range.stopped, .allRuns)
        let p50 = Double(try XCTUnwrap(range.p50)) / 1000, p95 = Double(try XCTUnwrap(range.p95)) / 1000
        // rehearse sweep scripts/slow-boots.lua --seeds 0..999, measured once: time to finish p50 2,825 s, p95 2,885 s.
        XCTAssertEqual(p50, 2_825, accuracy: 2_825 * 0.05)
        XCTAssertEqual(p95, 2_885, accuracy: 2_885 * 0.05)
        // Closed form: six batches each of a 120 s upgrade and a boot of 240 s at least, five pauses of 10 s;
        // at most 360 s of boot and one more 5 s probe a batch.
        XCTAssertGreaterThanOrEqual(p50, 6 * (120 + 240) + 5 * 10)
        XCTAssertLessThanOrEqual(p95, 6 * (120 + 360 + 5) + 5 * 10 + 60)
        XCTAssertLessThanOrEqual(p50, p95)
    }

    func testTheRunsStopAtTheirBoundsAndSaySo() throws {
        let definition = try ScenarioDefinition(luaScript: repositoryRoot + "/scripts/slow-boots.lua", options: options())
        let plan = try Rehearsal.plan(definition, seed: 0)
        // 60 instances are enough: two runs of 30.
        let few = Rehearsal.range(of: plan, pause: 10_000, definition, RunInputs(seed: 0), bounds: PlanRangeBounds(instances: 60))
        XCTAssertEqual(few.runs, 2)
        XCTAssertEqual(few.stopped, .instances)
        // 10 minutes of virtual time past the upgrade's start: the first batch alone takes longer than 6 min, the upgrade more.
        let short = Rehearsal.range(of: plan, pause: 10_000, definition, RunInputs(seed: 0), bounds: PlanRangeBounds(virtualTime: 600_000))
        XCTAssertEqual(short.runs, 1)
        XCTAssertEqual(short.upgradesEnded, 0)
        XCTAssertEqual(short.stopped, .virtualTime)
        // The first batch's 6 instances were measured before it stopped.
        XCTAssertGreaterThanOrEqual(short.instances, 6)
    }

    /// A print in the planned run reaches the caller with its virtual time, as a run's does:
    /// `plan` writes `print PT1M: …` as `run` does.
    func testAPrintOfThePlannedRunCarriesItsVirtualTime() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("plan-print-\(UUID().uuidString).lua").path
        try """
            scaleset { name = "w", capacity = 4, upgradePolicy = { mode = "Rolling" },
                       healthExtension = { protocol = "http", port = 80, requestPath = "/" } }
            at("PT1M", function() print("updating"); update_model { image = "v2" } end)
            """.write(toFile: path, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let definition = try ScenarioDefinition(luaScript: path, options: options())
        nonisolated(unsafe) var printed: [(Millis, String)] = []
        let plan = try Rehearsal.plan(definition, RunInputs(seed: 0), printAt: { printed.append(($0, $1)) })
        XCTAssertEqual(plan.batches.count, 4)
        XCTAssertEqual(printed.map(\.0), [60_000])
        XCTAssertEqual(printed.map(\.1), ["updating"])
    }
}
