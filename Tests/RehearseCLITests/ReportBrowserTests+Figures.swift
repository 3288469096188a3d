import Foundation
import XCTest

/// The pages' figures and marks as Chromium draws them, read from the drawn DOM: the compare
/// page's interval for 0 faulted of 500 is the text's, every mark on the run page has a legend
/// entry, and no label's box leaves its chart, at 1280 and 1920 px wide.
extension ReportBrowserTests {
    /// The page with a probe appended that measures every SVG text's box against its chart's and
    /// writes the ones that stick out (as JSON) into `<pre id="label-probe">`; the DOM after it ran.
    func measuredDOM(_ page: String, width: Int) throws -> String {
        let probe = """
            <script>
            (function () {
              var out = [];
              document.querySelectorAll("svg").forEach(function (svg) {
                var frame = svg.getBoundingClientRect();
                svg.querySelectorAll("text").forEach(function (t) {
                  if (t.closest("title") || !t.textContent) return;
                  var b = t.getBoundingClientRect();
                  if (b.left < frame.left - 0.5 || b.right > frame.right + 0.5 || b.top < frame.top - 0.5 || b.bottom > frame.bottom + 0.5)
                    out.push({ text: t.textContent, chart: svg.id || svg.getAttribute("class") || "",
                               box: [Math.round(b.left - frame.left), Math.round(b.right - frame.left)], width: Math.round(frame.width) });
                });
              });
              var pre = document.createElement("pre"); pre.id = "label-probe"; pre.textContent = JSON.stringify(out); document.body.appendChild(pre);
            })();
            </script>
            """
        let html = try String(contentsOfFile: page, encoding: .utf8).replacingOccurrences(of: "</body>", with: probe + "</body>")
        let probed = page.replacingOccurrences(of: ".html", with: "-probe-\(width).html")
        try html.write(toFile: probed, atomically: true, encoding: .utf8)
        return try dom(probed, width: width)
    }

    /// The labels the probe found outside their chart.
    func labelsOutside(_ dom: String) throws -> [[String: Any]] {
        let start = try XCTUnwrap(dom.range(of: "<pre id=\"label-probe\">"))
        let json = dom[start.upperBound...].prefix { $0 != "<" }.replacingOccurrences(of: "&quot;", with: "\"").replacingOccurrences(of: "&amp;", with: "&")
        return try XCTUnwrap(JSONSerialization.jsonObject(with: Data(json.utf8)) as? [[String: Any]])
    }

    /// The classes of every element inside the SVG with `id`.
    func classes(inside id: String, of dom: String) -> Set<String> {
        guard let start = dom.range(of: "id=\"\(id)\"") else { return [] }
        let part = dom[start.upperBound...].components(separatedBy: "</svg>")[0]
        return Set(part.components(separatedBy: "class=\"").dropFirst().flatMap { $0.prefix { $0 != "\"" }.split(separator: " ").map(String.init) })
    }

    func testTheComparePagesIntervalForNoFaultIsTheTextsAndNoLabelLeavesItsChart() throws {
        _ = try chromium()
        let folder = try temporaryFolder("rehearse-figures")
        let scenario = folder + "/rollout.lua"
        try """
            scaleset { name = "web", capacity = 30, zones = { "1", "2", "3" }, model = { image = "v1" },
              upgradePolicy = { mode = "Rolling", rollingUpgradePolicy = { maxBatchInstancePercent = 20 } },
              healthExtension = { protocol = "http", port = 80, requestPath = "/", intervalInSeconds = 5 } }
            at("PT1M", function() update_model { image = "v2" } end)
            """.write(toFile: scenario, atomically: true, encoding: .utf8)
        let arguments = ["compare", scenario, "--seeds", "0..499", "--set", "rollingUpgradePolicy.maxBatchInstancePercent=10,20"]
        let text = try runRehearse(arguments)
        XCTAssertEqual(text.status, 0, text.stderr)
        let json = try runRehearse(arguments + ["--json", "--report", folder + "/compare.html"])
        XCTAssertEqual(json.status, 0, json.stderr)
        let rows = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [[String: Any]])
        for row in rows {
            let faulted = try XCTUnwrap((row["outcomes"] as? [[String: Any]])?.first { $0["code"] as? String == "Faulted" })
            XCTAssertEqual(faulted["runs"] as? Int, 0)
            XCTAssertEqual((faulted["ci95"] as? [Double])?.last, 0.007624)
        }
        for width in [1280, 1920] {
            let dom = try measuredDOM(folder + "/compare.html", width: width)
            XCTAssertTrue(dom.contains("data-rendered=\"true\""))
            let intervals = dom.components(separatedBy: "class=\"num nowrap interval\">").dropFirst().map { String($0.prefix { $0 != "<" }) }
            XCTAssertEqual(intervals, ["0.0%–0.8%", "0.0%–0.8%"])
            // The text's rows say the same.
            let textRows = text.stdout.split(separator: "\n").filter { $0.contains("maxBatchInstancePercent=") }
            XCTAssertEqual(textRows.count, 2)
            for (line, interval) in zip(textRows, intervals) {
                XCTAssertTrue(line.split(separator: " ").contains(Substring(interval)), "\(line)")
            }
            XCTAssertEqual(count("class=\"ci-bar\"", in: dom), 2, "the interval drawn in each row")
            let outside = try labelsOutside(dom)
            XCTAssertEqual(outside.count, 0, "\(outside)")
        }
    }

    func testEveryMarkOnTheRunPageHasALegendEntryAndNoLabelLeavesItsChart() throws {
        _ = try chromium()
        for scenario in ["scripts/post-batch-rollback.lua", "scripts/automatic-os-upgrade-slow-boots.lua"] {
            let page = try report([scenario])
            for width in [1280, 1920] {
                let dom = try measuredDOM(page, width: width)
                XCTAssertTrue(dom.contains("data-rendered=\"true\""))
                let structural: Set<String> = ["lane", "failed", "lane-label", "group-label", "axis", "tick-label", "axis-title", "batch-label",
                                               "lowest-label", "axis-label", "seg", "marker", "check"]
                let marks = classes(inside: "lanes", of: dom).union(classes(inside: "capacity-curve", of: dom)).subtracting(structural)
                XCTAssertTrue(marks.isSuperset(of: ["batch-marker", "serving", "threshold", "lowest", "upgrade-window"]), "\(marks.sorted())")
                for mark in marks.sorted() {
                    XCTAssertTrue(dom.contains("data-mark=\"\(mark)\""), "\(scenario): the mark \(mark) has no legend entry")
                }
                let outside = try labelsOutside(dom)
                XCTAssertEqual(outside.count, 0, "\(scenario) at \(width): \(outside)")
            }
        }
    }

    func testTheSweepAndTunePagesKeepEveryLabelInsideItsChart() throws {
        _ = try chromium()
        let folder = try temporaryFolder("rehearse-figures")
        XCTAssertNotEqual(try runRehearse(["sweep", "scripts/risk-gate.lua", "--seeds", "0..199", "--deadline", "PT18M",
                                           "--report", folder + "/sweep.html"]).status, 2)
        XCTAssertNotEqual(try runRehearse(["tune", "scripts/risk-gate.lua", "--seeds", "0..399",
                                           "--vary", "rollingUpgradePolicy.maxUnhealthyUpgradedInstancePercent=5,10,30",
                                           "--require", "Faulted <= 1%", "--report", folder + "/tune.html"]).status, 2)
        for page in ["sweep", "tune"] {
            for width in [1280, 1920] {
                let dom = try measuredDOM(folder + "/\(page).html", width: width)
                XCTAssertTrue(dom.contains("data-rendered=\"true\""), page)
                let outside = try labelsOutside(dom)
                XCTAssertEqual(outside.count, 0, "\(page) at \(width): \(outside)")
            }
        }
    }
}
