import Foundation
import XCTest

/// Attacks that only the real binary can show: work the budget counts or the CPU-time backstop
/// stops, output that tries to lie, and the events file.
final class HostileCLITests: XCTestCase {
    let scaleSet = hostileScaleSet

    func temporaryFolder() throws -> String { try newTemporaryFolder() }

    func scenario(_ body: String) throws -> String { try writeHostileScenario(body) }

    func timed(_ arguments: [String]) throws -> (CLIOutput, Double) {
        let started = Date()
        let out = try runRehearse(arguments)
        return (out, Date().timeIntervalSince(started))
    }

    /// The pattern functions count their steps against the budget: a backtracking pattern
    /// stops like a loop, at its line, the same on every run (it ran until the wall-clock
    /// backstop ended the process).
    func testBacktrackingPatternStopsAtTheBudget() throws {
        let path = try scenario("""
            health(function(vm)
              return string.find(string.rep("a", 40), string.rep("a*", 20) .. "b") and "x" or nil
            end)
            at("PT1M", function() end)
            """)
        let (out, elapsed) = try timed(["run", path, "--seed", "3"])
        XCTAssertEqual(out.status, 2)
        XCTAssertTrue(out.stderr.hasPrefix("rehearse: error: health: budget of 10000000 instructions exceeded at "), out.stderr)
        XCTAssertTrue(out.stderr.contains("/x.lua:4 (health of web_0 at PT0S)"), out.stderr)
        XCTAssertLessThan(elapsed, 15)
    }

    func testPrintCannotForgeTimelineLinesOrSendEscapes() throws {
        let path = try scenario(#"print("ok\n      PT5M  upgradeCompleted  forged", "\27[2J\27[31mred")"#)
        let out = try runRehearse(["run", path])
        XCTAssertEqual(out.status, 0, out.stderr)
        XCTAssertFalse(out.stdout.contains("\u{1B}"))
        let printed = out.stdout.split(separator: "\n").filter { $0.hasPrefix("print: ") }
        XCTAssertEqual(printed, ["print: ok\\n      PT5M  upgradeCompleted  forged\t\\u{1B}[2J\\u{1B}[31mred"])
        XCTAssertFalse(out.stdout.split(separator: "\n").contains { $0.contains("upgradeCompleted") && !$0.hasPrefix("print: ") })
    }

    func testScriptErrorsCannotSendEscapes() throws {
        let path = try scenario(#"error("\27[2Jgone\nrehearse: all fine")"#)
        let out = try runRehearse(["run", path])
        XCTAssertEqual(out.status, 2)
        XCTAssertFalse(out.stderr.contains("\u{1B}"))
        XCTAssertEqual(out.stderr.split(separator: "\n").count, 1, out.stderr)
        XCTAssertTrue(out.stderr.contains(#"\u{1B}[2Jgone\nrehearse: all fine"#), out.stderr)
    }

    func testEventsWriteErrorsAreErrors() throws {
        let (out, _) = try timed(["run", "--events", "/dev/full", "scripts/ten-at-twenty.lua"])
        XCTAssertEqual(out.status, 2)
        XCTAssertTrue(out.stderr.contains("cannot write the events file /dev/full: No space left on device"), out.stderr)
        let missing = try runRehearse(["run", "--events", "/nonexistent-dir/e.jsonl", "scripts/ten-at-twenty.lua"])
        XCTAssertEqual(missing.status, 2)
        XCTAssertTrue(missing.stderr.contains("cannot open the events file /nonexistent-dir/e.jsonl: No such file or directory"), missing.stderr)
    }

    func eventLines(_ text: String) throws -> [[String: Any]] {
        try text.split(separator: "\n").filter { $0.hasPrefix("{") }.map {
            try JSONSerialization.jsonObject(with: Data($0.utf8)) as! [String: Any]
        }
    }

    func testEventsFollowsLinksAndWritesIntoFifosWithoutReplacingThem() throws {
        let dir = try temporaryFolder()
        // A symbolic link stays a link; its target gets the events (a previous longer file is truncated).
        try String(repeating: "old\n", count: 10_000).write(toFile: dir + "/target.jsonl", atomically: true, encoding: .utf8)
        try FileManager.default.createSymbolicLink(atPath: dir + "/link.jsonl", withDestinationPath: dir + "/target.jsonl")
        XCTAssertEqual(try runRehearse(["run", "--events", dir + "/link.jsonl", "scripts/ten-at-twenty.lua"]).status, 0)
        XCTAssertEqual(try FileManager.default.destinationOfSymbolicLink(atPath: dir + "/link.jsonl"), dir + "/target.jsonl")
        let written = try eventLines(String(contentsOfFile: dir + "/target.jsonl", encoding: .utf8))
        XCTAssertEqual(written.last?["kind"] as? String, "runEnded")
        XCTAssertFalse(try String(contentsOfFile: dir + "/target.jsonl", encoding: .utf8).split(separator: "\n").contains("old"))

        // A FIFO is written into (a reader drains it) and is still a FIFO afterwards.
        XCTAssertEqual(mkfifo(dir + "/pipe", 0o644), 0)
        let reader = Process()
        reader.executableURL = URL(fileURLWithPath: "/bin/cat")
        reader.arguments = [dir + "/pipe"]
        let drained = Pipe()
        reader.standardOutput = drained
        try reader.run()
        XCTAssertEqual(try runRehearse(["run", "--events", dir + "/pipe", "scripts/ten-at-twenty.lua"]).status, 0)
        let fromPipe = drained.fileHandleForReading.readDataToEndOfFile()
        reader.waitUntilExit()
        XCTAssertEqual(try eventLines(String(decoding: fromPipe, as: UTF8.self)).count, written.count)
        var info = stat()
        XCTAssertEqual(stat(dir + "/pipe", &info), 0)
        XCTAssertEqual(info.st_mode & S_IFMT, S_IFIFO)

        // "-" is standard output.
        let dash = try runRehearse(["run", "--json", "--events", "-", "scripts/ten-at-twenty.lua"])
        XCTAssertEqual(dash.status, 0)
        XCTAssertEqual(try eventLines(dash.stdout.components(separatedBy: "\n{\n").first ?? "").count, written.count)
        XCTAssertFalse(FileManager.default.fileExists(atPath: repositoryRoot + "/-"))
    }

    func testUnknownOptionsAndMissingArgumentsExitTwo() throws {
        let unknown = try runRehearse(["run", "--bogus", "scripts/ten-at-twenty.lua"])
        XCTAssertEqual(unknown.status, 2)
        XCTAssertTrue(unknown.stderr.contains("Unknown option '--bogus'"), unknown.stderr)
        XCTAssertEqual(try runRehearse(["run"]).status, 2)
        XCTAssertEqual(try runRehearse(["run", "--help"]).status, 0)
    }

    func testAPluginPathThatIsNoFolderIsAnError() throws {
        for arguments in [["run", "--plugin-path", "/nonexistent", "scripts/ten-at-twenty.lua"],
                          ["plugins", "list", "--plugin-path", "/nonexistent"], ["plugins", "check", "--plugin-path", "/nonexistent"],
                          ["validate", "--plugin-path", "/nonexistent", "scripts/ten-at-twenty.lua"]] {
            let out = try runRehearse(arguments)
            XCTAssertEqual(out.status, 2, "\(arguments)")
            XCTAssertTrue(out.stderr.contains("--plugin-path /nonexistent: no such folder"), out.stderr)
        }
        XCTAssertEqual(try runRehearse(["plugins", "check", "--plugin-path", "plugins"]).status, 0)
    }

    func testBadTimeLimitExitsTwoNamingTheOption() throws {
        let out = try runRehearse(["run", "--time-limit", "5S", "scripts/ten-at-twenty.lua"])
        XCTAssertEqual(out.status, 2)
        XCTAssertTrue(out.stderr.contains("--time-limit 5S:"), out.stderr)
        XCTAssertTrue(out.stderr.contains("allowed an ISO 8601 duration such as P7D, PT12H or PT90M"), out.stderr)
    }

    /// A FIFO nobody reads is refused at once (it used to block forever in open).
    func testEventsFIFOWithoutAReaderIsRefused() throws {
        let fifo = try temporaryFolder() + "/events"
        XCTAssertEqual(mkfifo(fifo, 0o600), 0)
        let (out, elapsed) = try timed(["run", "--events", fifo, "scripts/ten-at-twenty.lua"])
        XCTAssertEqual(out.status, 2)
        XCTAssertTrue(out.stderr.contains("a FIFO with no reader"), out.stderr)
        XCTAssertLessThan(elapsed, 15)
    }

    /// `--events - | head -c 10`: the closed pipe is a write error (exit 2), not SIGPIPE (141).
    func testEventsToAClosedPipeExitsTwo() throws {
        let status = try runShell("'\(rehearseBinary)' run --json --events - scripts/ten-at-twenty.lua 2>/dev/null | head -c 10 >/dev/null; exit ${PIPESTATUS[0]}")
        XCTAssertEqual(status, 2)
    }

    /// A bad option value is reported once: no second line naming an ExitCode.
    func testBadOptionIsOneLine() throws {
        let out = try runRehearse(["run", "scripts/ten-at-twenty.lua", "--time-limit", "5S"])
        XCTAssertEqual(out.status, 2)
        XCTAssertEqual(out.stderr.split(separator: "\n").count, 1, out.stderr)
        XCTAssertFalse(out.stderr.contains("ExitCode"), out.stderr)
    }

    /// `validate` of a 600 MB JSON file refuses it from its size (documents are read up to 16 MiB), without reading it.
    func testValidateRefusesAHugeFileFromItsSize() throws {
        let path = try temporaryFolder() + "/policy.json"
        XCTAssertTrue(FileManager.default.createFile(atPath: path, contents: nil))
        let handle = try XCTUnwrap(FileHandle(forWritingAtPath: path))
        try handle.truncate(atOffset: 600 << 20)
        try handle.close()
        let (out, elapsed) = try timed(["validate", path])
        XCTAssertEqual(out.status, 2)
        XCTAssertTrue(out.stderr.contains("at most 16777216 are read"), out.stderr)
        XCTAssertLessThan(elapsed, 15)
    }

    /// `plugins pack` of 900 sparse 4 MiB files: refused from the listing's sizes before any
    /// file is read (it used to read them all and abort).
    func testPackRefusesABundleTooLargeBeforeReadingIt() throws {
        let folder = try temporaryFolder() + "/big"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try #"{"name": "big", "version": "1.0.0", "api": "^1", "description": "x", "exports": {}}"#
            .write(toFile: folder + "/rehearse-plugin.json", atomically: true, encoding: .utf8)
        for i in 0..<900 {
            let path = folder + "/f\(i).lua"
            XCTAssertTrue(FileManager.default.createFile(atPath: path, contents: nil))
            let handle = try XCTUnwrap(FileHandle(forWritingAtPath: path))
            try handle.truncate(atOffset: 4 << 20)
            try handle.close()
        }
        let into = try temporaryFolder()
        let (out, elapsed) = try timed(["plugins", "pack", folder, "--into", into])
        XCTAssertEqual(out.status, 2, out.stderr)
        XCTAssertTrue(out.stderr.contains("add up to more than the 33554432 bytes allowed"), out.stderr)
        XCTAssertLessThan(elapsed, 15)
    }

    /// `pairs` over table and function keys: five runs, five processes (each with its own
    /// addresses), identical events files. The order of the manual upgrades follows pairs.
    func testPairsOverTableKeysGivesTheSameEventsOnEveryRun() throws {
        let folder = try temporaryFolder()
        let path = folder + "/pairs.lua"
        try """
            scaleset { name = "web", capacity = 12, upgradePolicy = { mode = "Manual" } }
            local byTable, byFunction = {}, {}
            for i = 0, 11 do
              byTable[{ id = i }] = i
              byFunction[function() return i end] = i
            end
            at("PT1M", function()
              update_model { image = "v2" }
              for key, id in pairs(byTable) do if id % 2 == 0 then manual_upgrade { key.id } end end
              for f, id in pairs(byFunction) do if id % 2 == 1 then manual_upgrade { f() } end end
            end)
            """.write(toFile: path, atomically: true, encoding: .utf8)
        var files: Set<String> = []
        var orders: Set<[Int]> = []
        for run in 0..<5 {
            let events = folder + "/events-\(run).jsonl"
            let out = try runRehearse(["run", path, "--events", events])
            XCTAssertEqual(out.status, 0, out.stderr)
            let text = try String(contentsOfFile: events, encoding: .utf8)
            files.insert(text)
            let ids = text.split(separator: "\n").compactMap { line -> Int? in
                let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
                guard object?["kind"] as? String == "manualUpgrade" else { return nil }
                return (object?["ids"] as? [Int])?.first
            }
            orders.insert(ids)
        }
        XCTAssertEqual(files.count, 1)
        XCTAssertEqual(orders.first?.count, 12)
    }

    /// Work no budget counts (copying a 10 MB string, one instruction) on every probe stays
    /// within each call's limits; the run's CPU-time backstop ends the run (lowered here to 1 s
    /// to keep the test short) as a failed run, exit 2, naming the call and the line.
    func testManyModeratelySlowCallsMeetTheRunBackstop() throws {
        let path = try scenario("""
            health(function(vm)
              local s = string.rep("x", 10000000)
              return { applicationHealthState = "Healthy" }
            end)
            at("PT1H", function() end)
            """)
        let (out, elapsed) = try timed(["run", path, "--max-script-seconds", "1"])
        XCTAssertEqual(out.status, 2)
        XCTAssertTrue(out.stderr.hasPrefix("rehearse: error: health: the run's scripts have spent more than 1000 ms of CPU time in calls"), out.stderr)
        XCTAssertTrue(out.stderr.contains("(raise it with --max-script-seconds) at "), out.stderr)
        XCTAssertLessThan(elapsed, 30)
    }
}
