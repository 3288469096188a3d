import Foundation
import XCTest

/// Every command that loads a scenario loads it one way, `./rehearse.lock` included: `test` and
/// `validate` load the bundle versions the lock pins, as `run` does.
final class LockedLoadCLITests: XCTestCase {
    var work = ""

    override func setUpWithError() throws {
        work = FileManager.default.temporaryDirectory.appendingPathComponent("locked-load-\(UUID().uuidString)").path
        for folder in ["repo", "project", "src"] {
            try FileManager.default.createDirectory(atPath: work + "/" + folder, withIntermediateDirectories: true)
        }
    }

    override func tearDown() {
        try? FileManager.default.removeItem(atPath: work)
    }

    /// A bundle `pin` of `version` in `folder`, whose module answers `{ version = major }`.
    func writeBundle(_ folder: String, version: String, answer: Int) throws {
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try #"{ "name": "pin", "version": "\#(version)", "api": "^1.0", "entry": "init", "description": "pins a number", "dependencies": {}, "exports": {} }"#
            .write(toFile: folder + "/rehearse-plugin.json", atomically: true, encoding: .utf8)
        try "return { answer = \(answer) }\n".write(toFile: folder + "/init.lua", atomically: true, encoding: .utf8)
    }

    func testTestAndValidateLoadTheBundleVersionTheLockPins() throws {
        let repo = work + "/repo", project = work + "/project"
        // pin 1.0.0 installed from a repository, so rehearse.lock pins it; 1.1.0 beside it, newer.
        try writeBundle(work + "/src/pin", version: "1.0.0", answer: 1)
        XCTAssertEqual(try runRehearse(["plugins", "pack", work + "/src/pin", "--into", repo]).status, 0)
        XCTAssertEqual(try runRehearse(["plugins", "index", repo]).status, 0)
        let install = try runRehearse(["plugins", "install", "pin@^1", "--repo", repo, "--project", project])
        XCTAssertEqual(install.status, 0, install.stderr)
        XCTAssertTrue(FileManager.default.fileExists(atPath: project + "/rehearse.lock"))
        try writeBundle(project + "/plugins/pin-1.1.0", version: "1.1.0", answer: 2)
        // 4 instances with 1.0.0, 8 with 1.1.0; the expectation holds only with 1.0.0.
        try """
            local pin = require "pin"
            scaleset { name = "web", capacity = 4 * pin.answer, model = { image = "v1" }, upgradePolicy = { mode = "Rolling" },
                       healthExtension = { protocol = "http", port = 8000, requestPath = "/health" } }
            health(function(vm, now) return { applicationHealthState = "Healthy" } end)
            at("PT1M", function() update_model { image = "v2" } end)
            expect { successful = 4 }
            """.write(toFile: project + "/scenario.lua", atomically: true, encoding: .utf8)

        let run = try runRehearse(["run", "scenario.lua", "--output", "json"], in: project)
        XCTAssertEqual(run.status, 0, run.stderr)
        let validate = try runRehearse(["validate", "scenario.lua", "--output", "json"], in: project)
        XCTAssertEqual(validate.status, 0, validate.stderr)
        let document = try JSONSerialization.jsonObject(with: Data(validate.stdout.utf8)) as? [String: Any]
        XCTAssertEqual(document?["capacity"] as? Int, 4, validate.stdout)
        let test = try runRehearse(["test", "scenario.lua", "--output", "json"], in: project)
        XCTAssertEqual(test.status, 0, test.stdout + test.stderr)
        let summary = try JSONSerialization.jsonObject(with: Data(test.stdout.utf8)) as? [String: Any]
        XCTAssertEqual(summary?["passed"] as? Int, 1, test.stdout)

        // Without the lock, the newest version: 8 instances, and the expectation fails.
        try FileManager.default.removeItem(atPath: project + "/rehearse.lock")
        let unpinned = try runRehearse(["validate", "scenario.lua", "--output", "json"], in: project)
        XCTAssertEqual(unpinned.status, 0, unpinned.stderr)
        XCTAssertEqual((try JSONSerialization.jsonObject(with: Data(unpinned.stdout.utf8)) as? [String: Any])?["capacity"] as? Int, 8)
        let failing = try runRehearse(["test", "scenario.lua", "--output", "json"], in: project)
        XCTAssertEqual(failing.status, 1, failing.stdout + failing.stderr)
        XCTAssertEqual((try JSONSerialization.jsonObject(with: Data(failing.stdout.utf8)) as? [String: Any])?["failed"] as? Int, 1)
    }
}
