import Foundation
import XCTest

/// `rehearse explain` and `sweep --explain`: the causal chain of a failing seed, and a change
/// that the same seed passes, checked by running that seed again with it.
final class ExplainCLITests: XCTestCase {
    func object(_ out: CLIOutput) throws -> [String: Any] {
        try XCTUnwrap(JSONSerialization.jsonObject(with: Data(out.stdout.utf8)) as? [String: Any], out.stdout + out.stderr)
    }

    /// Seed 4 of rolling-boot-failures faults after batch 7: instances 1 and 13 (batch 3) and 26
    /// and 29 (batch 7) never answer, 4 of 30 upgraded against a budget of 10% (3). Raising the
    /// budget to 15% (4) is the smallest change; the same seed with it completes.
    func testExplainNamesTheBudgetAndAChangeThatPassesTheSameSeed() throws {
        let out = try runRehearse(["explain", "scripts/rolling-boot-failures.lua", "--seed", "4", "--json"])
        XCTAssertEqual(out.status, 1, out.stderr)
        let e = try object(out)
        XCTAssertEqual(e["passed"] as? Bool, false)
        let chain = try XCTUnwrap(e["chain"] as? [[String: Any]])
        let started = try XCTUnwrap(chain.first { $0["kind"] as? String == "started" }?["figures"] as? [String: String])
        XCTAssertEqual(started["upgradedBudget"], "3")
        XCTAssertEqual(started["batchSize"], "6")
        let check = try XCTUnwrap(chain.first { $0["kind"] as? String == "checkFailed" })
        XCTAssertEqual(check["instances"] as? [Int], [1, 13, 26, 29])
        XCTAssertEqual(check["batch"] as? Int, 7)
        XCTAssertEqual((check["figures"] as? [String: String])?["thresholdPercent"], "10")
        let failed = chain.filter { $0["kind"] as? String == "instanceFailed" }.compactMap { ($0["instances"] as? [Int])?.first }
        XCTAssertEqual(failed, [1, 13, 26, 29])
        let passing = try XCTUnwrap(e["passing"] as? [[String]])
        XCTAssertEqual(passing, [["rollingUpgradePolicy.maxUnhealthyUpgradedInstancePercent=15"]])
        XCTAssertEqual(e["searchedPairs"] as? Bool, false)
        let again = try runRehearse(["run", "scripts/rolling-boot-failures.lua", "--seed", "4", "--set", passing[0][0]])
        XCTAssertEqual(again.status, 0, "the named change passes the same seed: \(again.stderr)")
        XCTAssertEqual(try runRehearse(["explain", "scripts/rolling-boot-failures.lua", "--seed", "4", "--json"]).stdout, out.stdout, "deterministic")
    }

    /// The risk gate at maxUnhealthyUpgradedInstancePercent 5 (P(Faulted) 26%): sweep --explain
    /// finds failing seeds, and for the first explain names a change that seed passes.
    func testRiskGateFailingSeedIsExplained() throws {
        let set = ["--set", "rollingUpgradePolicy.maxUnhealthyUpgradedInstancePercent=5"]
        let swept = try runRehearse(["sweep", "scripts/risk-gate.lua", "--seeds", "0..29", "--explain", "--explain-seeds", "3", "--json"] + set)
        XCTAssertLessThanOrEqual(swept.status, 1, swept.stderr)
        let explain = try XCTUnwrap(try object(swept)["explain"] as? [String: Any])
        let seeds = try XCTUnwrap(explain["explained"] as? [String])
        XCTAssertFalse(seeds.isEmpty, "a quarter of the runs fault")
        let changes = try XCTUnwrap(explain["changes"] as? [[String: Any]])
        XCTAssertTrue(changes.contains { $0["passes"] as? Int == seeds.count }, "some single change passes every explained seed")
        let jobs1 = try runRehearse(["sweep", "scripts/risk-gate.lua", "--seeds", "0..29", "--explain", "--explain-seeds", "3", "--json", "--jobs", "1"] + set)
        XCTAssertEqual(jobs1.stdout, swept.stdout, "the same bytes whatever --jobs")
        let one = try runRehearse(["explain", "scripts/risk-gate.lua", "--seed", seeds[0], "--json"] + set)
        XCTAssertEqual(one.status, 1)
        let passing = try XCTUnwrap(try object(one)["passing"] as? [[String]])
        let change = try XCTUnwrap(passing.first)
        let again = try runRehearse(["run", "scripts/risk-gate.lua", "--seed", seeds[0]] + set + change.flatMap { ["--set", $0] })
        XCTAssertEqual(again.status, 0, again.stderr)
    }

    /// Every upgrade and every MaxSurge create fails: no single change and no pair passes (101
    /// runs); explain says so (exit 1), and a
    /// passing seed is explained without a search (exit 0).
    func testNoChangeFoundIsSaidAndAPassingRunNeedsNone() throws {
        let script = try newTemporaryFolder() + "/doomed.lua"
        try """
            scaleset {
              name = "api", capacity = 10, model = { image = "v1" },
              upgradePolicy = { mode = "Rolling", rollingUpgradePolicy = { maxBatchInstancePercent = 20, maxUnhealthyUpgradedInstancePercent = 20 } },
              healthExtension = { protocol = "http", port = 8080, requestPath = "/health", intervalInSeconds = 5, gracePeriod = 60 },
            }
            health(function(vm, now) return { applicationHealthState = "Healthy" } end)
            fault(function(_, op) if op ~= "delete" then return { fail = true } end end)
            at("PT1M", function() update_model { image = "v2" } end)
            expect { code = "Completed" }
            """.write(toFile: script, atomically: true, encoding: .utf8)
        let out = try runRehearse(["explain", script, "--json"])
        XCTAssertEqual(out.status, 1, out.stderr)
        let e = try object(out)
        XCTAssertEqual((e["passing"] as? [Any])?.count, 0)
        XCTAssertEqual(e["searchedPairs"] as? Bool, true)
        XCTAssertGreaterThan((e["candidates"] as? [Any])?.count ?? 0, 20, "singles, then pairs")
        let bounded = try object(try runRehearse(["explain", script, "--json", "--max-runs", "5"]))
        XCTAssertEqual((bounded["candidates"] as? [Any])?.count, 5)
        XCTAssertEqual(bounded["exhausted"] as? Bool, true)

        let fine = try runRehearse(["explain", "scripts/ten-at-twenty.lua", "--json"])
        XCTAssertEqual(fine.status, 0, fine.stderr)
        XCTAssertEqual((try object(fine)["candidates"] as? [Any])?.count, 0)
    }

    /// Bad input is exit 2: runs out of range, --explain-seeds alone, --explain with --shard.
    func testExplainOptionsAreChecked() throws {
        for arguments in [["explain", "scripts/ten-at-twenty.lua", "--max-runs", "0"], ["explain", "scripts/ten-at-twenty.lua", "--max-runs", "10001"],
                          ["sweep", "scripts/ten-at-twenty.lua", "--explain-seeds", "5"], ["sweep", "scripts/ten-at-twenty.lua", "--explain", "--shard", "1/2"],
                          ["sweep", "scripts/ten-at-twenty.lua", "--explain", "--explain-seeds", "0"], ["explain", "scripts/nosuch.lua"]] {
            XCTAssertEqual(try runRehearse(arguments).status, 2, "\(arguments)")
        }
    }
}
