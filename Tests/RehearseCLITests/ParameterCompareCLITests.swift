import Foundation
import XCTest

/// `compare` and `tune` vary a script's parameters as run inputs of one loaded definition: each
/// combination's report is the report of a sweep loaded with those parameter values.
final class ParameterCompareCLITests: XCTestCase {
    /// The JSON document `arguments` print, without its `overrides` (the label of a combination).
    func report(_ arguments: [String]) throws -> [String: Any] {
        let out = try runRehearse(arguments)
        XCTAssertEqual(out.status, 0, out.stderr)
        var document = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(out.stdout.utf8)) as? [String: Any], out.stdout)
        document["overrides"] = nil
        return document
    }

    func testEachCombinationOfParametersReportsWhatASweepLoadedWithThemReports() throws {
        let scenario = "scripts/rolling-boot-failures.lua"
        let out = try runRehearse(["compare", scenario, "--seeds", "0..11", "--jobs", "2", "--json",
                                   "--set", "param.silentBoots=0.02,0.3", "--set", "param.slowestBoot=PT3M,PT6M"])
        XCTAssertEqual(out.status, 0, out.stderr)
        let rows = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(out.stdout.utf8)) as? [[String: Any]], out.stdout)
        XCTAssertEqual(rows.count, 4)
        for (index, (silent, slowest)) in [("0.02", "PT3M"), ("0.02", "PT6M"), ("0.3", "PT3M"), ("0.3", "PT6M")].enumerated() {
            var row = rows[index]
            XCTAssertEqual(row["overrides"] as? [String], ["param.silentBoots=\(silent)", "param.slowestBoot=\(slowest)"])
            row["overrides"] = nil
            let swept = try report(["sweep", scenario, "--seeds", "0..11", "--jobs", "2", "--json",
                                    "--param", "silentBoots=\(silent)", "--param", "slowestBoot=\(slowest)"])
            XCTAssertEqual(NSDictionary(dictionary: row), NSDictionary(dictionary: swept), "silentBoots=\(silent) slowestBoot=\(slowest)")
        }
        // The parameters change what happens: more silent boots fault more upgrades.
        let faulted = rows.map { row in ((row["outcomes"] as? [[String: Any]]) ?? []).first { $0["code"] as? String == "Faulted" }?["runs"] as? Int ?? 0 }
        XCTAssertLessThan(faulted[0], faulted[2])
    }
}
