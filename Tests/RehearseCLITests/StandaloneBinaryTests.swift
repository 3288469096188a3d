import Foundation
import XCTest

/// The binary stands alone (issue 60): copied to another folder, with the build tree it came from
/// out of sight, a scenario that requires `rehearse.faults` runs and its page is written. The build
/// tree is hidden by a tmpfs mounted over `.build` in a mount namespace of the test's own
/// (`unshare -m`), which no other process sees.
final class StandaloneBinaryTests: XCTestCase {
    static let scenario = """
        local faults = require "rehearse.faults"
        scaleset { name = "alone", capacity = 4, model = { image = "v1" },
          upgradePolicy = { mode = "Rolling", rollingUpgradePolicy = { maxBatchInstancePercent = 50 } },
          healthExtension = { protocol = "http", port = 80, requestPath = "/" } }
        fault(faults.boot_failures { probability = 0 })
        at("PT1M", function() update_model { image = "v2" } end)
        expect { code = "Completed", successful = 4 }
        """

    /// Runs `script` with bash in a new mount namespace; nil when this machine does not allow one.
    func hidden(_ script: String, in folder: String) throws -> (status: Int32, output: String)? {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/unshare") else { return nil }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/unshare")
        process.arguments = ["-m", "bash", "-c", script]
        process.currentDirectoryURL = URL(fileURLWithPath: folder)
        let out = Pipe()
        process.standardOutput = out
        process.standardError = out
        try process.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let output = String(decoding: data, as: UTF8.self)
        if output.contains("unshare failed") || output.contains("mount: ") && output.contains("permission denied") { return nil }
        return (process.terminationStatus, output)
    }

    func testACopiedBinaryRunsABuiltinModuleAndWritesItsPagesWithTheBuildTreeHidden() throws {
        let folder = try temporaryFolder("rehearse-alone")
        try FileManager.default.copyItem(atPath: rehearseBinary, toPath: folder + "/rehearse")
        try Self.scenario.write(toFile: folder + "/alone.lua", atomically: true, encoding: .utf8)
        let build = repositoryRoot + "/.build"
        let script = """
            mount -t tmpfs none '\(build)' || { echo 'mount: permission denied'; exit 99; }
            [ -z "$(ls -A '\(build)')" ] || { echo 'the build tree is still visible'; exit 98; }
            ./rehearse run alone.lua --output json --report run.html > run.json; echo "run=$?"
            ./rehearse sweep alone.lua --seeds 0..4 --report sweep.html > /dev/null; echo "sweep=$?"
            """
        guard let result = try hidden(script, in: folder) else { throw XCTSkip("no mount namespace on this machine (unshare -m)") }
        XCTAssertEqual(result.status, 0, result.output)
        XCTAssertEqual(result.output.split(separator: "\n").filter { $0.hasPrefix("run=") || $0.hasPrefix("sweep=") }, ["run=0", "sweep=0"],
                       result.output)
        let outcome = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: folder + "/run.json"))) as? [String: Any])
        XCTAssertEqual((outcome["status"] as? [String: Any]).flatMap { ($0["runningStatus"] as? [String: Any])?["code"] as? String }, "Completed")
        for page in ["run.html", "sweep.html"] {
            let html = try String(contentsOfFile: folder + "/" + page, encoding: .utf8)
            XCTAssertTrue(html.contains("<script type=\"application/json\" id=\"data\">"), page)
            XCTAssertTrue(html.contains("document.body.setAttribute(\"data-rendered\""), "\(page): the whole template")
        }
    }
}
