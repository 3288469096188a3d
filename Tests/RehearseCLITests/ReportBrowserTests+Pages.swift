import Foundation
import XCTest

/// The pages as a team reads them, drawn by headless Chromium and read from the drawn DOM: time
/// axes, the engine's lowest point, absent instances, the policies' chart.
extension ReportBrowserTests {
    /// The text of every element `<tag … class="cls" …>text<` inside the element with `id`.
    func texts(ofClass cls: String, inside id: String, of dom: String) -> [String] {
        guard let start = dom.range(of: "id=\"\(id)\"") else { return [] }
        let rest = dom[start.upperBound...]
        let end = rest.range(of: "</g>") ?? rest.range(of: "</svg>")
        let part = end.map { rest[..<$0.lowerBound] } ?? rest
        return part.components(separatedBy: "class=\"\(cls)\"").dropFirst().compactMap { piece in
            guard let open = piece.firstIndex(of: ">"), let close = piece[open...].firstIndex(of: "<") else { return nil }
            return String(piece[piece.index(after: open)..<close])
        }
    }

    /// The value of `attribute` on the first element of class `cls`.
    func attribute(_ attribute: String, ofClass cls: String, in dom: String) -> String? {
        guard let at = dom.range(of: "class=\"\(cls)\"") else { return nil }
        let tag = dom[dom[..<at.lowerBound].lastIndex(of: "<")!...].prefix { $0 != ">" }
        guard let value = tag.range(of: "\(attribute)=\"") else { return nil }
        return String(tag[value.upperBound...].prefix { $0 != "\"" })
    }

    func testTheRunPageMarksTheLowestPointWhereRunSaysAndHasTimeAxes() throws {
        _ = try chromium()
        let scenario = "scripts/automatic-os-upgrade-slow-boots.lua"
        let outcome = try runRehearse(["run", scenario, "--output", "json"])
        let json = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(outcome.stdout.utf8)) as? [String: Any])
        let lowest = try XCTUnwrap(json["lowestHealthy"] as? Int)
        let at = try XCTUnwrap(json["lowestHealthyAtSeconds"] as? Double)
        let dom = try dom(try report([scenario]))
        XCTAssertEqual(attribute("data-serving", ofClass: "lowest", in: dom), String(lowest))
        XCTAssertEqual(attribute("data-time", ofClass: "lowest", in: dom), String(Int(at * 1000)))
        // The boot before the upgrade goes lower (every instance starts Initializing) but is not marked.
        XCTAssertEqual(count("class=\"lowest\"", in: dom), 1)
        let laneTicks = texts(ofClass: "tick-label", inside: "lane-axis", of: dom)
        let curveTicks = texts(ofClass: "tick-label", inside: "curve-axis", of: dom)
        XCTAssertGreaterThanOrEqual(laneTicks.count, 3, "\(laneTicks)")
        XCTAssertEqual(laneTicks, curveTicks)
        // Labelled as people read times: 0 s, then whole minutes for a run of tens of minutes.
        XCTAssertEqual(laneTicks.first, "0 s")
        XCTAssertTrue(laneTicks.dropFirst().allSatisfy { $0.hasSuffix(" min") || $0.contains(" h") }, "\(laneTicks)")
    }

    func testAnImportedFleetDrawsNoLaneForAnIdItSkips() throws {
        _ = try chromium()
        let folder = try temporaryFolder("rehearse-pages")
        try """
            [ { "instanceId": "0", "latestModelApplied": true }, { "instanceId": "1", "latestModelApplied": false },
              { "instanceId": "3", "latestModelApplied": true } ]
            """.write(toFile: folder + "/instances.json", atomically: true, encoding: .utf8)
        try """
            scaleset { name = "web", capacity = 3, instances = "instances.json", model = { image = "v1" },
              upgradePolicy = { mode = "Rolling", rollingUpgradePolicy = { maxBatchInstancePercent = 34 } },
              healthExtension = { protocol = "http", port = 80, requestPath = "/", intervalInSeconds = 5 } }
            at("PT1M", function() update_model { image = "v2" } end)
            """.write(toFile: folder + "/fleet.lua", atomically: true, encoding: .utf8)
        let dom = try dom(try report([folder + "/fleet.lua"]))
        XCTAssertTrue(dom.contains("data-rendered=\"true\""))
        XCTAssertEqual(count("<g class=\"lane", in: dom), 3)
        XCTAssertTrue(dom.contains("data-id=\"3\""))
        XCTAssertFalse(dom.contains("data-id=\"2\""), "id 2 was deleted before the run")
        // Instance 1 runs an older model from the first second: its first stretch is grey
        // (healthy, older model), never green, until its upgrade; instance 0 starts green.
        func firstSegment(_ id: Int) throws -> Substring {
            let lane = try XCTUnwrap(dom.range(of: "data-id=\"\(id)\""))
            return dom[lane.upperBound...].components(separatedBy: "class=\"seg seg-")[1].prefix { $0 != "\"" }
        }
        XCTAssertEqual(try firstSegment(1), "old")
        XCTAssertEqual(try firstSegment(0), "current")
    }

    func testTheComparePageDrawsOnePointPerPolicyWithItsLabel() throws {
        _ = try chromium()
        let folder = try temporaryFolder("rehearse-pages")
        let out = try runRehearse(["compare", "scripts/risk-gate.lua", "--seeds", "0..99", "--report", folder + "/compare.html",
                                   "--set", "rollingUpgradePolicy.maxUnhealthyUpgradedInstancePercent=5,10,30"])
        XCTAssertNotEqual(out.status, 2, out.stderr)
        let dom = try dom(folder + "/compare.html")
        XCTAssertTrue(dom.contains("data-rendered=\"true\""))
        XCTAssertEqual(count("data-index=\"", in: dom), 3)
        let labels = texts(ofClass: "point-label", inside: "policy-chart", of: dom).filter { !$0.hasPrefix("limit") }
        XCTAssertEqual(Set(labels.map { $0.split(separator: " ")[0] }), ["1", "2", "3"])
        XCTAssertEqual(count("class=\"limit\"", in: dom), 1, "the script's Faulted <= 2% drawn")
        XCTAssertGreaterThanOrEqual(texts(ofClass: "tick-label", inside: "policy-chart", of: dom).count, 6)
        // One scale for every policy's histogram of a figure.
        let finish = dom.components(separatedBy: "data-figure=\"timeToFinish\"").dropFirst().map { part -> [String] in
            part.components(separatedBy: "</svg>")[0].components(separatedBy: "class=\"tick-label\">").dropFirst().map { String($0.prefix { $0 != "<" }) }
        }
        XCTAssertEqual(finish.count, 3)
        XCTAssertEqual(Set(finish.map { $0.suffix(6) }).count, 1, "the same x ticks in every histogram")
    }
}
