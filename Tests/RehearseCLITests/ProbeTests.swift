import Foundation
import XCTest

/// `rehearse probe` against a real HTTP server on loopback (Python's http.server, from the
/// machine's Python), as the Application Health extension would probe it.
final class ProbeTests: XCTestCase {
    var server: Process?
    var port = 0

    override func setUpWithError() throws {
        guard let python = ["/usr/bin/python3", "/usr/local/bin/python3"].first(where: FileManager.default.isExecutableFile)
            ?? ProcessInfo.processInfo.environment["PATH"]?.split(separator: ":").map({ "\($0)/python3" }).first(where: FileManager.default.isExecutableFile)
        else { throw XCTSkip("python3 is not on this machine: no local HTTP server for the probe tests") }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: python)
        process.arguments = [repositoryRoot + "/Tests/RehearseCLITests/Fixtures/health_server.py"]
        let out = Pipe()
        process.standardOutput = out
        try process.run()
        server = process
        var line = Data()
        while !line.contains(UInt8(ascii: "\n")) {
            let chunk = out.fileHandleForReading.availableData
            guard !chunk.isEmpty else { break }
            line += chunk
        }
        port = Int(String(decoding: line, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
        XCTAssertGreaterThan(port, 0)
    }

    override func tearDown() {
        server?.terminate()
        server?.waitUntilExit()
    }

    func probe(_ arguments: String...) throws -> CLIOutput {
        try runRehearse(["probe"] + arguments)
    }

    func testHealthyAnswerWithWireMetrics() throws {
        let out = try probe("http://127.0.0.1:\(port)/healthy")
        XCTAssertEqual(out.status, 0, out.stderr)
        XCTAssertTrue(out.stdout.contains("HTTP 200"), out.stdout)
        XCTAssertTrue(out.stdout.contains("state: Healthy\nphase: 1\nskipUpgrade: false"), out.stdout)
        XCTAssertEqual(out.stderr, "")
    }

    func testSeed002ObjectMetricsWarnAndStrictWireIsUnknown() throws {
        let lenient = try probe("http://127.0.0.1:\(port)/object")
        XCTAssertEqual(lenient.status, 0)
        XCTAssertTrue(lenient.stdout.contains("phase: 0"), lenient.stdout)
        XCTAssertTrue(lenient.stderr.contains("customMetrics sent as a JSON object"), lenient.stderr)
        let strict = try probe("--strict-wire", "http://127.0.0.1:\(port)/object")
        XCTAssertEqual(strict.status, 1)
        XCTAssertTrue(strict.stdout.contains("state: Unknown"), strict.stdout)
    }

    func testNon2xxRedirectsAndHugeBodiesAreUnknown() throws {
        for path in ["down", "redirect", "huge"] {
            let out = try probe("http://127.0.0.1:\(port)/\(path)")
            XCTAssertEqual(out.status, 1, path)
            XCTAssertTrue(out.stdout.contains("state: Unknown"), "\(path): \(out.stdout)")
        }
        XCTAssertTrue(try probe("http://127.0.0.1:\(port)/redirect").stdout.contains("HTTP 302"))
        XCTAssertTrue(try probe("http://127.0.0.1:\(port)/huge").stderr.contains("more than the 65536 allowed"))
        // Binary states: a 503 is Unhealthy, a 200 Healthy whatever the body says.
        XCTAssertTrue(try probe("--binary", "http://127.0.0.1:\(port)/down").stdout.contains("state: Unhealthy"))
    }

    func testTimeoutIsNoAnswer() throws {
        let out = try probe("--timeout", "1", "http://127.0.0.1:\(port)/slow")
        XCTAssertEqual(out.status, 1)
        XCTAssertTrue(out.stdout.contains("no answer (timed out)"), out.stdout)
        XCTAssertTrue(out.stdout.contains("state: Unknown"), out.stdout)
    }

    func testTcpProbe() throws {
        XCTAssertTrue(try probe("tcp://127.0.0.1:\(port)").stdout.contains("state: Healthy"))
        let closed = try probe("tcp://127.0.0.1:1")
        XCTAssertEqual(closed.status, 1)
        XCTAssertTrue(closed.stdout.contains("state: Unhealthy"), closed.stdout)
    }

    func testBadURLExitsTwo() throws {
        let out = try probe("ftp://example")
        XCTAssertEqual(out.status, 2)
        XCTAssertTrue(out.stderr.contains("allowed http, https, tcp"), out.stderr)
    }
}
