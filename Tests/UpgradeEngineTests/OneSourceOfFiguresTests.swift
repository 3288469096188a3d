import Formats
@testable import Reports
import UpgradeEngine
import XCTest

/// A page, the text and the JSON of the same sweep, comparison and search show the same figures:
/// the page's data carries the strings and intervals the text prints and the JSON gives, zero-count
/// rows included. 0 faulted of 500 is 0.0%–0.8%: Wilson's upper end for no successes is
/// z²/(n + z²) = 3.841459/503.841459 = 0.007624.
final class OneSourceOfFiguresTests: XCTestCase {
    static let zeroOf500Upper = 0.007624

    func digests(_ count: Int, faulted: Int, time: Double = 4200) -> [RunDigest] {
        (0..<count).map { seed in
            RunDigest(seed: UInt64(seed), code: seed < faulted ? .faulted : .completed, errorCode: nil, timeToFinish: time, lowestHealthy: 27,
                      unavailable: 300, hitTimeLimit: false, held: [], failed: [], leftBehind: [])
        }
    }

    func report(faulted: Int, overrides: [String] = []) -> SweepReport {
        SweepReport(scenario: "rollout.lua", seeds: SeedRange(0, 499), overrides: overrides, runs: digests(500, faulted: faulted),
                    expectations: [], deadline: nil)
    }

    /// The row of the text table whose first column is `name`, split on runs of two or more spaces.
    func row(_ lines: [String], _ name: String) -> [String]? {
        lines.map { line in
            line.components(separatedBy: "  ").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        }.first { $0.first == name }
    }

    func doubles(_ json: JSON?) -> [Double] {
        guard case .array(let items)? = json else { return [] }
        return items.compactMap { if case .double(let d) = $0 { return d } else if case .int(let i) = $0 { return Double(i) } else { return nil } }
    }

    func string(_ json: JSON?) -> String? { if case .string(let s)? = json { return s } else { return nil } }

    func array(_ json: JSON?) -> [JSON] { if case .array(let items)? = json { return items } else { return [] } }

    func testASweepWithNoFaultListsFaultedAtZeroWithTheSameIntervalEverywhere() throws {
        let r = report(faulted: 0)
        // Text: the outcome table has a Faulted row at 0.
        let text = try XCTUnwrap(row(SweepText.report(r), "Faulted"))
        XCTAssertEqual(text, ["Faulted", "0", "0.0%", "0.0%–0.8%"])
        // JSON: the same row, with the interval's ends.
        let json = try XCTUnwrap(array(SweepJSON.report(r).member("outcomes")).first { string($0.member("code")) == "Faulted" })
        XCTAssertEqual(json.member("runs"), .int(0))
        XCTAssertEqual(doubles(json.member("ci95")), [0, Self.zeroOf500Upper])
        // Page: the share row it draws, and the faulted figure of the entry.
        let entry = try XCTUnwrap(array(SweepReportPage.data([SweepReportPage.Entry(report: r)], best: nil, title: nil).member("entries")).first)
        let shown = try XCTUnwrap(array(entry.member("shares")).first { string($0.member("name")) == "Faulted" })
        XCTAssertEqual(string(shown.member("interval")), text[3])
        XCTAssertEqual(string(shown.member("percent")), text[2])
        XCTAssertEqual(doubles(shown.member("ci95")), doubles(json.member("ci95")))
        XCTAssertEqual(string(entry.member("figures")?.member("faulted")?.member("interval")), "0.0%–0.8%")
        // 4200 s is 1 h 10 min, beside the seconds on the page and in the text.
        XCTAssertEqual(string(entry.member("figures")?.member("finishP95")?.member("human")), "1 h 10 min")
        XCTAssertEqual(row(SweepText.report(r), "Time to finish")?.dropFirst().first?.hasPrefix("1 h 10 min "), true)
    }

    func testACompareTableAndItsPageAgreeOnEveryRowIncludingZero() throws {
        let rows = [report(faulted: 0, overrides: ["maxBatchInstancePercent=10"]), report(faulted: 10, overrides: ["maxBatchInstancePercent=20"])]
            .map { CompareText.Row(report: $0, requirements: [], batchSize: nil, unhealthyBudget: nil) }
        let text = CompareText.table(rows)
        let page = SweepReportPage.data(rows.map { SweepReportPage.Entry(report: $0.report) }, best: CompareText.best(rows), title: "compare")
        let entries = array(page.member("entries"))
        XCTAssertEqual(entries.count, 2)
        for (i, entry) in entries.enumerated() {
            let figures = try XCTUnwrap(entry.member("figures")?.member("faulted"))
            let line = try XCTUnwrap(text.first { $0.contains(rows[i].report.overrides[0]) }).split(separator: " ").map(String.init)
            XCTAssertTrue(line.contains(try XCTUnwrap(string(figures.member("interval")))), "\(line) \(figures)")
            XCTAssertTrue(line.contains(try XCTUnwrap(string(figures.member("percent")))))
            let json = try XCTUnwrap(array(SweepJSON.report(rows[i].report).member("outcomes")).first { string($0.member("code")) == "Faulted" })
            XCTAssertEqual(doubles(figures.member("ci95")), doubles(json.member("ci95")))
        }
        XCTAssertEqual(string(entries[0].member("figures")?.member("faulted")?.member("interval")), "0.0%–0.8%")
        XCTAssertEqual(doubles(entries[0].member("figures")?.member("faulted")?.member("ci95")), [0, Self.zeroOf500Upper])
    }

    func testATuneTextJSONAndPageAgreeAndNameTheRequirementThatDecided() throws {
        let question = RiskQuestion(requirements: [try Requirement.parse("Faulted <= 2%").get()])
        let labels = [["maxBatchInstancePercent=10"], ["maxBatchInstancePercent=50"]]
        // The first candidate never faults; the second faults in every other run.
        let outcome = Tune.run(labels: labels, keys: [[], []], seeds: SeedRange(0, 499), question: question,
                               objective: .finishPercentile(95)) { (i: Int, seeds: [UInt64], _: Int) -> [RunDigest] in
            seeds.map { seed in
                RunDigest(seed: seed, code: i == 1 && seed % 2 == 0 ? .faulted : .completed, errorCode: nil, timeToFinish: 4200, lowestHealthy: 27,
                          unavailable: 300, hitTimeLimit: false, held: [], failed: [], leftBehind: [])
            }
        }
        XCTAssertEqual(outcome.candidates.map(\.standing), [.feasible, .infeasible])
        let text = RiskText.tune(outcome, objective: .finishPercentile(95))
        let json = RiskText.tuneJSON(outcome, objective: .finishPercentile(95), confidence: 0.95)
        let entries = outcome.candidates.map { c in
            SweepReportPage.Entry(report: SweepReport(scenario: "rollout.lua", seeds: SeedRange(0, UInt64(c.runs.count - 1)), overrides: c.label,
                                                      runs: c.runs, expectations: c.keys, deadline: nil),
                                  requirements: c.requirements, standing: c.standing.rawValue, decidedBy: RiskText.decidedBy(c))
        }
        let page = array(SweepReportPage.data(entries, best: outcome.best, title: "tune").member("entries"))
        let candidates = array(json.member("candidates"))
        for i in 0..<2 {
            let figures = try XCTUnwrap(page[i].member("figures")?.member("faulted"))
            XCTAssertEqual(doubles(figures.member("ci95")), doubles(candidates[i].member("faulted")?.member("ci95")))
            let line = try XCTUnwrap(text.first { $0.contains(labels[i][0]) })
            XCTAssertTrue(line.contains("\(string(figures.member("percent"))!) (\(string(figures.member("interval"))!))"), line)
        }
        // The infeasible candidate names the requirement that failed: in the JSON, on the page and in the text.
        XCTAssertEqual(array(candidates[1].member("decidedBy")), [.string("Faulted <= 2%")])
        XCTAssertEqual(array(candidates[0].member("decidedBy")), [])
        let decided = try XCTUnwrap(string(array(page[1].member("decidedBy")).first))
        XCTAssertTrue(decided.hasPrefix("Faulted <= 2% failed"), decided)
        XCTAssertTrue(try XCTUnwrap(text.first { $0.contains(labels[1][0]) }).contains(decided))
    }
}
