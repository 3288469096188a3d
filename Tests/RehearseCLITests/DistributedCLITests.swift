import Foundation
import XCTest

/// The adaptive questions split over processes as a cluster runs them: parts that carry their
/// question, `merge` of adjacent blocks, the distributed sequential gate, `compare --shard`,
/// `tune --shard` and `tune --ask / --tell / --result`, each the same bytes as one process.
final class DistributedCLITests: XCTestCase {
    let scenario = "scripts/risk-gate.lua"
    var folder = ""

    override func setUpWithError() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("rehearse-distributed-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws { try? FileManager.default.removeItem(atPath: folder) }

    /// Runs rehearse, expecting `status`, and writes its standard output to `name` in the folder.
    @discardableResult
    func saved(_ name: String, _ arguments: [String], status: Int32 = 0) throws -> String {
        let out = try runRehearse(arguments)
        XCTAssertEqual(out.status, status, "\(arguments): \(out.stderr)")
        let path = folder + "/" + name
        try out.stdout.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    func object(_ text: String) throws -> [String: Any] {
        try XCTUnwrap(JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any], text)
    }

    func testAdjacentBlocksWithTheirQuestionMergeIntoTheOneProcessGate() throws {
        let asked = ["--require", "Faulted <= 10%", "--confidence", "0.9", "--deadline", "PT60M"]
        let one = try runRehearse(["sweep", scenario, "--seeds", "0..199", "--json"] + asked)
        XCTAssertLessThanOrEqual(one.status, 1, one.stderr)
        let parts = [try saved("a1.json", ["sweep", scenario, "--seeds", "0..99", "--shard", "1/2", "--json"] + asked),
                     try saved("b1.json", ["sweep", scenario, "--seeds", "100..199", "--shard", "1/1", "--json"] + asked),
                     try saved("a2.json", ["sweep", scenario, "--seeds", "0..99", "--shard", "2/2", "--json"] + asked)]
        let part = try object(try String(contentsOfFile: parts[0], encoding: .utf8))
        XCTAssertEqual(part["requirements"] as? [String], ["Faulted <= 2%", "Faulted <= 10%"])
        XCTAssertEqual(part["confidence"] as? Double, 0.9)
        XCTAssertEqual(part["deadline"] as? String, "PT1H")
        let merged = try runRehearse(["merge", "--json"] + parts)
        XCTAssertEqual(merged.status, one.status, merged.stderr)
        XCTAssertEqual(merged.stdout, one.stdout, "two blocks, one in two shards, merged equal one sweep of 0..199 byte for byte")
        XCTAssertEqual(try XCTUnwrap(try object(merged.stdout)["runs"] as? Int), 200)

        // merge --require judges parts written without a question, as sweep --require would.
        let plain = [try saved("p1.json", ["sweep", scenario, "--seeds", "0..99", "--shard", "1/1", "--json"]),
                     try saved("p2.json", ["sweep", scenario, "--seeds", "100..199", "--shard", "1/1", "--json"])]
        let gate = try runRehearse(["sweep", scenario, "--seeds", "0..199", "--require", "Faulted <= 30%", "--json"])
        let judged = try runRehearse(["merge", "--require", "Faulted <= 30%", "--json"] + plain)
        XCTAssertEqual(judged.status, gate.status)
        XCTAssertEqual(judged.stdout, gate.stdout)

        // A gap between blocks, or overlapping blocks, is refused naming the file.
        let late = try saved("late.json", ["sweep", scenario, "--seeds", "150..249", "--shard", "1/1", "--json"])
        let gap = try runRehearse(["merge", plain[0], late])
        XCTAssertEqual(gap.status, 2)
        XCTAssertTrue(gap.stderr.contains("late.json") && gap.stderr.contains("do not follow 0..99"), gap.stderr)
        let overlap = try runRehearse(["merge", plain[0], plain[1], late])
        XCTAssertEqual(overlap.status, 2)
    }

    func testTheDistributedGateStopsWhereOneProcessStops() throws {
        // Maximum unhealthy upgraded 10%: P(Faulted) = P(Bin(20, 0.05) >= 3) = 7.5%, against 5%.
        let asked = ["--set", "rollingUpgradePolicy.maxUnhealthyUpgradedInstancePercent=10", "--require", "Faulted <= 5%"]
        let one = try runRehearse(["sweep", scenario, "--seeds", "0..1999", "--until-decided", "--json"] + asked)
        let runs = try XCTUnwrap(try object(one.stdout)["runs"] as? Int)
        XCTAssertLessThan(runs, 2000, "the gate decided before the budget")
        var parts: [String] = []
        // Blocks of 300 seeds, each in 2 shards, until the budget: more runs than one process made.
        for block in 0..<((runs + 299) / 300 + 1) {
            let seeds = "\(block * 300)..\(block * 300 + 299)"
            for shard in 1...2 {
                parts.append(try saved("g\(block)-\(shard).json", ["sweep", scenario, "--seeds", seeds, "--shard", "\(shard)/2", "--until-decided", "--json"] + asked))
            }
        }
        let merged = try runRehearse(["merge", "--json"] + parts.reversed())
        XCTAssertEqual(merged.status, one.status, merged.stderr)
        XCTAssertEqual(merged.stdout, one.stdout, "the same verdict after the same runs")
        XCTAssertEqual(runs % 100, 0, "one process stops at a look, a multiple of 100 seeds")
    }

    func testCompareShardsMergeIntoTheComparison() throws {
        let asked = ["--set", "rollingUpgradePolicy.maxUnhealthyUpgradedInstancePercent=5,20", "--set", "param.failureRate=0.05,0.1",
                     "--seeds", "0..59", "--require", "Faulted <= 50%"]
        let one = try runRehearse(["compare", scenario, "--json"] + asked)
        let parts = try (1...3).map { try saved("c\($0).json", ["compare", scenario, "--shard", "\($0)/3"] + asked) }
        let list = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: parts[0]))) as? [[String: Any]])
        XCTAssertEqual(list.count, 4, "one part per combination")
        let merged = try runRehearse(["merge", "--json"] + parts)
        XCTAssertEqual(merged.status, one.status, merged.stderr)
        XCTAssertEqual(merged.stdout, one.stdout)
    }

    func testTuneAskTellEqualsOneProcessTune() throws {
        let search = ["tune", scenario, "--vary", "rollingUpgradePolicy.maxUnhealthyUpgradedInstancePercent=5,15,20", "--seeds", "0..299"]
        let one = try runRehearse(search)
        let oneJSON = try runRehearse(search + ["--json"])
        let state = folder + "/state.json"
        var rounds = 0, told = 0
        while true {
            let asked = try runRehearse(search + ["--state", state, "--ask", "--parts", "2"])
            XCTAssertEqual(asked.status, 0, asked.stderr)
            let work = try object(asked.stdout)
            if work["done"] as? Bool == true { break }
            let items = try XCTUnwrap(work["work"] as? [[String: Any]])
            XCTAssertFalse(items.isEmpty)
            var parts: [String] = []
            for item in items {
                let sets = try XCTUnwrap(item["overrides"] as? [String]).flatMap { ["--set", $0] }
                parts.append(try saved("t\(told).json", ["compare", scenario, "--seeds", try XCTUnwrap(item["seeds"] as? String),
                                                         "--shard", try XCTUnwrap(item["shard"] as? String)] + sets))
                told += 1
            }
            let tell = try runRehearse(search + ["--state", state, "--tell"] + parts)
            XCTAssertEqual(tell.status, 0, tell.stderr)
            rounds += 1
            XCTAssertLessThan(rounds, 5, "the race has at most 3 rounds of 100 seeds and a confirmation")
        }
        let result = try runRehearse(search + ["--state", state, "--result"])
        XCTAssertEqual(result.status, one.status, result.stderr)
        XCTAssertEqual(result.stdout, one.stdout, "ask/tell prints the one-process tune byte for byte")
        let resultJSON = try runRehearse(search + ["--state", state, "--result", "--json"])
        XCTAssertEqual(resultJSON.stdout, oneJSON.stdout)
        let spent = try XCTUnwrap(try object(oneJSON.stdout)["runsSpent"] as? Int)
        XCTAssertGreaterThanOrEqual(spent, 3 * 100, "every candidate ran at least one round")

        // tune --shard: every candidate on all its seeds, told at once; the race reads what it needs.
        let shards = try (1...2).map { try saved("s\($0).json", search + ["--shard", "\($0)/2"]) }
        let fresh = folder + "/fresh.json"
        let early = try runRehearse(search + ["--state", fresh, "--result"])
        XCTAssertEqual(early.status, 2, "no run told yet")
        XCTAssertEqual(try runRehearse(search + ["--state", fresh, "--tell"] + shards).status, 0)
        XCTAssertEqual(try runRehearse(search + ["--state", fresh, "--result"]).stdout, one.stdout)

        // A part of another search is refused naming its file.
        let other = try saved("other.json", ["compare", scenario, "--seeds", "0..99", "--shard", "1/1", "--set", "rollingUpgradePolicy.maxBatchInstancePercent=33"])
        let refused = try runRehearse(search + ["--state", fresh, "--tell", other])
        XCTAssertEqual(refused.status, 2)
        XCTAssertTrue(refused.stderr.contains("other.json"), refused.stderr)
    }
}
