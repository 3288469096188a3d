import Formats
import Foundation
import XCTest

/// `rehearse serve` at shutdown and its output files, end to end: SIGTERM with a request body
/// still arriving ends the server with every output written; outputs are opened as `run` opens them.
final class ServeShutdownCLITests: XCTestCase {
    static let scenario = """
        scaleset { name = "web", capacity = 4, model = { image = "v1" },
          upgradePolicy = { mode = "Rolling", rollingUpgradePolicy = { maxBatchInstancePercent = 50 } },
          healthExtension = { protocol = "http", port = 8000, requestPath = "/health", intervalInSeconds = 5, numberOfProbes = 1, gracePeriod = 30 } }
        health(function(vm, now) return { applicationHealthState = "Healthy" } end)
        """

    /// Starts `rehearse serve` with `arguments`; returns the process and the port it printed.
    func serve(_ arguments: [String]) throws -> (Process, Int) {
        let (process, port) = try startServe(arguments)
        XCTAssertGreaterThan(port, 0, "no port printed")
        return (process, port)
    }

    /// Waits up to `seconds` for `process` to exit; false if it did not.
    func exited(_ process: Process, within seconds: Double) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while process.isRunning && Date() < deadline { usleep(50_000) }
        return !process.isRunning
    }

    func testSIGTERMWithABodyStillArrivingWritesEveryOutputAndExits() throws {
        let folder = try temporaryFolder("serve-term")
        let script = folder + "/web.lua", events = folder + "/events.jsonl", target = folder + "/target.jsonl", report = folder + "/report.html"
        try Self.scenario.write(toFile: script, atomically: true, encoding: .utf8)
        // --events through a link: the target is written, the link stays a link.
        try "old\n".write(toFile: target, atomically: true, encoding: .utf8)
        try FileManager.default.createSymbolicLink(atPath: events, withDestinationPath: target)
        let (server, port) = try serve([script, "--http", "--port", "0", "--step", "--events", events, "--report", report])
        defer { if server.isRunning { server.interrupt() } }
        // A PATCH of the image, then a PATCH whose body never finishes arriving.
        let client = Process()
        client.executableURL = URL(fileURLWithPath: "/bin/bash")
        let path = "/subscriptions/s/resourceGroups/g/providers/Microsoft.Compute/virtualMachineScaleSets/web?api-version=2024-07-01"
        let body = #"{"properties":{"virtualMachineProfile":{"storageProfile":{"imageReference":{"version":"2.0.0"}}}}}"#
        client.arguments = ["-c", """
            exec 3<>/dev/tcp/127.0.0.1/\(port)
            printf 'PATCH \(path) HTTP/1.1\\r\\nHost: x\\r\\nAuthorization: Bearer t\\r\\nContent-Type: application/json\\r\\nContent-Length: \(body.utf8.count)\\r\\n\\r\\n%s' '\(body)' >&3
            head -c 12 <&3 >/dev/null
            exec 4<>/dev/tcp/127.0.0.1/\(port)
            printf 'PATCH \(path) HTTP/1.1\\r\\nHost: x\\r\\nAuthorization: Bearer t\\r\\nContent-Length: 100000\\r\\n\\r\\n{"properties":' >&4
            sleep 60
            """]
        try client.run()
        defer { client.terminate() }
        usleep(1_500_000)
        server.terminate()
        XCTAssertTrue(exited(server, within: 15), "serve still running 15 s after SIGTERM")
        XCTAssertEqual(server.terminationStatus, 0)
        XCTAssertEqual(server.terminationReason, .exit)
        let attributes = try FileManager.default.attributesOfItem(atPath: events)
        XCTAssertEqual(attributes[.type] as? FileAttributeType, .typeSymbolicLink)
        let lines = try String(contentsOfFile: target, encoding: .utf8).split(separator: "\n").map { try JSON.parse(String($0)) }
        XCTAssertEqual(lines.filter { $0.field("kind") == .string("modelUpdated") }.count, 1)
        XCTAssertEqual(lines.last?.field("kind"), .string("runEnded"))
        // The report carries the served run's events: the serving curve has steps.
        let page = try String(contentsOfFile: report, encoding: .utf8)
        guard let start = page.range(of: #"<script type="application/json" id="data">"#), let end = page.range(of: "</script>", range: start.upperBound..<page.endIndex) else {
            return XCTFail("no data in the report")
        }
        guard case .array(let serving)? = try JSON.parse(String(page[start.upperBound..<end.lowerBound])).field("serving") else { return XCTFail("no serving curve") }
        XCTAssertGreaterThan(serving.count, 1)
    }

    /// While serving, the events grow in FILE.partial, a line at a time, for a pipeline to
    /// follow; FILE keeps its old content until the run ends well, then holds them all.
    func testTheEventsGrowInAPartialFileAndReplaceTheFileAtTheEnd() throws {
        let folder = try temporaryFolder("serve-follow")
        let script = folder + "/web.lua", events = folder + "/events.jsonl"
        try Self.scenario.write(toFile: script, atomically: true, encoding: .utf8)
        try "old\n".write(toFile: events, atomically: true, encoding: .utf8)
        let (server, port) = try serve([script, "--http", "--port", "0", "--step", "--events", events])
        defer { if server.isRunning { server.interrupt() } }
        let body = #"{"to": "PT2M"}"#
        let reply = try rawHTTP(port: port, "POST /rehearse/clock HTTP/1.1\\r\\nHost: x\\r\\nContent-Type: application/json\\r\\nContent-Length: \(body.utf8.count)\\r\\nConnection: close\\r\\n\\r\\n\(body)", seconds: 3)
        XCTAssertTrue(reply.hasPrefix("HTTP/1.1 200"), reply)
        // The clock stands at 120 s: the four instances' first Healthy answers are in the partial file.
        let partial = try String(contentsOfFile: events + ".partial", encoding: .utf8).split(separator: "\n").map { try JSON.parse(String($0)) }
        XCTAssertEqual(partial.filter { $0.field("kind") == .string("healthChanged") }.count, 4)
        XCTAssertTrue(partial.allSatisfy { if case .int(let time)? = $0.field("time") { time <= 120_000 } else { false } })
        XCTAssertEqual(try String(contentsOfFile: events, encoding: .utf8), "old\n")
        server.terminate()
        XCTAssertTrue(exited(server, within: 15), "serve still running 15 s after SIGTERM")
        XCTAssertEqual(server.terminationStatus, 0)
        let final = try String(contentsOfFile: events, encoding: .utf8).split(separator: "\n").map { try JSON.parse(String($0)) }
        XCTAssertEqual(Array(final.prefix(partial.count)), partial)
        XCTAssertEqual(final.last?.field("kind"), .string("runEnded"))
        XCTAssertFalse(FileManager.default.fileExists(atPath: events + ".partial"))
    }

    /// What the HTTP parser refuses is answered in ARM's error shape with its status.
    func testParserRefusalsAreAnsweredInARMsShape() throws {
        let folder = try temporaryFolder("serve-parser")
        let script = folder + "/web.lua"
        try Self.scenario.write(toFile: script, atomically: true, encoding: .utf8)
        let (server, port) = try serve([script, "--http", "--port", "0", "--step"])
        defer { server.terminate(); _ = exited(server, within: 10) }
        let cases: [(String, Int, String)] = [
            (#"FOO / HTTP/1.1\r\nHost: x\r\n\r\n"#, 501, "MethodNotSupported"),
            (#"GET / HTTP/1.1\r\nHost: x\r\nX-Bad: a\001b\r\n\r\n"#, 400, "InvalidRequestFormat"),
        ]
        for (request, status, code) in cases {
            let reply = try rawHTTP(port: port, request)
            XCTAssertTrue(reply.hasPrefix("HTTP/1.1 \(status) "), reply)
            guard let body = reply.range(of: "\r\n\r\n").map({ String(reply[$0.upperBound...]) }) else { XCTFail("no body: \(reply)"); continue }
            XCTAssertEqual(try JSON.parse(body).field("error")?.field("code"), .string(code))
        }
    }

    func testOutputsAreOpenedBeforeServing() throws {
        let folder = try temporaryFolder("serve-outputs")
        let script = folder + "/web.lua"
        try Self.scenario.write(toFile: script, atomically: true, encoding: .utf8)
        for option in ["--report", "--events", "--ca-cert"] {
            // A folder is refused at once, before anything listens: exit 2, naming the option.
            let output = try runRehearse(["serve", script, "--port", "0", option, folder])
            XCTAssertEqual(output.status, 2, option)
            XCTAssertTrue(output.stdout.isEmpty, "\(option): \(output.stdout)")
            var isFolder: ObjCBool = false
            XCTAssertTrue(FileManager.default.fileExists(atPath: folder, isDirectory: &isFolder) && isFolder.boolValue)
        }
    }
}
