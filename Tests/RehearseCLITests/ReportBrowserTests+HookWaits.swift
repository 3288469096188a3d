import Foundation
import XCTest

/// Issue 60's pages: a lifecycle hook's wait is drawn on the run page and named in its legend
/// and its own table; a comparison without requirements explains its dots; each percentile table
/// is headed by what its columns hold. The page's embedded data is read without a browser; the
/// drawn page in headless Chromium.
extension ReportBrowserTests {
    /// Ten instances, batches of two, a hook that waits 15 minutes before each batch and then
    /// approves by default: five waits of 900 s, the first from PT1M (the release) to PT16M.
    static let hookScenario = """
        scaleset {
          name = "batchjobs", capacity = 10, model = { image = "2026.01.01" }, updateDomains = 1,
          upgradePolicy = { mode = "Manual", automaticOSUpgradePolicy = { enableAutomaticOSUpgrade = true } },
          healthExtension = { protocol = "http", port = 8000, requestPath = "/health" },
          lifecycleHooksProfile = { lifecycleHooks = {
            { type = "UpgradeAutoOSRollingBatchStarting", waitDuration = "PT15M", defaultAction = "Approve" },
          } },
        }
        at("PT1M", function() release_image { version = "2026.02.01" } end)
        """

    func hookPage() throws -> String {
        let folder = try temporaryFolder("rehearse-hook-page")
        try Self.hookScenario.write(toFile: folder + "/hooks.lua", atomically: true, encoding: .utf8)
        return try report([folder + "/hooks.lua"])
    }

    /// The JSON the page embeds and draws from.
    func embeddedData(_ page: String) throws -> [String: Any] {
        let html = try String(contentsOfFile: page, encoding: .utf8)
        let open = try XCTUnwrap(html.range(of: "<script type=\"application/json\" id=\"data\">"))
        let close = try XCTUnwrap(html[open.upperBound...].range(of: "</script>"))
        return try XCTUnwrap(JSONSerialization.jsonObject(with: Data(html[open.upperBound..<close.lowerBound].utf8)) as? [String: Any])
    }

    func testTheRunPageCarriesEveryHookWaitAndEachTargetsLaneShowsIt() throws {
        let data = try embeddedData(try hookPage())
        let waits = try XCTUnwrap(data["hookWaits"] as? [[String: Any]])
        XCTAssertEqual(waits.count, 5)
        XCTAssertEqual(waits.map { $0["targets"] as? [Int] ?? [] }, [[0, 1], [2, 3], [4, 5], [6, 7], [8, 9]])
        XCTAssertEqual(waits.map { ($0["end"] as? Int ?? 0) - ($0["start"] as? Int ?? 0) }, [900_000, 900_000, 900_000, 900_000, 900_000])
        XCTAssertEqual(waits.first?["start"] as? Int, 60_000)
        XCTAssertEqual(waits.first?["waited"] as? String, "15 min")
        XCTAssertEqual(waits.first?["outcome"] as? String, "2 approved, 0 rejected, 2 by the default action")
        // Instance 0's lane: healthy and waiting from PT1M to PT16M, not the grey of an older model.
        let instances = try XCTUnwrap(data["instances"] as? [[String: Any]])
        let lane = try XCTUnwrap(instances.first { $0["id"] as? Int == 0 }?["segments"] as? [[Any]])
        let waiting = lane.filter { $0[2] as? String == "hook-wait" }
        XCTAssertEqual(waiting.map { [$0[0] as? Int ?? -1, $0[1] as? Int ?? -1] }, [[60_000, 960_000]])
        // Every instance waits once: ten waiting stretches in all.
        let all = instances.flatMap { ($0["segments"] as? [[Any]] ?? []).filter { $0[2] as? String == "hook-wait" } }
        XCTAssertEqual(all.count, 10)
    }

    func testTheDrawnRunPageShowsHookWaitsInTheLanesTheLegendAndATable() throws {
        _ = try chromium()
        let dom = try dom(try hookPage())
        XCTAssertTrue(dom.contains("data-rendered=\"true\""))
        XCTAssertEqual(count("class=\"seg seg-hook-wait\"", in: dom), 10)
        XCTAssertEqual(count("data-mark=\"seg-hook-wait\"", in: dom), 1, "the legend names the mark")
        XCTAssertEqual(count("<tr class=\"hook-wait\"", in: dom), 5)
    }

    /// A scheduling hook targets the scale set itself: one band over every lane for its 20 minutes.
    func testAScaleSetHookEventIsABandOverTheLanesAndInTheLegend() throws {
        _ = try chromium()
        let folder = try temporaryFolder("rehearse-hook-page")
        try Self.hookScenario.replacingOccurrences(of: "UpgradeAutoOSRollingBatchStarting\", waitDuration = \"PT15M\"",
                                                   with: "UpgradeAutoOSScheduling\", waitDuration = \"PT20M\"")
            .write(toFile: folder + "/scheduling.lua", atomically: true, encoding: .utf8)
        let page = try report([folder + "/scheduling.lua"])
        let waits = try XCTUnwrap(try embeddedData(page)["hookWaits"] as? [[String: Any]])
        XCTAssertEqual(waits.map { [$0["start"] as? Int ?? -1, $0["end"] as? Int ?? -1] }, [[60_000, 1_260_000]])
        XCTAssertEqual(waits.first?["targets"] as? [Int], [])
        let dom = try dom(page)
        XCTAssertEqual(count("class=\"hook-band\"", in: dom), 1)
        XCTAssertEqual(count("data-mark=\"hook-band\"", in: dom), 1)
        XCTAssertEqual(count("class=\"seg seg-hook-wait\"", in: dom), 0, "no instance is a target")
    }

    /// The column heads of every `table.percentiles.<tail>` in a drawn page.
    func percentileHeads(_ tail: String, in dom: String) -> [[String]] {
        dom.components(separatedBy: "class=\"percentiles \(tail)\"").dropFirst().map { part in
            part.components(separatedBy: "</tr>")[0].components(separatedBy: "<th>").dropFirst().map { String($0.prefix { $0 != "<" }) }
        }
    }

    func testAComparisonWithoutRequirementsExplainsItsDotsAndHeadsItsColumns() throws {
        _ = try chromium()
        let page = try temporaryFolder("rehearse-pages") + "/compare.html"
        let grid = "rollingUpgradePolicy.maxUnhealthyUpgradedInstancePercent=10,100"
        let status = try runRehearse(["compare", "scripts/rolling-boot-failures.lua", "--seeds", "0..19", "--report", page, "--set", grid]).status
        XCTAssertEqual(status, 0)
        let dom = try dom(page)
        // Both dots are plain (no requirement): the legend says what a plain dot is.
        XCTAssertEqual(count("data-index=\"", in: dom), 2)
        XCTAssertEqual(count("class=\"point feasible", in: dom) + count("class=\"point infeasible", in: dom), 0)
        XCTAssertEqual(count("data-mark=\"point\"", in: dom), 1)
        XCTAssertEqual(count("data-mark=\"point feasible\"", in: dom), 0, "no requirement: no green dot to explain")
        // The lowest healthy's columns are headed p50, p10, p5, p1, min, in each policy's section.
        XCTAssertEqual(percentileHeads("low-tail", in: dom), [["figure", "p50", "p10", "p5", "p1", "min"], ["figure", "p50", "p10", "p5", "p1", "min"]])
        XCTAssertEqual(percentileHeads("high-tail", in: dom).first, ["figure", "p50", "p90", "p95", "p99", "max"])
    }
}
