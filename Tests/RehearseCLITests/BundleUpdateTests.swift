import Foundation
import XCTest

/// Two teams and one bundle over HTTP on 127.0.0.1: team A publishes `flaky` 1.0.0, team B
/// installs and locks it; team A then publishes 1.1.0 (same options) and 2.0.0 (which renames
/// `hang_rate` to `hang_probability`). Team B sees both in `outdated`, `update` moves only to
/// 1.1.0 and removes the 1.0.0 folder, a plain `install` stays on 1 too, and only `flaky@^2` takes
/// the new major, under which the script's `hang_rate` is refused naming the bundle and its options.
final class BundleUpdateTests: XCTestCase {
    var work = ""
    var server: Process?

    override func setUpWithError() throws {
        work = FileManager.default.temporaryDirectory.appendingPathComponent("bundle-update-\(UUID().uuidString)").path
        for folder in ["repo", "team-b", "src"] {
            try FileManager.default.createDirectory(atPath: work + "/" + folder, withIntermediateDirectories: true)
        }
    }

    override func tearDown() {
        server?.terminate()
        server?.waitUntilExit()
        try? FileManager.default.removeItem(atPath: work)
    }

    /// Team A's bundle `flaky` at `version`; its `fault` reads `option` (the share of upgrades that fail).
    func publish(_ version: String, option: String, repo: String) throws {
        let folder = work + "/src/flaky-\(version)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let manifest: [String: Any] = [
            "name": "flaky", "version": version, "api": "^1.1", "description": "Upgrades that fail now and then.",
            "exports": ["fault": "fault{ \(option) = 0.05 }: a share of upgrades fail"],
            "options": [option: ["type": "number", "default": 0, "doc": "the share of upgrades that fail"]],
        ]
        try JSONSerialization.data(withJSONObject: manifest, options: [.sortedKeys]).write(to: URL(fileURLWithPath: folder + "/rehearse-plugin.json"))
        try """
            local faults = require "rehearse.faults"
            local M = {}
            function M.fault(opts)
              return faults.boot_failures { probability = opts.\(option) or 0, operations = { "upgrade" } }
            end
            return M

            """.write(toFile: folder + "/init.lua", atomically: true, encoding: .utf8)
        XCTAssertEqual(try runRehearse(["plugins", "pack", folder, "--into", repo]).status, 0)
    }

    func json(_ output: CLIOutput, file: StaticString = #filePath, line: UInt = #line) throws -> [String: Any] {
        XCTAssertEqual(output.status, 0, output.stderr, file: file, line: line)
        return try XCTUnwrap(JSONSerialization.jsonObject(with: Data(output.stdout.utf8)) as? [String: Any], output.stdout, file: file, line: line)
    }

    func testOutdatedListsBothUpdateStaysInsideTheRangeAndARenamedOptionIsRefused() throws {
        let repo = work + "/repo", project = work + "/team-b"
        let (process, port) = try startFixtureServer("static_server.py", [repo])
        server = process
        let base = "http://127.0.0.1:\(port)"
        try publish("1.0.0", option: "hang_rate", repo: repo)
        XCTAssertEqual(try runRehearse(["plugins", "index", repo, "--url", base]).status, 0)

        // Team B: a plain install locks 1.0.0 with the range ^1.0.0 and the repository.
        let installed = try json(try runRehearse(["plugins", "install", "flaky", "--repo", base, "--project", project, "--json"]))
        let first = try XCTUnwrap((installed["changes"] as? [[String: Any]])?.first)
        XCTAssertEqual(first["to"] as? String, "1.0.0")
        XCTAssertTrue(first["from"] is NSNull)
        let lock = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: project + "/rehearse.lock"))) as! [String: Any]
        let locked = (lock["bundles"] as! [[String: Any]])[0]
        XCTAssertEqual(locked["range"] as? String, "^1.0.0")
        XCTAssertEqual(locked["repository"] as? String, base)
        try """
            local flaky = require "flaky"
            scaleset { name = "web", capacity = 4, model = { image = "v1" },
              upgradePolicy = { mode = "Rolling", rollingUpgradePolicy = { maxBatchInstancePercent = 25 } },
              healthExtension = { protocol = "http", port = 80, requestPath = "/" } }
            fault(flaky.fault { hang_rate = 0.05 })
            at("PT1M", function() update_model { image = "v2" } end)

            """.write(toFile: project + "/rollout.lua", atomically: true, encoding: .utf8)
        XCTAssertEqual(try runRehearse(["run", "--json", "rollout.lua"], in: project).status, 0)

        // Team A publishes a minor and a major.
        try publish("1.1.0", option: "hang_rate", repo: repo)
        try publish("2.0.0", option: "hang_probability", repo: repo)
        XCTAssertEqual(try runRehearse(["plugins", "index", repo, "--url", base]).status, 0)

        // Something is outdated: exit 1, a status a CI step can act on, with the JSON still printed.
        let asked = try runRehearse(["plugins", "outdated", "--project", project, "--json"])
        XCTAssertEqual(asked.status, 1, asked.stderr)
        let outdated = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(asked.stdout.utf8)) as? [String: Any], asked.stdout)
        let flaky = try XCTUnwrap((outdated["bundles"] as? [[String: Any]])?.first)
        XCTAssertEqual(flaky["version"] as? String, "1.0.0")
        XCTAssertEqual(flaky["range"] as? String, "^1.0.0")
        XCTAssertEqual(flaky["inRange"] as? [String], ["1.1.0"])
        XCTAssertEqual(flaky["outsideRange"] as? [String], ["2.0.0"])
        XCTAssertEqual(flaky["outdated"] as? Bool, true)

        let updated = try json(try runRehearse(["plugins", "update", "flaky", "--project", project, "--json"]))
        let change = try XCTUnwrap((updated["changes"] as? [[String: Any]])?.first)
        XCTAssertEqual(change["from"] as? String, "1.0.0")
        XCTAssertEqual(change["to"] as? String, "1.1.0")
        XCTAssertEqual(change["removedFolder"] as? String, "plugins/flaky-1.0.0")
        XCTAssertFalse(FileManager.default.fileExists(atPath: project + "/plugins/flaky-1.0.0"))
        XCTAssertTrue(FileManager.default.fileExists(atPath: project + "/plugins/flaky-1.1.0/init.lua"))

        // A plain install does not take the new major either.
        let again = try json(try runRehearse(["plugins", "install", "flaky", "--repo", base, "--project", project, "--json"]))
        XCTAssertEqual((again["changes"] as? [[String: Any]])?.first?["to"] as? String, "1.1.0")
        XCTAssertEqual(try runRehearse(["run", "--json", "rollout.lua"], in: project).status, 0)

        // Asked for explicitly, 2.0.0 comes; the script's hang_rate is now an option it does not have.
        let major = try json(try runRehearse(["plugins", "install", "flaky@^2", "--repo", base, "--project", project, "--json"]))
        XCTAssertEqual((major["changes"] as? [[String: Any]])?.first?["from"] as? String, "1.1.0")
        XCTAssertEqual((major["changes"] as? [[String: Any]])?.first?["to"] as? String, "2.0.0")
        let refused = try runRehearse(["run", "rollout.lua"], in: project)
        XCTAssertEqual(refused.status, 2, refused.stderr)
        XCTAssertTrue(refused.stderr.contains("rollout.lua:5: flaky 2.0.0: fault has no option 'hang_rate'"), refused.stderr)
        XCTAssertTrue(refused.stderr.contains("hang_probability (number, default 0)"), refused.stderr)
    }
}
