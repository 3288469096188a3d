import Foundation
import XCTest

/// The alarm-rollback bundle: a fleet metric sampled every period, an alarm on M of the last N
/// samples, then cancel and the previous model put back; and its shadow score.
final class AlarmRollbackCLITests: XCTestCase {
    let example = ["plugins/alarm-rollback/example.lua", "--plugin-path", "plugins"]

    func events(_ path: String) throws -> [[String: Any]] {
        try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").map {
            try XCTUnwrap(JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
    }

    /// Seed 0 faults without the alarm; with it the rollout is cancelled when 2 of 3 samples are
    /// below 80% serving, v1 is rolled out again and completes, every instance on v1's image.
    func testTheAlarmTurnsAFaultingRolloutIntoARolledBackOne() throws {
        let folder = try newTemporaryFolder()
        let gated = try runRehearse(["run"] + example + ["--events", folder + "/on.jsonl"])
        XCTAssertEqual(gated.status, 0, gated.stderr)
        let list = try events(folder + "/on.jsonl")
        let kinds = list.compactMap { $0["kind"] as? String }
        let cancelled = try XCTUnwrap(kinds.firstIndex(of: "upgradeCancelled"))
        let rollback = try XCTUnwrap(list.indices.first { $0 > cancelled && list[$0]["kind"] as? String == "modelUpdated" })
        XCTAssertEqual((list[rollback]["changes"] as? [String: String])?["image"], "v1")
        XCTAssertEqual(kinds.last(where: { $0 == "upgradeCompleted" || $0 == "upgradeFaulted" }), "upgradeCompleted")
        XCTAssertTrue(gated.stdout.contains("alarm-rollback: 2 of the last"), gated.stdout)
        // Without its gate the same seed faults.
        let ungated = try runRehearse(["sweep"] + example + ["--seeds", "0..0", "--no-gate", "--json"])
        let report = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(ungated.stdout.utf8)) as? [String: Any], ungated.stderr)
        let outcomes = try XCTUnwrap(report["outcomes"] as? [[String: Any]])
        XCTAssertEqual(outcomes.first { $0["code"] as? String == "Faulted" }?["runs"] as? Int, 1)
    }

    /// Over 100 seeds: 78 rollouts that fault without the alarm are stopped, 22 that complete
    /// without it are stopped too (false stops); with the alarm none faults.
    func testTheAlarmsShadowScore() throws {
        let out = try runRehearse(["sweep"] + example + ["--seeds", "0..99", "--shadow-gate", "--json"])
        XCTAssertEqual(out.status, 0, out.stderr)
        let report = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(out.stdout.utf8)) as? [String: Any])
        let shadow = try XCTUnwrap(report["shadowGate"] as? [String: Any])
        func runs(_ outcome: String) -> Int? { (shadow[outcome] as? [String: Any])?["runs"] as? Int }
        XCTAssertEqual(runs("trueStop"), 78)
        XCTAssertEqual(runs("falseStop"), 22)
        XCTAssertEqual(runs("falsePass"), 0)
        let faulted = (report["outcomes"] as? [[String: Any]])?.first { $0["code"] as? String == "Faulted" }?["runs"] as? Int
        XCTAssertEqual(faulted ?? 0, 0)
        let ungated = try runRehearse(["sweep"] + example + ["--seeds", "0..99", "--no-gate", "--json"])
        let off = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(ungated.stdout.utf8)) as? [String: Any])
        XCTAssertEqual((off["outcomes"] as? [[String: Any]])?.first { $0["code"] as? String == "Faulted" }?["runs"] as? Int, 78,
                       "the true stops are exactly the seeds that fault without the alarm")
    }

    /// Bad options are refused at the script's line.
    func testWatchOptionsAreChecked() throws {
        let folder = try newTemporaryFolder()
        for (options, named) in [("{ threshold = 0.5 }", "rollback"), ("{ rollback = { image = \"v1\" }, periods = 2, datapoints = 3 }", "datapoints"),
                                 ("{ rollback = { image = \"v1\" }, metric = \"cpu\" }", "metric"), ("{ rollback = { image = \"v1\" }, every = 0 }", "every")] {
            let script = folder + "/bad.lua"
            try """
                local alarm = require "alarm-rollback"
                scaleset { name = "a", capacity = 2, model = { image = "v1" }, upgradePolicy = { mode = "Rolling" } }
                alarm.watch \(options)
                """.write(toFile: script, atomically: true, encoding: .utf8)
            let out = try runRehearse(["run", script, "--plugin-path", "plugins"])
            XCTAssertEqual(out.status, 2, options)
            XCTAssertTrue(out.stderr.contains(named), "\(options): \(out.stderr)")
        }
    }
}
