import Foundation
import XCTest

/// `rehearse sweep`, `compare` and `merge` as a user runs them, on the shipped scenario with
/// seeded slow and failed boots. Reports are read as JSON.
final class SweepCLITests: XCTestCase {
    let scenario = "scripts/rolling-boot-failures.lua"

    func json(_ out: CLIOutput) throws -> [String: Any] {
        XCTAssertEqual(out.status, 0, out.stderr)
        return try XCTUnwrap(JSONSerialization.jsonObject(with: Data(out.stdout.utf8)) as? [String: Any], out.stdout)
    }

    func testTheReportIsTheSameWhateverTheJobsAndFourShardsMergeIntoIt() throws {
        let one = try runRehearse(["sweep", scenario, "--seeds", "0..59", "--jobs", "1", "--json", "--deadline", "PT60M"])
        let two = try runRehearse(["sweep", scenario, "--seeds", "0..59", "--jobs", "2", "--json", "--deadline", "PT60M"])
        XCTAssertEqual(one.stdout, two.stdout)
        let report = try json(one)
        XCTAssertEqual(report["runs"] as? Int, 60)
        let outcomes = try XCTUnwrap(report["outcomes"] as? [[String: Any]])
        XCTAssertEqual(outcomes.compactMap { $0["runs"] as? Int }.reduce(0, +), 60)
        XCTAssertEqual(Set(outcomes.compactMap { $0["code"] as? String }), ["Completed", "Faulted"])
        let held = try XCTUnwrap((report["expectations"] as? [[String: Any]])?.first)
        XCTAssertEqual(held["runs"] as? Int, outcomes.first { $0["code"] as? String == "Completed" }?["runs"] as? Int)
        let ci = try XCTUnwrap(held["ci95"] as? [Double])
        XCTAssertLessThan(ci[0], held["share"] as? Double ?? -1)
        XCTAssertGreaterThan(ci[1], held["share"] as? Double ?? 2)
        XCTAssertNotNil((report["pastDeadline"] as? [String: Any])?["runs"] as? Int)

        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("rehearse-shards-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        var parts: [String] = []
        for i in [3, 1, 4, 2] {
            let out = try runRehearse(["sweep", scenario, "--seeds", "0..59", "--shard", "\(i)/4", "--json", "--deadline", "PT60M"])
            XCTAssertEqual(out.status, 0, out.stderr)
            let path = folder + "/part\(i).json"
            try out.stdout.write(toFile: path, atomically: true, encoding: .utf8)
            parts.append(path)
        }
        let merged = try runRehearse(["merge"] + parts + ["--json"])
        XCTAssertEqual(merged.status, 0, merged.stderr)
        XCTAssertEqual(merged.stdout, one.stdout, "four shards merged equal one sweep, byte for byte")

        // A missing part, or a part of another sweep, is refused naming it.
        let missing = try runRehearse(["merge"] + parts.dropLast() + ["--json"])
        XCTAssertEqual(missing.status, 2)
        XCTAssertTrue(missing.stderr.contains("part 2/4 is missing"), missing.stderr)
        let other = try runRehearse(["sweep", scenario, "--seeds", "0..59", "--shard", "2/4", "--json"])
        try other.stdout.write(toFile: folder + "/other.json", atomically: true, encoding: .utf8)
        let mixed = try runRehearse(["merge"] + parts.dropLast() + [folder + "/other.json"])
        XCTAssertEqual(mixed.status, 2)
        XCTAssertTrue(mixed.stderr.contains("other.json: not a part of the same sweep"), mixed.stderr)
    }

    func testRunsFileHasOneLinePerSeedAndTheTextReportShowsTheShares() throws {
        let runs = FileManager.default.temporaryDirectory.appendingPathComponent("rehearse-runs-\(UUID().uuidString).jsonl").path
        let out = try runRehearse(["sweep", scenario, "--seeds", "10..29", "--runs", runs])
        XCTAssertEqual(out.status, 0, out.stderr)
        XCTAssertEqual(out.stderr, "", "no progress bar when standard error is not a terminal")
        let lines = try String(contentsOfFile: runs, encoding: .utf8).split(separator: "\n")
        XCTAssertEqual(lines.count, 20)
        let first = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(lines[0].utf8)) as? [String: Any])
        XCTAssertEqual(first["seed"] as? String, "10")
        XCTAssertEqual(first["lowestHealthy"] as? Int, 24)
        XCTAssertTrue(out.stdout.contains("Completed"))
    }

    func testCompareRunsEveryCombinationAndChecksThemAllFirst() throws {
        let out = try runRehearse(["compare", scenario, "--seeds", "0..29", "--json",
                                   "--set", "rollingUpgradePolicy.maxUnhealthyUpgradedInstancePercent=10,100",
                                   "--set", "rollingUpgradePolicy.pauseTimeBetweenBatches=PT0S,PT30S"])
        XCTAssertEqual(out.status, 0, out.stderr)
        let reports = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(out.stdout.utf8)) as? [[String: Any]])
        XCTAssertEqual(reports.count, 4)
        XCTAssertEqual(reports.map { ($0["overrides"] as? [String])?.joined(separator: " ") }, [
            "rollingUpgradePolicy.maxUnhealthyUpgradedInstancePercent=10 rollingUpgradePolicy.pauseTimeBetweenBatches=PT0S",
            "rollingUpgradePolicy.maxUnhealthyUpgradedInstancePercent=10 rollingUpgradePolicy.pauseTimeBetweenBatches=PT30S",
            "rollingUpgradePolicy.maxUnhealthyUpgradedInstancePercent=100 rollingUpgradePolicy.pauseTimeBetweenBatches=PT0S",
            "rollingUpgradePolicy.maxUnhealthyUpgradedInstancePercent=100 rollingUpgradePolicy.pauseTimeBetweenBatches=PT30S",
        ])
        // Allowing every upgraded instance to be unhealthy never faults on it.
        for report in reports[2...] {
            // Faulted is listed at 0 (with its interval): the row a team looks for.
            let outcomes = report["outcomes"] as? [[String: Any]] ?? []
            XCTAssertEqual(outcomes.compactMap { $0["code"] as? String }, ["Completed", "Faulted"])
            XCTAssertEqual(outcomes.last?["runs"] as? Int, 0)
        }
        let text = try runRehearse(["compare", scenario, "--seeds", "0..9",
                                    "--set", "rollingUpgradePolicy.maxUnhealthyUpgradedInstancePercent=10,100"])
        XCTAssertEqual(text.status, 0, text.stderr)
        let best = text.stdout.split(separator: "\n").filter { $0.hasPrefix("*") }
        XCTAssertEqual(best.count, 1)
        XCTAssertTrue(best[0].contains("=100"), text.stdout)

        let bad = try runRehearse(["compare", scenario, "--seeds", "0..9",
                                   "--set", "rollingUpgradePolicy.maxBatchInstancePercent=10,150",
                                   "--set", "rollingUpgradePolicy.maxBatchSize=3"])
        XCTAssertEqual(bad.status, 2)
        XCTAssertEqual(bad.stdout, "", "nothing runs before every combination is checked")
        XCTAssertTrue(bad.stderr.contains("maxBatchSize"), bad.stderr)
        XCTAssertTrue(bad.stderr.contains("150"), bad.stderr)
    }
}

/// `run --output json`: the whole outcome as one document.
final class RunOutputTests: XCTestCase {
    func testRunOutputJsonIsTheWholeOutcome() throws {
        let out = try runRehearse(["run", "scripts/post-batch-rollback.lua", "--output", "json"])
        XCTAssertEqual(out.status, 0, out.stderr)
        let doc = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(out.stdout.utf8)) as? [String: Any])
        XCTAssertEqual((doc["status"] as? [String: Any]).flatMap { $0["runningStatus"] as? [String: Any] }?["code"] as? String, "Faulted")
        XCTAssertEqual(doc["failed"] as? [Int], [0, 2, 4])
        XCTAssertEqual(doc["rolledBack"] as? Int, 3)
        XCTAssertEqual(doc["lowestHealthy"] as? Int, 7)
        XCTAssertEqual(doc["upgradeSeconds"] as? Int, 600)
        XCTAssertEqual((doc["expectations"] as? [[String: Any]])?.count, 5)
        XCTAssertEqual((doc["expectations"] as? [[String: Any]])?.allSatisfy { $0["held"] as? Bool == true }, true)
        let both = try runRehearse(["run", "scripts/post-batch-rollback.lua", "--output", "json", "--json"])
        XCTAssertEqual(both.status, 2)
    }

    /// The same `--output json` on every command that prints results, each a JSON document.
    func testEveryCommandTakesOutputJson() throws {
        let commands: [[String]] = [
            ["run", "scripts/ten-at-twenty.lua"], ["plan", "scripts/ten-at-twenty.lua"], ["validate", "scripts/ten-at-twenty.lua"],
            ["validate", "Tests/Import/az-vmss-show-zonal.json"], ["test", "scripts/ten-at-twenty.lua"],
            ["sweep", "scripts/ten-at-twenty.lua", "--seeds", "0..3"],
            ["compare", "scripts/ten-at-twenty.lua", "--seeds", "0..1", "--set", "rollingUpgradePolicy.maxBatchInstancePercent=20,50"],
            ["plugins", "list", "--plugin-path", "plugins"],
        ]
        for command in commands {
            let out = try runRehearse(command + ["--output", "json"])
            XCTAssertEqual(out.status, 0, "\(command): \(out.stderr)")
            XCTAssertNoThrow(try JSONSerialization.jsonObject(with: Data(out.stdout.utf8)), "\(command): \(out.stdout.prefix(200))")
        }
        let test = try runRehearse(["test", "scripts/ten-at-twenty.lua", "--output", "json"])
        let doc = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(test.stdout.utf8)) as? [String: Any])
        XCTAssertEqual(doc["passed"] as? Int, 1)
        XCTAssertEqual(((doc["scenarios"] as? [[String: Any]])?.first?["expectations"] as? [[String: Any]])?.count, 5)
    }
}

/// `--output table`: one row per thing where a command has rows, read back as columns; refused
/// with exit 2 where it has none.
final class TableOutputTests: XCTestCase {
    /// The rows of a table as cells by column title (columns are separated by the dashes line).
    func rows(_ text: String) throws -> [[String: String]] {
        let lines = text.split(separator: "\n").map(String.init)
        guard lines.count >= 2 else { return [] }
        // Column spans from the dashes line: each run of dashes is one column.
        var spans: [Range<Int>] = []
        var start: Int?
        for (i, c) in lines[1].enumerated() {
            if c == "-", start == nil { start = i }
            if c == " ", let s = start { spans.append(s..<i); start = nil }
        }
        if let s = start { spans.append(s..<lines[1].count) }
        func cells(_ line: String) -> [String] {
            let chars = Array(line)
            return spans.enumerated().map { i, span in
                let end = i == spans.count - 1 ? chars.count : min(span.upperBound, chars.count)
                let from = min(span.lowerBound, chars.count)
                return String(chars[from..<max(from, end)]).trimmingCharacters(in: .whitespaces)
            }
        }
        let titles = cells(lines[0])
        return lines.dropFirst(2).map { Dictionary(uniqueKeysWithValues: zip(titles, cells($0))) }
    }

    func testRunPlanSweepAndTestPrintTheirRows() throws {
        let run = try runRehearse(["run", "scripts/post-batch-rollback.lua", "--output", "table"])
        XCTAssertEqual(run.status, 0, run.stderr)
        let fleet = try rows(run.stdout)
        XCTAssertEqual(fleet.count, 10)
        XCTAssertEqual(fleet.filter { $0["Note"] == "failed" }.compactMap { $0["Id"] }, ["0", "2", "4"])
        XCTAssertEqual(Set(fleet.compactMap { $0["Model"] }), ["v1", "v2"])

        let plan = try rows(try runRehearse(["plan", "scripts/ten-at-twenty.lua", "--output", "table"]).stdout)
        XCTAssertEqual(plan.count, 10)
        XCTAssertEqual(Set(plan.compactMap { $0["Batch"] }).count, 5)

        let sweep = try runRehearse(["sweep", "scripts/ten-at-twenty.lua", "--seeds", "0..3", "--output", "table"])
        XCTAssertEqual(sweep.status, 0, sweep.stderr)
        let runs = try rows(sweep.stdout)
        XCTAssertEqual(runs.compactMap { $0["Seed"] }, ["0", "1", "2", "3"])
        XCTAssertEqual(Set(runs.compactMap { $0["Outcome"] }), ["Completed"])

        let test = try runRehearse(["test", "scripts", "--output", "table"])
        XCTAssertEqual(test.status, 0, test.stderr)
        let scenarios = try rows(test.stdout)
        XCTAssertGreaterThan(scenarios.count, 10)
        XCTAssertEqual(Set(scenarios.compactMap { $0["Result"] }), ["passed"])
    }

    func testCommandsWithoutRowsRefuseTheTableForm() throws {
        for command in [["validate", "scripts/ten-at-twenty.lua"], ["plan", "scripts/ten-at-twenty.lua", "--json"],
                        ["run", "scripts/ten-at-twenty.lua", "--json"]] {
            let out = try runRehearse(command + ["--output", "table"])
            XCTAssertEqual(out.status, 2, "\(command)")
            XCTAssertTrue(out.stdout.isEmpty, "\(command)")
        }
    }
}
