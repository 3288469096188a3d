import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif
import XCTest

/// The risk gate as a pipeline runs it: exit codes, JSON verdicts, JUnit testcases, `tune`.
final class RiskGateCLITests: XCTestCase {
    let scenario = "scripts/risk-gate.lua"

    func object(_ out: CLIOutput) throws -> [String: Any] {
        try XCTUnwrap(JSONSerialization.jsonObject(with: Data(out.stdout.utf8)) as? [String: Any], out.stdout + out.stderr)
    }

    func testSweepIsAGateWhenGivenRequirements() throws {
        let held = try runRehearse(["sweep", scenario, "--seeds", "0..9999", "--until-decided", "--require", "Faulted <= 15%", "--json"])
        XCTAssertEqual(held.status, 0, held.stderr)
        let report = try object(held)
        XCTAssertEqual(report["passed"] as? Bool, true)
        let requirements = try XCTUnwrap(report["requirements"] as? [[String: Any]])
        // The script's own risk { } and the option, in that order.
        XCTAssertEqual(requirements.compactMap { $0["requirement"] as? String }, ["Faulted <= 2%", "Faulted <= 15%"])
        XCTAssertEqual(requirements.compactMap { $0["verdict"] as? String }, ["held", "held"])
        let runs = try XCTUnwrap(report["runs"] as? Int)
        XCTAssertLessThan(runs, 10_000)
        XCTAssertEqual(requirements[0]["of"] as? Int, runs)

        let failed = try runRehearse(["sweep", scenario, "--seeds", "0..9999", "--until-decided", "--set",
                                      "rollingUpgradePolicy.maxUnhealthyUpgradedInstancePercent=5", "--output", "json"])
        XCTAssertEqual(failed.status, 1, failed.stderr)
        XCTAssertEqual(try object(failed)["passed"] as? Bool, false)

        // Too few seeds to decide: undecided is not a pass.
        let undecided = try runRehearse(["sweep", scenario, "--seeds", "0..99", "--require", "Faulted <= 1%", "--json"])
        XCTAssertEqual(undecided.status, 1)
        XCTAssertTrue(try XCTUnwrap(try object(undecided)["requirements"] as? [[String: Any]]).contains { $0["verdict"] as? String == "undecided" })
    }

    func testBadRequirementsAreBadInput() throws {
        for arguments in [["--require", "Faulted < 1%"], ["--require", "Faulted <= 1"], ["--require", "Faulted <= nan%"],
                          ["--require", "deadline >= 95%"], ["--confidence", "1"], ["--confidence", "inf"]] {
            let out = try runRehearse(["sweep", scenario, "--seeds", "0..9"] + arguments)
            XCTAssertEqual(out.status, 2, "\(arguments): \(out.stderr)")
            XCTAssertTrue(out.stderr.contains(arguments[0]), out.stderr)
        }
        let noRequirement = try runRehearse(["sweep", "scripts/ten-at-twenty.lua", "--seeds", "0..9", "--until-decided"])
        XCTAssertEqual(noRequirement.status, 2)
        // A share of expectations the script does not have is not a pass by default.
        let noExpect = try runRehearse(["sweep", "scripts/ten-at-twenty.lua", "--seeds", "0..9", "--require", "expect.minHealthy >= 50%"])
        XCTAssertEqual(noExpect.status, 2, noExpect.stderr)
        // The same field twice, or a value twice, would run the same policy twice.
        for vary in [["--vary", "rollingUpgradePolicy.maxBatchInstancePercent=20", "--vary", "rollingUpgradePolicy.maxBatchInstancePercent=50"],
                     ["--vary", "rollingUpgradePolicy.maxBatchInstancePercent=10,10"], ["--minimize", "p0.5"], ["--minimize", "p0x10"]] {
            let refused = try runRehearse(["tune", scenario, "--require", "Faulted <= 1%", "--seeds", "0..9"]
                                          + (vary[0] == "--vary" ? vary : ["--vary", "rollingUpgradePolicy.maxBatchInstancePercent=10,20"] + vary))
            XCTAssertEqual(refused.status, 2, "\(vary): \(refused.stderr)")
        }
    }

    func testTestGivesEachRequirementItsOwnJUnitTestcase() throws {
        let junit = FileManager.default.temporaryDirectory.appendingPathComponent("rehearse-risk-\(UUID().uuidString).xml").path
        defer { try? FileManager.default.removeItem(atPath: junit) }
        let out = try runRehearse(["test", scenario, "--require", "Faulted <= 5%", "--junit", junit])
        // The script's 2% holds; 5% holds too (0.26% at the script's 20%).
        XCTAssertEqual(out.status, 0, out.stdout + out.stderr)
        let document = try XMLDocument(contentsOf: URL(fileURLWithPath: junit))
        let cases = try document.nodes(forXPath: "//testcase/@name").compactMap { $0.stringValue }
        XCTAssertEqual(cases.filter { $0.hasPrefix("require ") }, ["require Faulted <= 2%", "require Faulted <= 5%"])
        XCTAssertEqual(try document.nodes(forXPath: "//failure").count, 0)

        // One upgrade in five fails: P(Faulted) = P(Bin(20, 0.2) >= 5) = 37%, and the script's
        // "Faulted <= 2%" fails within the first hundred runs.
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("rehearse-risk-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let text = try String(contentsOfFile: repositoryRoot + "/" + scenario, encoding: .utf8)
            .replacingOccurrences(of: "param(\"failureRate\", 0.05)", with: "param(\"failureRate\", 0.2)")
        try text.write(toFile: folder + "/risky.lua", atomically: true, encoding: .utf8)
        let failing = try runRehearse(["test", folder, "--junit", junit])
        XCTAssertEqual(failing.status, 1)
        let failures = try XMLDocument(contentsOf: URL(fileURLWithPath: junit)).nodes(forXPath: "//failure[@type='requirement']/@message")
        let messages = failures.compactMap { $0.stringValue }
        XCTAssertEqual(messages.count, 1)
        XCTAssertTrue(messages[0].hasPrefix("Faulted <= 2%: failed, "), "\(messages)")
    }

    func testTuneFindsAFeasibleThresholdWithFewerRunsThanTheGrid() throws {
        let out = try runRehearse(["tune", scenario, "--vary", "rollingUpgradePolicy.maxUnhealthyUpgradedInstancePercent=5,10,15,20,30",
                                   "--require", "Faulted <= 1%", "--minimize", "p95", "--seeds", "0..19999", "--json"])
        XCTAssertEqual(out.status, 0, out.stderr)
        let result = try object(out)
        let candidates = try XCTUnwrap(result["candidates"] as? [[String: Any]])
        XCTAssertEqual(candidates.compactMap { $0["standing"] as? String }, ["infeasible", "infeasible", "infeasible", "feasible", "feasible"])
        XCTAssertTrue([3, 4].contains(try XCTUnwrap(result["best"] as? Int)))
        XCTAssertLessThan(try XCTUnwrap(result["runsSpent"] as? Int), try XCTUnwrap(result["gridRuns"] as? Int))
        for bad in [["--vary", "x"], ["--vary", "rollingUpgradePolicy.maxBatchInstancePercent=1..100000"], ["--minimize", "p100"],
                    ["--maximize", "speed"]] {
            let refused = try runRehearse(["tune", scenario, "--require", "Faulted <= 1%", "--vary", "rollingUpgradePolicy.maxBatchInstancePercent=10,20"] + bad)
            XCTAssertEqual(refused.status, 2, "\(bad): \(refused.stderr)")
        }
    }

    func testTuneNamesNoBestWhenNoRunHadAnythingToMeasure() throws {
        // No model update: every run is feasible (nothing faults) and has no time to finish.
        let folder = try temporaryFolder("rehearse-tune")
        try """
            scaleset { name = "idle", capacity = 4, model = { image = "v1" },
              upgradePolicy = { mode = "Rolling" }, healthExtension = { protocol = "http", port = 80, requestPath = "/" } }
            """.write(toFile: folder + "/idle.lua", atomically: true, encoding: .utf8)
        let out = try runRehearse(["tune", folder + "/idle.lua", "--vary", "rollingUpgradePolicy.maxBatchInstancePercent=20,50",
                                   "--require", "Faulted <= 50%", "--seeds", "0..299", "--json"])
        XCTAssertEqual(out.status, 1, out.stderr)
        let result = try object(out)
        XCTAssertTrue(result["best"] is NSNull)
        XCTAssertEqual((result["candidates"] as? [[String: Any]])?.compactMap { $0["standing"] as? String }, ["feasible", "feasible"])
    }

    func testCompareSaysWhichRowsRanIdenticallyAndJudgesEach() throws {
        let out = try runRehearse(["compare", "scripts/rolling-boot-failures.lua", "--set", "rollingUpgradePolicy.maxBatchInstancePercent=20,33",
                                   "--set", "rollingUpgradePolicy.maxUnhealthyInstancePercent=20", "--seeds", "0..19", "--require", "Faulted <= 50%",
                                   "--output", "json"])
        XCTAssertNotEqual(out.status, 2, out.stderr)
        let rows = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(out.stdout.utf8)) as? [[String: Any]])
        XCTAssertEqual(rows.count, 2)
        XCTAssertTrue(rows.allSatisfy { ($0["requirements"] as? [[String: Any]])?.count == 1 })
    }
}
