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
        for arguments in [["--start-at", "2026-11-26"], ["--start-at", "2026-11-26T19:00:00+01:00"], ["--start-at", "soon"]] {
            let output = try runRehearse(["serve", script, "--http", "--port", "0"] + arguments)
            XCTAssertEqual(output.status, 2, "\(arguments)")
        }
    }

    /// Impossible instants are refused, each named (issue 58): the old reader (Foundation's
    /// ISO8601DateFormatter) rolled 30 February over to 2 March, 31 November to 1 December and
    /// hour 24 to the next day's midnight, and served from there.
    func testImpossibleInstantsAreRefusedNamingWhatDoesNotExist() throws {
        let folder = try temporaryFolder("serve-start-at-impossible")
        let script = folder + "/web.lua"
        try ServeShutdownCLITests.scenario.write(toFile: script, atomically: true, encoding: .utf8)
        for (instant, named) in [("2026-02-30T10:00:00Z", "30 February 2026 does not exist; February 2026 has 28 days"),
                                 ("2028-02-30T10:00:00Z", "February 2028 has 29 days"),
                                 ("2026-11-31T10:00:00Z", "31 November 2026 does not exist; November 2026 has 30 days"),
                                 ("2026-11-26T24:00:00Z", "hour 24 does not exist; allowed 00–23"),
                                 ("2026-11-26T19:60:00Z", "minute 60 does not exist"), ("2026-11-26T19:00:60Z", "second 60 does not exist"),
                                 ("2026-13-01T00:00:00Z", "month 13 does not exist"), ("1969-12-31T23:59:59Z", "year 1969 is before 1970")] {
            let output = try runRehearse(["serve", script, "--http", "--port", "0", "--start-at", instant])
            XCTAssertEqual(output.status, 2, instant)
            XCTAssertTrue(output.stderr.contains(instant) && output.stderr.contains(named), "\(instant): \(output.stderr)")
        }
    }

    /// The clock's timestamp at 0 ms in --step: the --start-at instant (it anchors the served
    /// times, the clock stays still); without --start-at, the server's start, this year, not the
    /// old fixed 2024-01-01.
    func testServedTimesAreAnchoredAtTheStartOrNow() throws {
        let folder = try temporaryFolder("serve-start-at-anchor")
        let script = folder + "/web.lua"
        try ServeShutdownCLITests.scenario.write(toFile: script, atomically: true, encoding: .utf8)
        func timestamp(_ extra: [String]) throws -> String? {
            let (server, port) = try startServe([script, "--http", "--port", "0", "--step"] + extra)
            defer { server.terminate(); server.waitUntilExit() }
            let reply = try rawHTTP(port: port, "GET /rehearse/clock HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", seconds: 30)
            let body = reply.range(of: "\r\n\r\n").map { String(reply[$0.upperBound...]) } ?? ""
            guard case .string(let text)? = try JSON.parse(body).field("timestamp") else { return nil }
            return text
        }
        XCTAssertEqual(try timestamp(["--start-at", "2026-11-26T19:00:00Z"]), "2026-11-26T19:00:00.0000000+00:00")
        let year = Calendar(identifier: .gregorian).dateComponents(in: TimeZone(identifier: "UTC")!, from: Date()).year!
        let now = try XCTUnwrap(try timestamp([]))
        XCTAssertTrue(now.hasPrefix("\(year)-"), now)
    }
}
