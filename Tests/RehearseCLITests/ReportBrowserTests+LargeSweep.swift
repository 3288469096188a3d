import Foundation
import Reports
import UpgradeEngine
import XCTest

/// The sweep page of 200,000 seeds, opened in headless Chromium: it used to draw nothing
/// (`Math.min.apply` over every value overflowed the browser's stack). The report is built in
/// Swift, as a sweep would build it, without running 200,000 runs.
extension ReportBrowserTests {
    func testTheHistogramsOfA200000SeedSweepAreDrawn() throws {
        let runs = (0..<200_000).map { seed in
            RunDigest(seed: UInt64(seed), code: seed % 50 == 0 ? .faulted : .completed, errorCode: nil,
                      timeToFinish: 600 + Double(seed % 1000), lowestHealthy: 7 + seed % 3, unavailable: 0, hitTimeLimit: false,
                      held: [HeldKey(.code, seed % 50 != 0)], failed: [], leftBehind: [])
        }
        let report = SweepReport(scenario: "big.lua", seeds: SeedRange(0, 199_999), overrides: [], runs: runs,
                                 expectations: [.init(location: "big.lua:9", key: .code, expected: "Completed")], deadline: nil)
        let page = FileManager.default.temporaryDirectory.appendingPathComponent("rehearse-big-sweep-\(UUID().uuidString).html").path
        defer { try? FileManager.default.removeItem(atPath: page) }
        let html = try SweepReportPage.html([report])
        XCTAssertLessThan(html.utf8.count, 1 << 20, "the page holds bins, not every run's value")
        try html.write(toFile: page, atomically: true, encoding: .utf8)
        _ = try chromium()
        let dom = try dom(page)
        XCTAssertTrue(dom.contains("data-rendered=\"true\""), "the page's script ran to its end")
        XCTAssertEqual(count("class=\"histogram\"", in: dom), 2)
        XCTAssertEqual(count("class=\"hist\"", in: dom), 40, "20 bins per histogram")
        XCTAssertTrue(dom.contains("over 200000 runs"))
        // Every value of lowest healthy is 7, 8 or 9: the first, a middle and the last bin hold them.
        XCTAssertTrue(dom.contains("66667 runs from 7 to 7.1 instances"), "the bins counted in Swift")
    }
}
