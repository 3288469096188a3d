import Foundation
import XCTest

/// `sweep --shadow-gate`: the script's gate (its `on_hook`) scored over a sweep against the same
/// seeds without it, run for run.
final class ShadowGateCLITests: XCTestCase {
    let example = ["plugins/batch-approval/example.lua", "--plugin-path", "plugins"]

    func lines(_ path: String) throws -> [[String: Any]] {
        try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").map {
            try XCTUnwrap(JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
    }

    /// The shadow score equals, seed by seed, a sweep with the gate and one without it
    /// (`--no-gate`): stopped when the gate rejected an instance; bad when the rollout that
    /// counts (without the gate when it stopped, else with it) faulted or reached its time limit.
    func testShadowScoreEqualsTwoSweepsRunForRun() throws {
        let folder = try newTemporaryFolder()
        let seeds = ["--seeds", "0..59"]
        let scored = try runRehearse(["sweep"] + example + seeds + ["--shadow-gate", "--json"])
        XCTAssertEqual(scored.status, 0, scored.stderr)
        let shadow = try XCTUnwrap((try JSONSerialization.jsonObject(with: Data(scored.stdout.utf8)) as? [String: Any])?["shadowGate"] as? [String: Any])
        XCTAssertEqual(try runRehearse(["sweep"] + example + seeds + ["--runs", folder + "/on.jsonl"]).status, 0)
        XCTAssertEqual(try runRehearse(["sweep"] + example + seeds + ["--no-gate", "--runs", folder + "/off.jsonl"]).status, 0)
        let on = try lines(folder + "/on.jsonl"), off = try lines(folder + "/off.jsonl")
        XCTAssertEqual(on.count, 60)
        var expected: [String: [String]] = ["trueStop": [], "falseStop": [], "truePass": [], "falsePass": []]
        for (gated, ungated) in zip(on, off) {
            let stopped = !((gated["hookRejected"] as? [Int]) ?? []).isEmpty
            let counted = stopped ? ungated : gated
            let bad = counted["code"] as? String == "Faulted" || counted["hitTimeLimit"] as? Bool == true
            let outcome = stopped ? (bad ? "trueStop" : "falseStop") : (bad ? "falsePass" : "truePass")
            expected[outcome]!.append(try XCTUnwrap(gated["seed"] as? String))
        }
        for (outcome, seeds) in expected {
            XCTAssertEqual((shadow[outcome] as? [String: Any])?["seeds"] as? [String], seeds, outcome)
        }
        XCTAssertEqual(expected["falseStop"]?.count, 60, "the example's bot holds instance 3 in every run, which completes without it")
        let oneJob = try runRehearse(["sweep"] + example + seeds + ["--shadow-gate", "--json", "--jobs", "1"])
        XCTAssertEqual(oneJob.stdout, scored.stdout, "the same bytes whatever --jobs")
    }

    /// A gate can be gated: falseStop <= 5% fails for a bot that holds an instance every time.
    func testFalseStopsCanBeRequired() throws {
        let gate = try runRehearse(["sweep"] + example + ["--seeds", "0..99", "--shadow-gate", "--require", "falseStop <= 5%", "--json"])
        XCTAssertEqual(gate.status, 1, gate.stderr)
        let report = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(gate.stdout.utf8)) as? [String: Any])
        let requirement = try XCTUnwrap((report["requirements"] as? [[String: Any]])?.first)
        XCTAssertEqual(requirement["runs"] as? Int, 100)
        XCTAssertEqual(requirement["verdict"] as? String, "failed")
    }

    /// Bad input: a shadow measure without --shadow-gate, a script with no gate, with --shard,
    /// --no-gate beside it, a part carrying a shadow requirement.
    func testShadowGateOptionsAreChecked() throws {
        for arguments in [["sweep"] + example + ["--require", "falsePass <= 1%"], ["sweep", "scripts/ten-at-twenty.lua", "--shadow-gate"],
                          ["sweep"] + example + ["--shadow-gate", "--shard", "1/2"], ["sweep"] + example + ["--shadow-gate", "--no-gate"],
                          ["sweep"] + example + ["--shadow-gate", "--until-decided", "--require", "falseStop <= 5%"],
                          ["compare", "scripts/risk-gate.lua", "--set", "rollingUpgradePolicy.maxBatchInstancePercent=20,50", "--require", "falseStop <= 5%"]] {
            XCTAssertEqual(try runRehearse(arguments).status, 2, "\(arguments)")
        }
    }
}
