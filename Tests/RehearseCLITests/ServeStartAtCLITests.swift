import Formats
import Foundation
import XCTest

/// `rehearse serve --start-at` (issue 39, item 4): the real instant the virtual clock starts
/// running from, instead of the first request; refused with --step and for anything but an
/// RFC 3339 UTC time.
final class ServeStartAtCLITests: XCTestCase {
    /// The virtual clock (ms) a served scenario reports to two requests 1 s apart, started with
    /// `startAt` at `speed`.
    func clocks(startAt: Date, speed: Int) throws -> [Millis?] {
        let folder = try temporaryFolder("serve-start-at")
        let script = folder + "/web.lua"
        try ServeShutdownCLITests.scenario.write(toFile: script, atomically: true, encoding: .utf8)
        let formatter = ISO8601DateFormatter()
        let (server, port) = try startServe([script, "--http", "--port", "0", "--speed", "\(speed)", "--start-at", formatter.string(from: startAt)])
        defer { server.terminate(); server.waitUntilExit() }
        XCTAssertGreaterThan(port, 0)
        var read: [Millis?] = []
        for index in 0..<2 {
            if index > 0 { sleep(1) }
            let reply = try rawHTTP(port: port, #"GET /rehearse/clock HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"#, seconds: 30)
            let body = reply.range(of: "\r\n\r\n").map { String(reply[$0.upperBound...]) } ?? ""
            guard case .int(let now)? = try JSON.parse(body).field("now") else { read.append(nil); continue }
            read.append(now)
        }
        return read
    }

    func testAStartAnHourAgoPutsTheClockAnHourOnAtSpeedOne() throws {
        // Speed 1 from an hour before: at least 3,600,000 virtual ms at the first request (the
        // time is written in whole seconds, rounded down: up to 1 s earlier still).
        let now = try XCTUnwrap(try clocks(startAt: Date().addingTimeInterval(-3_600), speed: 1).first ?? nil)
        XCTAssertGreaterThanOrEqual(now, 3_600_000)
        XCTAssertLessThan(now, 3_600_000 + 600_000)
    }

    func testAStartStillToComeKeepsTheClockAtZero() throws {
        // Without --start-at the clock would run from the first request: 60,000 virtual ms and
        // more by the second, 1 s later at speed 60. An hour ahead, it reads zero both times.
        XCTAssertEqual(try clocks(startAt: Date().addingTimeInterval(3_600), speed: 60), [0, 0])
    }

    func testBadStartTimesAndStepAreRefusedWithExitTwo() throws {
        let folder = try temporaryFolder("serve-start-at-bad")
        let script = folder + "/web.lua"
        try ServeShutdownCLITests.scenario.write(toFile: script, atomically: true, encoding: .utf8)
        for arguments in [["--start-at", "2026-11-26"], ["--start-at", "2026-11-26T19:00:00+01:00"], ["--start-at", "soon"],
                          ["--start-at", "2026-11-26T19:00:00Z", "--step"]] {
            let output = try runRehearse(["serve", script, "--http", "--port", "0"] + arguments)
            XCTAssertEqual(output.status, 2, "\(arguments)")
        }
    }
}
