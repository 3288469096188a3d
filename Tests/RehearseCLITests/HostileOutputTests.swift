import Foundation
import XCTest
#if canImport(FoundationXML)
import FoundationXML
#endif

/// Text a script or a document supplies (a file name, a zone, an `expect` value, an error
/// message) holding control characters: JUnit stays well-formed XML, and no human-readable
/// output passes an escape sequence to the terminal. Output files: HostileOutputTests+Files.swift.
final class HostileOutputTests: XCTestCase {
    var work = ""

    override func setUpWithError() throws {
        work = try temporaryFolder("hostile-output")
    }

    override func tearDown() { try? FileManager.default.removeItem(atPath: work) }

    /// A scenario named with an escape sequence, whose zone holds another (an `expect` code is a closed set, checked when it loads).
    func hostileScenario(expectedCode: String = "Faulted") throws -> String {
        let path = work + "/clear\u{1B}[2J.lua"
        try """
            scaleset { name = "web", capacity = 4, zones = { "1\\27[31m", "2" }, upgradePolicy = { mode = "Rolling" },
                       healthExtension = { protocol = "http", port = 80, requestPath = "/" } }
            at("PT1M", function() update_model { image = "v2" } end)
            expect { code = "\(expectedCode)" }
            """.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// The output holds no ESC byte, and shows at least one as `\u{1B}`.
    func assertEscaped(_ out: CLIOutput, _ what: String, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertFalse(out.stdout.unicodeScalars.contains("\u{1B}"), "\(what) printed a raw escape: \(out.stdout.debugDescription)", file: file, line: line)
        XCTAssertTrue(out.stdout.contains(#"\u{1B}"#), "\(what) did not show the value: \(out.stdout)", file: file, line: line)
        XCTAssertFalse(out.stderr.unicodeScalars.contains("\u{1B}"), "\(what): \(out.stderr.debugDescription)", file: file, line: line)
    }

    func testEveryHumanReadableOutputEscapesWhatScriptsAndDocumentsSupply() throws {
        let scenario = try hostileScenario()
        let cases: [(String, [String], Int32)] = [
            ("plan", ["plan", scenario], 0),
            ("plan --output table", ["plan", scenario, "--output", "table"], 0),
            ("sweep", ["sweep", scenario, "--seeds", "0..1"], 0),
            ("compare", ["compare", scenario, "--seeds", "0..1", "--set", "rollingUpgradePolicy.maxBatchInstancePercent=20,50"], 0),
            ("test", ["test", work], 1),
            ("test --output table", ["test", work, "--output", "table"], 1),
            ("validate", ["validate", scenario], 0),
            ("run --output table", ["run", scenario, "--output", "table"], 1),
        ]
        for (what, arguments, status) in cases {
            let out = try runRehearse(arguments)
            XCTAssertEqual(out.status, status, "\(what): \(out.stderr)")
            assertEscaped(out, what)
        }
        // A bundle's manifest is a document too: `plugins list` and `show` print its description.
        let bundle = work + "/bundles/evil"
        try FileManager.default.createDirectory(atPath: bundle, withIntermediateDirectories: true)
        try #"{"name": "evil", "version": "1.0.0", "api": "^1", "entry": "init", "description": "x\u001b[2Jy", "exports": {}}"#
            .write(toFile: bundle + "/rehearse-plugin.json", atomically: true, encoding: .utf8)
        try "return {}\n".write(toFile: bundle + "/init.lua", atomically: true, encoding: .utf8)
        for command in ["list", "show evil"] {
            let out = try runRehearse(["plugins"] + command.split(separator: " ").map(String.init) + ["--plugin-path", work + "/bundles"])
            XCTAssertEqual(out.status, 0, out.stderr)
            assertEscaped(out, "plugins \(command)")
        }
        let part = try runRehearse(["sweep", scenario, "--seeds", "0..1", "--shard", "1/1", "--json"])
        XCTAssertEqual(part.status, 0, part.stderr)
        try part.stdout.write(toFile: work + "/part.json", atomically: true, encoding: .utf8)
        let merged = try runRehearse(["merge", work + "/part.json"])
        XCTAssertEqual(merged.status, 0, merged.stderr)
        assertEscaped(merged, "merge")
    }

    /// The JUnit attributes and texts of `path`, parsed by an XML 1.0 parser.
    func junit(_ path: String) throws -> XMLDocument { try XMLDocument(contentsOf: URL(fileURLWithPath: path)) }

    func testJUnitIsWellFormedWhateverTheNamesValuesAndMessagesHold() throws {
        // A file name and an error message with control characters XML 1.0 forbids (an expected code is a closed set).
        _ = try hostileScenario(expectedCode: "Faulted")
        try """
            scaleset { name = "web", capacity = 2, upgradePolicy = { mode = "Rolling" },
                       healthExtension = { protocol = "http", port = 80, requestPath = "/" } }
            at("PT1M", function() error("bad \\2value\\31 \\127\\r\\n") end)
            expect { code = "Completed" }
            """.write(toFile: work + "/err\u{7}or.lua", atomically: true, encoding: .utf8)
        let out = try runRehearse(["test", work, "--junit", work + "/junit.xml"])
        XCTAssertEqual(out.status, 2, out.stderr)
        let document = try junit(work + "/junit.xml")
        let suites = try document.nodes(forXPath: "/testsuites/testsuite").compactMap { $0 as? XMLElement }
        XCTAssertEqual(suites.count, 2)
        XCTAssertEqual(suites.compactMap { $0.attribute(forName: "name")?.stringValue }.sorted(),
                       [work + #"/clear\u{1B}[2J.lua"#, work + #"/err\u{07}or.lua"#])
        let failure = try document.nodes(forXPath: "//failure").first as? XMLElement
        XCTAssertEqual(failure?.attribute(forName: "message")?.stringValue, "code is Completed, expected Faulted")
        let error = try document.nodes(forXPath: "//error").first as? XMLElement
        let message = error?.attribute(forName: "message")?.stringValue ?? ""
        XCTAssertTrue(message.contains(#"bad \u{02}value\u{1F} "#), message)
        XCTAssertFalse(message.unicodeScalars.contains { $0.value < 0x20 && $0 != "\t" && $0 != "\n" && $0 != "\r" })
        XCTAssertEqual(try document.nodes(forXPath: "//error").first?.stringValue, message, "the element's text and its message agree")
    }
}
