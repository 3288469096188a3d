import Foundation
import XCTest

/// Issue 37's reproductions on the command line: gates that passed wrongly, a requirement on an
/// expectation a candidate lacks, a context name given twice, a document name that forged a line
/// on standard error, and capacity as a requirement of `tune`. Each asserts the exit status and
/// the decoded JSON.
final class HostileGateCLITests: XCTestCase {
    func object(_ out: CLIOutput) throws -> [String: Any] {
        try XCTUnwrap(JSONSerialization.jsonObject(with: Data(out.stdout.utf8)) as? [String: Any], out.stdout + out.stderr)
    }

    func write(_ text: String, name: String) throws -> String {
        let path = try newTemporaryFolder() + "/" + name
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    func testAShardOfOneThatFailsExitsOne() throws {
        // Every run of ten-at-twenty completes: "Completed <= 1%" fails on 100 of 100.
        let arguments = ["sweep", "scripts/ten-at-twenty.lua", "--seeds", "0..99", "--require", "Completed <= 1%", "--shard", "1/1"]
        let text = try runRehearse(arguments)
        XCTAssertEqual(text.status, 1, text.stderr)
        let json = try runRehearse(arguments + ["--json"])
        XCTAssertEqual(json.status, 1, json.stderr)
        let part = try object(json)
        XCTAssertEqual(part["passed"] as? Bool, false)
        XCTAssertEqual((part["verdicts"] as? [[String: Any]])?.first?["verdict"] as? String, "failed")
        XCTAssertEqual((part["runs"] as? [Any])?.count, 100)
        // A part of two with an undecided requirement leaves it to the merge; a failed one fails the part.
        let half = try runRehearse(["sweep", "scripts/ten-at-twenty.lua", "--seeds", "0..9", "--require", "Completed >= 50%", "--shard", "1/2", "--json"])
        XCTAssertEqual(half.status, 0, half.stderr)
        XCTAssertEqual(try object(half)["passed"] as? Bool, true)
        let failedHalf = try runRehearse(["sweep", "scripts/ten-at-twenty.lua", "--seeds", "0..199", "--require", "Completed <= 1%", "--shard", "2/2", "--json"])
        XCTAssertEqual(failedHalf.status, 1, failedHalf.stderr)
    }

    func testAnUpgradeWaitingForApprovalForeverIsNotWithinTheDeadline() throws {
        // The deferral script without its operator: instance 7 waits for an approval that never comes.
        let script = try String(contentsOfFile: repositoryRoot + "/scripts/os-upgrade-deferral.lua", encoding: .utf8)
            .replacingOccurrences(of: "at(\"PT1H\", function() approve_os_upgrade { 7 } end)", with: "")
        let path = try write(script, name: "waiting.lua")
        let out = try runRehearse(["sweep", path, "--seeds", "0..199", "--deadline", "PT1H", "--require", "deadline >= 95%", "--json"])
        XCTAssertEqual(out.status, 1, out.stderr)
        let report = try object(out)
        XCTAssertEqual(report["passed"] as? Bool, false)
        let past = try XCTUnwrap(report["pastDeadline"] as? [String: Any])
        XCTAssertEqual(past["runs"] as? Int, 200)
        let requirement = try XCTUnwrap((report["requirements"] as? [[String: Any]])?.first)
        XCTAssertEqual(requirement["runs"] as? Int, 0)
        XCTAssertEqual(requirement["verdict"] as? String, "failed")
    }

    func testARequirementOnAnExpectationACandidateLacksIsRefusedAtLoad() throws {
        let path = try write("""
            scaleset { name = "api", capacity = 4, model = { image = "v1" },
              upgradePolicy = { mode = "Rolling", rollingUpgradePolicy = { maxBatchInstancePercent = 50 } } }
            at("PT1M", function() update_model { image = "v2" } end)
            if param("withExpect", 1) == 1 then expect { code = "Completed" } end
            """, name: "maybe-expect.lua")
        for command in ["tune", "compare"] {
            let out = try runRehearse([command, path, command == "tune" ? "--vary" : "--set", "param.withExpect=1,0", "--require", "expect.code >= 95%",
                                       "--seeds", "0..9"])
            XCTAssertEqual(out.status, 2, "\(command): \(out.stderr)")
            XCTAssertEqual(out.stdout, "", command)
        }
        // With the expectation everywhere, the keys it has are named for a key it has not.
        let other = try runRehearse(["tune", path, "--vary", "param.withExpect=1", "--require", "expect.failed >= 95%", "--seeds", "0..9"])
        XCTAssertEqual(other.status, 2, other.stderr)
    }

    func testCompareWhoseRequirementFailsEveryRunExitsOneLikeTune() throws {
        for command in ["compare", "tune"] {
            let out = try runRehearse([command, "scripts/ten-at-twenty.lua", command == "tune" ? "--vary" : "--set", "rollingUpgradePolicy.maxBatchInstancePercent=20,50",
                                       "--require", "Completed <= 1%", "--seeds", "0..99", "--json"])
            XCTAssertEqual(out.status, 1, "\(command): \(out.stderr)")
        }
    }

    func testAContextNameGivenTwiceInTwoCasesIsRefused() throws {
        let out = try runRehearse(["import", "Tests/Import/arm-copy-per-zone.json", "--context", "location=eastus", "--context", "Location=westeurope"])
        XCTAssertEqual(out.status, 2, out.stderr)
        XCTAssertEqual(out.stdout, "")
    }

    func testANameHoldingALineBreakCannotForgeALineOnStandardError() throws {
        // Two scale sets and no --resource: the problem lists their names, one of them with a line break.
        let set = { (name: String) in
            "{\"type\": \"Microsoft.Compute/virtualMachineScaleSets\", \"name\": \"\(name)\", \"sku\": {\"capacity\": 2}, \"properties\": {\"upgradePolicy\": {\"mode\": \"Manual\"}}}"
        }
        let path = try write("{\"resources\": [\(set("web\\nrehearse: FORGED) name")), \(set("api"))]}", name: "forged.json")
        let out = try runRehearse(["import", path])
        XCTAssertEqual(out.status, 2, out.stderr)
        let lines = out.stderr.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
        XCTAssertEqual(lines.count, 1, out.stderr)
        XCTAssertFalse(lines.contains { $0.hasPrefix("rehearse: FORGED") }, out.stderr)
    }

    func testTuneRefusesACandidateThatKeepsTooLittleCapacity() throws {
        // Ten always-healthy instances in one update domain: batches of 20% keep 8 serving (80%)
        // and finish in 640 s, batches of 50% keep 5 (50%) and finish in 250 s.
        let path = try write("""
            scaleset { name = "web", capacity = 10, updateDomains = 1, model = { image = "v1" },
              upgradePolicy = { mode = "Rolling", rollingUpgradePolicy = { maxBatchInstancePercent = 20,
                maxUnhealthyInstancePercent = 100, pauseTimeBetweenBatches = "PT10S" } },
              healthExtension = { protocol = "http", port = 8000, requestPath = "/health", intervalInSeconds = 5, numberOfProbes = 1, gracePeriod = 60 } }
            health(function(vm, now) return { applicationHealthState = "Healthy" } end)
            at("PT2M", function() update_model { image = "v2" } end)
            """, name: "capacity.lua")
        let out = try runRehearse(["tune", path, "--vary", "rollingUpgradePolicy.maxBatchInstancePercent=20,50",
                                   "--require", "lowestHealthy.80 >= 95%", "--minimize", "p95", "--seeds", "0..999", "--json"])
        XCTAssertEqual(out.status, 0, out.stderr)
        let search = try object(out)
        XCTAssertEqual(search["best"] as? Int, 0)
        let candidates = try XCTUnwrap(search["candidates"] as? [[String: Any]])
        XCTAssertEqual(candidates.compactMap { $0["standing"] as? String }, ["feasible", "infeasible"])
        XCTAssertEqual(candidates.compactMap { ($0["lowestHealthy"] as? [String: Any])?["p5"] as? Double }, [8, 5])
        XCTAssertEqual(candidates.compactMap { ($0["timeToFinishSeconds"] as? [String: Any])?["p95"] as? Double }, [640, 250])
        XCTAssertEqual((search["warnings"] as? [Any])?.count, 0)
        // Without the capacity requirement the faster policy wins, with a warning that it keeps 5 where the scenario keeps 8.
        let fast = try runRehearse(["tune", path, "--vary", "rollingUpgradePolicy.maxBatchInstancePercent=50", "--require", "Faulted <= 1%",
                                    "--seeds", "0..999", "--json"])
        XCTAssertEqual(fast.status, 0, fast.stderr)
        let warnings = try XCTUnwrap(try object(fast)["warnings"] as? [[String: Any]])
        XCTAssertEqual(warnings.count, 1)
        XCTAssertEqual(warnings.first?["bestP5"] as? Double, 5)
        XCTAssertEqual(warnings.first?["currentP5"] as? Double, 8)
        XCTAssertTrue(fast.stderr.hasPrefix("rehearse: warning:"), fast.stderr)
    }
}
