import Foundation
import XCTest

/// A second team's round trip with the real binary: pack two versions of a bundle, index them,
/// serve the folder over HTTP on 127.0.0.1, install a range into a fresh project, run a
/// scenario that requires it, then tamper with one byte and watch `verify` and `run` refuse.
final class BundleRoundTripTests: XCTestCase {
    var work = ""
    var server: Process?

    override func setUpWithError() throws {
        work = FileManager.default.temporaryDirectory.appendingPathComponent("roundtrip-\(UUID().uuidString)").path
        for folder in ["repo", "project", "src"] {
            try FileManager.default.createDirectory(atPath: work + "/" + folder, withIntermediateDirectories: true)
        }
    }

    override func tearDown() {
        server?.terminate()
        server?.waitUntilExit()
        try? FileManager.default.removeItem(atPath: work)
    }

    /// Serves `folder` over HTTP; returns its base URL.
    func serve(_ folder: String) throws -> String {
        let (process, port) = try startFixtureServer("static_server.py", [folder])
        server = process
        return "http://127.0.0.1:\(port)"
    }

    func rehearse(_ arguments: String..., in folder: String = repositoryRoot) throws -> CLIOutput {
        try runRehearse(arguments, in: folder)
    }

    /// slow-boot 2.0.0: the same code, for a host API this rehearse does not have.
    func makeSlowBootTwo() throws -> String {
        let folder = work + "/src/slow-boot"
        try FileManager.default.copyItem(atPath: repositoryRoot + "/plugins/slow-boot", toPath: folder)
        let manifestPath = folder + "/rehearse-plugin.json"
        let manifest = try String(contentsOfFile: manifestPath, encoding: .utf8)
            .replacingOccurrences(of: "\"1.2.0\"", with: "\"2.0.0\"").replacingOccurrences(of: "\"^1.1\"", with: "\"^2.0\"")
        try manifest.write(toFile: manifestPath, atomically: true, encoding: .utf8)
        return folder
    }

    func sha(_ output: CLIOutput) -> String { String(output.stdout.split(separator: " ").first ?? "") }

    func testPackIndexServeInstallRunTamperVerify() throws {
        let repo = work + "/repo", project = work + "/project"
        // Pack: the same bundle gives the same bytes, whatever the files' times.
        let first = try rehearse("plugins", "pack", "plugins/slow-boot", "--into", repo)
        XCTAssertEqual(first.status, 0, first.stderr)
        try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSince1970: 1_000_000)],
                                              ofItemAtPath: repositoryRoot + "/plugins/slow-boot/init.lua")
        let second = try rehearse("plugins", "pack", "plugins/slow-boot", "--into", repo)
        XCTAssertEqual(sha(first), sha(second))
        XCTAssertEqual(sha(first).count, 64)
        let listing = Process()
        listing.executableURL = URL(fileURLWithPath: "/usr/bin/tar")
        listing.arguments = ["-tf", repo + "/slow-boot-1.2.0.tar"]
        let names = Pipe()
        listing.standardOutput = names
        try listing.run()
        listing.waitUntilExit()
        XCTAssertEqual(String(decoding: names.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self).split(separator: "\n"),
                       ["slow-boot-1.2.0/example.lua", "slow-boot-1.2.0/init.lua", "slow-boot-1.2.0/rehearse-plugin.json"])
        XCTAssertEqual(try rehearse("plugins", "pack", try makeSlowBootTwo(), "--into", repo).status, 0)

        let base = try serve(repo)
        let index = try rehearse("plugins", "index", repo, "--url", base)
        XCTAssertEqual(index.status, 0, index.stderr)
        let doc = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: repo + "/rehearse-index.json"))) as! [String: Any]
        let versions = (doc["bundles"] as! [String: Any])["slow-boot"] as! [[String: Any]]
        XCTAssertEqual(versions.map { $0["version"] as! String }, ["2.0.0", "1.2.0"])
        XCTAssertEqual(versions.map { $0["api"] as! String }, ["^2.0", "^1.1"])
        XCTAssertEqual(versions[1]["sha256"] as? String, sha(first))
        XCTAssertEqual(versions[1]["url"] as? String, base + "/slow-boot-1.2.0.tar")

        // ^2 cannot be installed here: 2.0.0 needs host API 2.
        let refused = try rehearse("plugins", "install", "slow-boot@^2", "--repo", base, "--project", project)
        XCTAssertEqual(refused.status, 2)
        XCTAssertTrue(refused.stderr.contains("slow-boot 2.0.0 (\(base)/slow-boot-2.0.0.tar): needs host API ^2.0"), refused.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: project + "/rehearse.lock"))

        let install = try rehearse("plugins", "install", "slow-boot@^1", "--repo", base, "--project", project)
        XCTAssertEqual(install.status, 0, install.stderr)
        let lock = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: project + "/rehearse.lock"))) as! [String: Any]
        let locked = (lock["bundles"] as! [[String: Any]])[0]
        XCTAssertEqual(locked["name"] as? String, "slow-boot")
        XCTAssertEqual(locked["version"] as? String, "1.2.0")
        XCTAssertEqual(locked["sha256"] as? String, sha(first))
        XCTAssertEqual(locked["folder"] as? String, "plugins/slow-boot-1.2.0")
        XCTAssertEqual(locked["source"] as? String, base + "/slow-boot-1.2.0.tar")
        XCTAssertTrue((locked["contentHash"] as? String ?? "").hasPrefix("sha256:"))

        // A scenario of the project requires it: ./plugins and ./rehearse.lock are the project's.
        try FileManager.default.copyItem(atPath: repositoryRoot + "/plugins/slow-boot/example.lua", toPath: project + "/scenario.lua")
        let run = try rehearse("run", "--json", "scenario.lua", in: project)
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertEqual(try rehearse("plugins", "verify", in: project).status, 0)

        // One byte changed.
        let tampered = project + "/plugins/slow-boot-1.2.0/init.lua"
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: tampered)))
        bytes[bytes.count / 2] ^= 0x01
        try Data(bytes).write(to: URL(fileURLWithPath: tampered))
        let verify = try rehearse("plugins", "verify", in: project)
        XCTAssertEqual(verify.status, 1)
        XCTAssertTrue(verify.stderr.contains("plugins/slow-boot-1.2.0/init.lua changed"), verify.stderr)
        let rerun = try rehearse("run", "scenario.lua", in: project)
        XCTAssertEqual(rerun.status, 2)
        XCTAssertTrue(rerun.stderr.contains("init.lua changed"), rerun.stderr)
        XCTAssertTrue(rerun.stderr.contains("bundle slow-boot 1.2.0 differs from rehearse.lock"), rerun.stderr)
        // rehearse's own sentence, with both hashes in full: the lock's and the file's now.
        let lockedHash = try XCTUnwrap((locked["files"] as? [String: String])?["init.lua"])
        XCTAssertTrue(rerun.stderr.contains("(locked sha256 \(lockedHash), now \(try sha256sum(tampered)))"), rerun.stderr)
        XCTAssertFalse(rerun.stderr.contains("bad argument"), rerun.stderr)
    }

    func testInstallRefusesAnArchiveWhoseDigestDiffersFromTheIndex() throws {
        let repo = work + "/repo"
        XCTAssertEqual(try rehearse("plugins", "pack", "plugins/zone-outage-drill", "--into", repo).status, 0)
        XCTAssertEqual(try rehearse("plugins", "index", repo).status, 0)
        // Swapped after indexing: the repository now serves other bytes.
        let archive = repo + "/zone-outage-drill-0.3.0.tar"
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: archive)))
        bytes[600] ^= 0x20
        try Data(bytes).write(to: URL(fileURLWithPath: archive))
        let out = try rehearse("plugins", "install", "zone-outage-drill", "--repo", repo, "--project", work + "/project")
        XCTAssertEqual(out.status, 2)
        XCTAssertTrue(out.stderr.contains("does not match the index's"), out.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: work + "/project/plugins/zone-outage-drill-0.3.0"))
    }

    /// A repository folder given relative to where install runs is recorded absolute in the
    /// lock, so the lock means the same thing read from the project or anywhere else.
    func testLockRecordsAFolderRepositoryAbsolute() throws {
        let repo = work + "/relrepo"
        try FileManager.default.createDirectory(atPath: repo, withIntermediateDirectories: true)
        XCTAssertEqual(try rehearse("plugins", "pack", "plugins/zone-outage-drill", "--into", repo).status, 0)
        XCTAssertEqual(try rehearse("plugins", "index", repo).status, 0)
        let out = try rehearse("plugins", "install", "zone-outage-drill", "--repo", "relrepo", "--project", "project", in: work)
        XCTAssertEqual(out.status, 0, out.stderr)
        let lock = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: work + "/project/rehearse.lock"))) as! [String: Any]
        let source = (lock["bundles"] as! [[String: Any]])[0]["source"] as? String
        let expected = URL(fileURLWithPath: work + "/relrepo/zone-outage-drill-0.3.0.tar").standardizedFileURL.resolvingSymlinksInPath().path
        XCTAssertEqual(source.map { URL(fileURLWithPath: $0).resolvingSymlinksInPath().path }, expected)
        XCTAssertTrue(source?.hasPrefix("/") == true)
    }

    func testHostileArchivesAreRefusedWithTheReason() throws {
        let cases = [("dotdot", "'.' or '..' are refused"), ("absolute", "absolute paths"), ("symlink", "links are refused"),
                     ("huge", "over the 4194304 allowed for one file")]
        for (kind, reason) in cases {
            let repo = work + "/repo-\(kind)"
            try FileManager.default.createDirectory(atPath: repo, withIntermediateDirectories: true)
            let maker = Process()
            maker.executableURL = URL(fileURLWithPath: try python3())
            maker.arguments = [repositoryRoot + "/Tests/RehearseCLITests/Fixtures/hostile_tar.py", kind, repo + "/evil-1.0.0.tar"]
            try maker.run()
            maker.waitUntilExit()
            let out = try rehearse("plugins", "index", repo)
            XCTAssertEqual(out.status, 2, kind)
            XCTAssertTrue(out.stderr.contains(reason), "\(kind): \(out.stderr)")
        }
    }

    /// Files and folders under plugins/, hidden ones (staging folders) included.
    func pluginsEntries(_ project: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: project + "/plugins")) ?? []).sorted()
    }

    /// Install is all or nothing: two bundles of which the second's archive differs from the
    /// index leave neither installed, no staging folder and no lock.
    func testFailedInstallLeavesThePluginsFolderAndTheLockAsTheyWere() throws {
        let repo = work + "/repo-two", project = work + "/project-two"
        try FileManager.default.createDirectory(atPath: repo, withIntermediateDirectories: true)
        for bundle in ["primary-replica", "zone-outage-drill"] {
            XCTAssertEqual(try rehearse("plugins", "pack", "plugins/" + bundle, "--into", repo).status, 0)
        }
        XCTAssertEqual(try rehearse("plugins", "index", repo).status, 0)
        let archive = repo + "/zone-outage-drill-0.3.0.tar"
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: archive)))
        bytes[600] ^= 0x20
        try Data(bytes).write(to: URL(fileURLWithPath: archive))
        let out = try rehearse("plugins", "install", "primary-replica", "zone-outage-drill", "--repo", repo, "--project", project)
        XCTAssertEqual(out.status, 2)
        XCTAssertTrue(out.stderr.contains("nothing was installed"), out.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: project + "/plugins"), "\(pluginsEntries(project))")
        XCTAssertFalse(FileManager.default.fileExists(atPath: project + "/rehearse.lock"))
    }

    /// An archive holding both `x` and `x/y` cannot be unpacked: refused, with no staging
    /// folder left behind.
    func testArchiveWithAFileAndAFolderOfOneNameLeavesNothingBehind() throws {
        let repo = work + "/repo-clash", project = work + "/project-clash"
        try FileManager.default.createDirectory(atPath: repo, withIntermediateDirectories: true)
        let maker = Process()
        maker.executableURL = URL(fileURLWithPath: try python3())
        maker.arguments = [repositoryRoot + "/Tests/RehearseCLITests/Fixtures/hostile_tar.py", "fileanddir", repo + "/evil-1.0.0.tar"]
        try maker.run()
        maker.waitUntilExit()
        let index = try rehearse("plugins", "index", repo)
        if index.status == 0 {
            let out = try rehearse("plugins", "install", "evil", "--repo", repo, "--project", project)
            XCTAssertEqual(out.status, 2, out.stderr)
            XCTAssertTrue(out.stderr.contains("nothing was installed"), out.stderr)
        } else {
            XCTAssertEqual(index.status, 2, index.stderr)
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: project + "/plugins"), "\(pluginsEntries(project))")
        XCTAssertFalse(FileManager.default.fileExists(atPath: project + "/rehearse.lock"))
    }
}
