import Foundation
import XCTest

/// `rehearse probe` against a real HTTP server on loopback (Python's http.server, from the
/// machine's Python), as the Application Health extension would probe it.
final class ProbeTests: XCTestCase {
    var server: Process?
    var port = 0

    /// Starts the fixture server (https when given a certificate and key) and returns its port.
    func startServer(_ extra: [String] = []) throws -> (Process, Int) {
        try startFixtureServer("health_server.py", extra)
    }

    override func setUpWithError() throws {
        (server, port) = try startServer()
    }

    override func tearDown() {
        server?.terminate()
        server?.waitUntilExit()
    }

    /// What `rehearse probe --json` reports, typed.
    struct Report: Decodable {
        var state: String
        var status: Int?
        var bodyBytes: Int
        var failure: String?
        var phase: Int?
        var warnings: [String]
    }

    func report(_ arguments: String...) throws -> (Int32, Report, Double) {
        let started = Date()
        let out = try runRehearse(["probe", "--json"] + arguments)
        let elapsed = Date().timeIntervalSince(started)
        return (out.status, try JSONDecoder().decode(Report.self, from: Data(out.stdout.utf8)), elapsed)
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
        let (status, r, _) = try report("--timeout", "1", "http://127.0.0.1:\(port)/slow")
        XCTAssertEqual(status, 1)
        XCTAssertEqual(r.state, "Unknown")
        XCTAssertNil(r.status)
        XCTAssertEqual(r.failure, "timed out: no complete answer within 1 s")
    }

    func testSlowlorisServerMeetsOneDeadlineForTheWholeAnswer() throws {
        // The server sends its head at once, then a byte every 0.2 s for a minute.
        let (status, r, elapsed) = try report("--timeout", "2", "http://127.0.0.1:\(port)/drip")
        XCTAssertEqual(status, 1)
        XCTAssertEqual(r.state, "Unknown")
        XCTAssertEqual(r.failure, "timed out: no complete answer within 2 s")
        XCTAssertLessThan(elapsed, 10)
    }

    func testGzipBombIsNeverInflated() throws {
        // 50 MB of JSON sent gzip-compressed whatever was asked: read raw, bounded, not JSON.
        let (status, r, _) = try report("http://127.0.0.1:\(port)/gzip")
        XCTAssertEqual(status, 1)
        XCTAssertEqual(r.status, 200)
        XCTAssertEqual(r.state, "Unknown")
        XCTAssertLessThanOrEqual(r.bodyBytes, 65_537)
        XCTAssertEqual(r.warnings, ["response body is not valid JSON (around line 1, column 1): health is Unknown"])
    }

    func testNoAcceptEncodingIsSent() throws {
        // The endpoint answers Healthy only when the request has no Accept-Encoding header.
        let (status, r, _) = try report("http://127.0.0.1:\(port)/echo-encoding")
        XCTAssertEqual(status, 0)
        XCTAssertEqual(r.state, "Healthy")
    }

    func testSelfSignedHttpsEndpointIsProbedWithoutVerification() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("rehearse-tls-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        guard let openssl = ["/usr/bin/openssl", "/usr/local/bin/openssl"].first(where: FileManager.default.isExecutableFile) else {
            throw XCTSkip("openssl is not on this machine: no self-signed certificate")
        }
        let make = Process()
        make.executableURL = URL(fileURLWithPath: openssl)
        make.arguments = ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=rehearse-test", "-days", "1",
                          "-keyout", dir + "/key.pem", "-out", dir + "/cert.pem"]
        make.standardError = FileHandle.nullDevice
        try make.run()
        make.waitUntilExit()
        XCTAssertEqual(make.terminationStatus, 0)
        let (tls, tlsPort) = try startServer([dir + "/cert.pem", dir + "/key.pem"])
        defer {
            tls.terminate()
            tls.waitUntilExit()
        }
        let (status, r, _) = try report("https://127.0.0.1:\(tlsPort)/healthy")
        XCTAssertEqual(status, 0, "\(r)")
        XCTAssertEqual(r.state, "Healthy")
        XCTAssertEqual(r.phase, 1)
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
