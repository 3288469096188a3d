import Formats
import UpgradeEngine
import XCTest

/// A health source that answers runs, as the Lua one does: named states, a seeded draw per probe
/// (so the order of calls shows in the answers), and the length of every run it was asked.
private final class RunningSource: HealthSource {
    var generator: UInt64
    var runLengths: [Int] = []
    var calls = 0

    init(seed: UInt64) { generator = seed &* 0x9E37_79B9_7F4A_7C15 | 1 }

    /// xorshift: the next draw in [0, 1).
    private func draw() -> Double {
        generator ^= generator << 13
        generator ^= generator >> 7
        generator ^= generator << 17
        return Double(generator >> 11) / Double(1 << 53)
    }

    func probe(_ instance: borrowing Instance, at time: Millis) throws -> ProbeReply {
        calls += 1
        let value = draw()
        // After an upgrade: 2 to 6 minutes silent, then healthy; a few Unhealthy flaps anywhere.
        if instance.modelVersion == 2, time - instance.health.startedAt < 120_000 + Millis(instance.id % 5) * 60_000 { return .noAnswer }
        return .named(value < 0.03 ? .unhealthy : .healthy)
    }

    var answersRuns: Bool { true }

    func probe(run: inout ProbeRun) {
        runLengths.append(run.count)
        probeOneByOne(&run)
    }
}

final class ProbeRunEngineTests: XCTestCase {
    /// Thirty instances in three zones, two probes needed, grace 600 s: runs are asked for, some
    /// of them long, and every seed gives the events and summary of one probe at a time.
    func testRunsHappenAndChangeNothingOnTwentySeeds() throws {
        var longest = 0
        for seed in UInt64(1)...20 {
            var records: [[String]] = [], summaries: [RunSummary] = [], calls: [Int] = []
            for inRuns in [true, false] {
                let definition = scaleSet(30, zones: ["1", "2", "3"]) {
                    $0.healthExtension = HealthExtensionSettings(protocol: .http, port: 8000, requestPath: "/health", numberOfProbes: 2,
                                                                 gracePeriod: 600)
                    $0.policy.rolling.maxBatchInstancePercent = 20
                    $0.policy.rolling.maxUnhealthyUpgradedInstancePercent = 20
                }
                let source = RunningSource(seed: seed)
                let sim = try Simulation(definition, health: source)
                sim.asksForProbeRuns = inRuns
                var events: [String] = []
                sim.onEvent = { events.append("\($0)") }
                sim.schedule(at: 60_000, name: "update") { try $0.updateModel(["image": "v2"]) }
                summaries.append(try sim.run())
                records.append(events)
                calls.append(source.calls)
                if inRuns {
                    XCTAssertFalse(source.runLengths.isEmpty, "seed \(seed): no run was asked")
                    longest = max(longest, source.runLengths.max() ?? 0)
                } else {
                    XCTAssertTrue(source.runLengths.isEmpty)
                }
            }
            XCTAssertEqual(records[0], records[1], "seed \(seed)")
            XCTAssertEqual(summaries[0], summaries[1], "seed \(seed)")
            XCTAssertEqual(calls[0], calls[1], "seed \(seed)")
            XCTAssertEqual(summaries[0].probes, calls[0])
        }
        // A whole round of thirty instances went in one run at least once.
        XCTAssertGreaterThanOrEqual(longest, 25)
    }
}
