import Foundation
import XCTest

/// `serve --ca-cert FILE` keeps its CA: the first start writes the certificate and its key (mode
/// 600) beside it, a later start reads them back, so a client configured with the first start's
/// CA bundle verifies the second server (it got CERTIFICATE_VERIFY_FAILED when every start made a
/// new CA).
final class ServeCACLITests: XCTestCase {
    /// Python's TLS client (as the SDK and az use it) fetching the metadata endpoint with `bundle`
    /// as its only CA: its exit status (0: verified and answered).
    func verifiedFetch(port: Int, bundle: String) throws -> Int32 {
        let client = Process()
        client.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        client.arguments = ["python3", "-c", """
            import ssl, sys, urllib.request
            context = ssl.create_default_context(cafile=sys.argv[1])
            urllib.request.urlopen("https://127.0.0.1:" + sys.argv[2] + "/metadata/endpoints?api-version=2022-09-01", context=context, timeout=10).read()
            """, bundle, String(port)]
        client.standardError = FileHandle.nullDevice
        try client.run()
        client.waitUntilExit()
        return client.terminationStatus
    }

    func testTheCAIsKeptAcrossStartsAndItsKeyIsPrivate() throws {
        let folder = try newTemporaryFolder()
        let script = folder + "/s.lua"
        try #"scaleset { name = "web", capacity = 2, model = { image = "v1" }, upgradePolicy = { mode = "Manual" } }"#
            .write(toFile: script, atomically: true, encoding: .utf8)
        let ca = folder + "/ca.pem", key = ca + ".key"
        var bundles: [Data] = []
        for start in 1...2 {
            let (server, port) = try startServe([script, "--port", "0", "--step", "--ca-cert", ca])
            defer { server.terminate(); server.waitUntilExit() }
            XCTAssertGreaterThan(port, 0)
            if start == 1 { try FileManager.default.copyItem(atPath: ca, toPath: folder + "/first.pem") }
            XCTAssertEqual(try verifiedFetch(port: port, bundle: folder + "/first.pem"), 0, "start \(start) verified with the first start's CA")
            bundles.append(try Data(contentsOf: URL(fileURLWithPath: ca)))
        }
        XCTAssertEqual(bundles[0], bundles[1], "the same CA, byte for byte")
        let mode = try XCTUnwrap(FileManager.default.attributesOfItem(atPath: key)[.posixPermissions] as? Int)
        XCTAssertEqual(mode & 0o777, 0o600)
        // A key others can read, or one that is not the certificate's, is refused (exit 2).
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: key)
        let open = try runRehearse(["serve", script, "--port", "0", "--ca-cert", ca])
        XCTAssertEqual(open.status, 2)
        XCTAssertTrue(open.stderr.contains("chmod 600"), open.stderr)
    }
}
