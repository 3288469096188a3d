import Foundation
import XCTest

/// The HTML report opened in a real headless Chromium: its script runs and draws the lanes,
/// markers and panels, asserted on the resulting DOM. `.ci/run` installs Debian's chromium; on a
/// machine without it the test is skipped.
final class ReportBrowserTests: XCTestCase {
    func chromium() throws -> String {
        guard let path = ["/usr/bin/chromium", "/usr/bin/chromium-browser"].first(where: FileManager.default.isExecutableFile) else {
            throw XCTSkip("chromium is not installed (.ci/run installs it)")
        }
        return path
    }

    /// The DOM after the page's script ran.
    func dom(_ report: String, width: Int? = nil) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try chromium())
        process.arguments = ["--headless", "--no-sandbox", "--disable-gpu", "--virtual-time-budget=5000"]
            + (width.map { ["--window-size=\($0),1000"] } ?? []) + ["--dump-dom", "file://" + report]
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self)
    }

    func count(_ fragment: String, in text: String) -> Int { text.components(separatedBy: fragment).count - 1 }

    func report(_ arguments: [String]) throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("rehearse-report-\(UUID().uuidString).html").path
        let out = try runRehearse(["run"] + arguments + ["--report", path])
        XCTAssertTrue([0, 1].contains(out.status), out.stderr)
        return path
    }

    func testThePostBatchRollbackReportDrawsItsLanesMarkersAndPanels() throws {
        _ = try chromium()
        let page = try report(["scripts/post-batch-rollback.lua"])
        let text = try String(contentsOfFile: page, encoding: .utf8)
        XCTAssertFalse(text.contains("http://") && text.contains("<script src"), "no external script")
        XCTAssertFalse(text.contains("<link"), "no external stylesheet or font")
        let dom = try dom(page)
        XCTAssertTrue(dom.contains("data-rendered=\"true\""), "the page's script ran")
        XCTAssertEqual(count("<g class=\"lane", in: dom), 10, "one lane per instance")
        XCTAssertEqual(count("<g class=\"lane failed\"", in: dom), 3, "instances 0, 2 and 4 counted failed")
        XCTAssertEqual(count("class=\"marker batch-marker\"", in: dom), 4, "four batches")
        XCTAssertEqual(count("class=\"check check-failed\"", in: dom), 1, "the post-batch check that faulted")
        XCTAssertEqual(count("<tr class=\"expectation held\"", in: dom), 5)
        XCTAssertEqual(count("<tr class=\"instance", in: dom), 10)
        XCTAssertEqual(count("class=\"lowest\"", in: dom), 1)
        XCTAssertTrue(dom.contains("MaxUnhealthyUpgradedInstancePercentExceededInRollingUpgrade"))
    }

    func testAThousandInstanceReportStaysUsable() throws {
        _ = try chromium()
        let scenario = FileManager.default.temporaryDirectory.appendingPathComponent("rehearse-big-\(UUID().uuidString).lua").path
        try """
            scaleset { name = "big", capacity = 1000, zones = { "1", "2", "3" }, model = { image = "v1" },
                       upgradePolicy = { mode = "Rolling", rollingUpgradePolicy = { maxBatchInstancePercent = 20 } },
                       healthExtension = { protocol = "http", port = 80, requestPath = "/", intervalInSeconds = 5 } }
            at("PT30S", function() update_model { image = "v2" } end)
            expect { code = "Completed", successful = 1000 }
            """.write(toFile: scenario, atomically: true, encoding: .utf8)
        let page = try report([scenario])
        let size = try FileManager.default.attributesOfItem(atPath: page)[.size] as? Int ?? 0
        XCTAssertLessThan(size, 5 << 20, "the page stays small: \(size) bytes")
        let dom = try dom(page)
        XCTAssertTrue(dom.contains("data-rendered=\"true\""))
        XCTAssertEqual(count("<g class=\"lane", in: dom), 1000)
        // 1,000 in 3 zones in batches of 200: zones of 334, 333, 333 make two batches each.
        XCTAssertEqual(count("class=\"marker batch-marker\"", in: dom), 6)
        XCTAssertEqual(count("<tr class=\"expectation held\"", in: dom), 2)
    }

    func testASweepAndAComparisonDrawTheirSharesAndHistograms() throws {
        _ = try chromium()
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("rehearse-sweep-page-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let sweep = try runRehearse(["sweep", "scripts/rolling-boot-failures.lua", "--seeds", "0..39", "--report", folder + "/sweep.html"])
        XCTAssertEqual(sweep.status, 0, sweep.stderr)
        let sweepDOM = try dom(folder + "/sweep.html")
        XCTAssertTrue(sweepDOM.contains("data-rendered=\"true\""))
        XCTAssertEqual(count("class=\"histogram\"", in: sweepDOM), 2)
        XCTAssertEqual(count("<tr class=\"combination", in: sweepDOM), 0)
        let compare = try runRehearse(["compare", "scripts/rolling-boot-failures.lua", "--seeds", "0..39", "--report", folder + "/compare.html",
                                       "--set", "rollingUpgradePolicy.maxUnhealthyUpgradedInstancePercent=10,100"])
        XCTAssertEqual(compare.status, 0, compare.stderr)
        let compareDOM = try dom(folder + "/compare.html")
        XCTAssertEqual(count("<tr class=\"combination", in: compareDOM), 2)
        XCTAssertEqual(count("<tr class=\"combination best\"", in: compareDOM), 1)
        XCTAssertEqual(count("class=\"histogram\"", in: compareDOM), 4)
        XCTAssertEqual(count("<section class=\"sweep\"", in: compareDOM), 2)
    }
}
