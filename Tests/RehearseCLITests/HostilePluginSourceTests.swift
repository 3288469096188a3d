import Foundation
import XCTest

/// A hostile bundle repository: an index that names a local file (an absolute path, `file://`,
/// `..` out of a folder repository) must not make `plugins install` read it, nor print a digest
/// of it; an archive holding a hidden file is refused at install, so that install and `verify`
/// agree on which files a bundle has.
final class HostilePluginSourceTests: XCTestCase {
    var work = ""
    var server: Process?

    override func setUpWithError() throws {
        work = FileManager.default.temporaryDirectory.appendingPathComponent("hostile-source-\(UUID().uuidString)").path
        for folder in ["repo", "project"] { try FileManager.default.createDirectory(atPath: work + "/" + folder, withIntermediateDirectories: true) }
        // A file outside the repository standing in for /etc/shadow: its digest must never be printed.
        try "root:secret-hash:19000:0:99999:7:::\n".write(toFile: work + "/shadow", atomically: true, encoding: .utf8)
    }

    override func tearDown() {
        server?.terminate()
        server?.waitUntilExit()
        try? FileManager.default.removeItem(atPath: work)
    }

    func rehearse(_ arguments: String...) throws -> CLIOutput { try runRehearse(arguments) }

    /// SHA-256 of a file, hex, through the machine's sha256sum.
    func sha256(_ path: String) throws -> String { try sha256sum(path) }

    /// A repository holding zone-outage-drill 0.3.0, its index's archive URL replaced by `url`.
    func repository(archiveURL url: String) throws -> String {
        let repo = work + "/repo"
        XCTAssertEqual(try rehearse("plugins", "pack", "plugins/zone-outage-drill", "--into", repo).status, 0)
        XCTAssertEqual(try rehearse("plugins", "index", repo).status, 0)
        let indexPath = repo + "/rehearse-index.json"
        var index = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: indexPath))) as! [String: Any]
        var bundles = index["bundles"] as! [String: Any]
        var versions = bundles["zone-outage-drill"] as! [[String: Any]]
        versions[0]["url"] = url
        bundles["zone-outage-drill"] = versions
        index["bundles"] = bundles
        try JSONSerialization.data(withJSONObject: index).write(to: URL(fileURLWithPath: indexPath))
        return repo
    }

    func serve(_ folder: String) throws -> String {
        let (process, port) = try startFixtureServer("static_server.py", [folder])
        server = process
        return "http://127.0.0.1:\(port)"
    }

    /// Nothing was read from the local file: exit 2, its digest nowhere, nothing installed.
    func assertRefused(_ out: CLIOutput, naming url: String, file: StaticString = #filePath, line: UInt = #line) throws {
        XCTAssertEqual(out.status, 2, out.stderr, file: file, line: line)
        XCTAssertFalse(out.stderr.contains(try sha256(work + "/shadow")), "the local file was read: \(out.stderr)", file: file, line: line)
        XCTAssertFalse(out.stdout.contains(try sha256(work + "/shadow")), file: file, line: line)
        XCTAssertTrue(out.stderr.contains(url), out.stderr, file: file, line: line)
        XCTAssertFalse(FileManager.default.fileExists(atPath: work + "/project/rehearse.lock"), file: file, line: line)
        XCTAssertFalse(FileManager.default.fileExists(atPath: work + "/project/plugins"), file: file, line: line)
    }

    func testARemoteIndexNamingALocalAbsolutePathIsRefused() throws {
        let repo = try repository(archiveURL: work + "/shadow")
        let base = try serve(repo)
        try assertRefused(try rehearse("plugins", "install", "zone-outage-drill", "--repo", base, "--project", work + "/project"), naming: work + "/shadow")
    }

    func testARemoteIndexNamingAFileURLIsRefused() throws {
        let repo = try repository(archiveURL: "file://" + work + "/shadow")
        let base = try serve(repo)
        try assertRefused(try rehearse("plugins", "install", "zone-outage-drill", "--repo", base, "--project", work + "/project"), naming: "file://")
    }

    func testAFolderRepositoryIndexCannotLeaveTheFolder() throws {
        for url in ["../shadow", "./../shadow", "sub/../../shadow", work + "/shadow"] {
            let repo = try repository(archiveURL: url)
            try assertRefused(try rehearse("plugins", "install", "zone-outage-drill", "--repo", repo, "--project", work + "/project"), naming: url)
        }
    }

    /// A symbolic link in the repository folder leading out of it is not followed either.
    func testAFolderRepositoryLinkLeadingOutIsNotFollowed() throws {
        let repo = try repository(archiveURL: "escape.tar")
        try FileManager.default.createSymbolicLink(atPath: repo + "/escape.tar", withDestinationPath: work + "/shadow")
        try assertRefused(try rehearse("plugins", "install", "zone-outage-drill", "--repo", repo, "--project", work + "/project"), naming: "escape.tar")
    }

    func testARepositoryOfAnotherSchemeIsRefused() throws {
        let out = try rehearse("plugins", "install", "zone-outage-drill", "--repo", "ftp://127.0.0.1/repo", "--project", work + "/project")
        XCTAssertEqual(out.status, 2)
        XCTAssertTrue(out.stderr.contains("--repo ftp://127.0.0.1/repo"), out.stderr)
    }

    /// `index --url` takes what install accepts: a local path or a file URL would make an index
    /// no install reads.
    func testIndexRefusesABaseThatIsNotHTTP() throws {
        XCTAssertEqual(try rehearse("plugins", "pack", "plugins/zone-outage-drill", "--into", work + "/repo").status, 0)
        for base in ["/srv/repo", "file:///srv/repo", "ftp://host/repo"] {
            let out = try rehearse("plugins", "index", work + "/repo", "--url", base)
            XCTAssertEqual(out.status, 2, base)
            XCTAssertTrue(out.stderr.contains("--url \(base)"), out.stderr)
            XCTAssertFalse(FileManager.default.fileExists(atPath: work + "/repo/rehearse-index.json"))
        }
    }

    /// The plain cases still install: a relative name in a folder repository and over HTTP.
    func testRelativeArchiveNamesStillInstall() throws {
        let repo = try repository(archiveURL: "zone-outage-drill-0.3.0.tar")
        let local = try rehearse("plugins", "install", "zone-outage-drill", "--repo", repo, "--project", work + "/project")
        XCTAssertEqual(local.status, 0, local.stderr)
        let base = try serve(repo)
        let remote = try rehearse("plugins", "install", "zone-outage-drill", "--repo", base, "--project", work + "/project-web")
        XCTAssertEqual(remote.status, 0, remote.stderr)
        let lock = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: work + "/project-web/rehearse.lock"))) as! [String: Any]
        XCTAssertEqual((lock["bundles"] as! [[String: Any]])[0]["source"] as? String, base + "/zone-outage-drill-0.3.0.tar")
        XCTAssertEqual(try runRehearse(["plugins", "verify", "--project", work + "/project-web"]).status, 0)
    }

    /// An archive holding a hidden file used to install (exit 0), then `verify` called the file
    /// missing: it is refused at install, naming it, and nothing is installed.
    func testAnArchiveHoldingAHiddenFileIsRefusedAtInstall() throws {
        let repo = work + "/repo"
        let maker = Process()
        maker.executableURL = URL(fileURLWithPath: try python3())
        maker.arguments = [repositoryRoot + "/Tests/RehearseCLITests/Fixtures/hostile_tar.py", "hidden", repo + "/evil-1.0.0.tar"]
        try maker.run()
        maker.waitUntilExit()
        // Written by hand: `plugins index` refuses the archive too.
        let index: [String: Any] = ["indexVersion": 1, "bundles": ["evil": [[
            "name": "evil", "version": "1.0.0", "api": "^1", "description": "x", "exports": [String: String](),
            "url": "evil-1.0.0.tar", "sha256": try sha256(repo + "/evil-1.0.0.tar"),
        ]]]]
        try JSONSerialization.data(withJSONObject: index).write(to: URL(fileURLWithPath: repo + "/rehearse-index.json"))
        let install = try rehearse("plugins", "install", "evil", "--repo", repo, "--project", work + "/project")
        XCTAssertEqual(install.status, 2, install.stderr)
        XCTAssertTrue(install.stderr.contains(".hidden.lua"), install.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: work + "/project/plugins/evil-1.0.0"))
        XCTAssertFalse(FileManager.default.fileExists(atPath: work + "/project/rehearse.lock"))
        let indexed = try rehearse("plugins", "index", repo)
        XCTAssertEqual(indexed.status, 2)
        XCTAssertTrue(indexed.stderr.contains(".hidden.lua"), indexed.stderr)
    }
}
