import Foundation
import XCTest

/// The lock is a promise the bundle commands keep: `update` (and a plain `install NAME`) never
/// move a bundle below its locked version, a locked version republished with other bytes is
/// refused and the lock never rewritten, `install --locked` puts exactly the lock in place or
/// fails, `outdated` exits 1 when something is outdated, and a plain-HTTP repository is warned
/// about. Each test was an attack that today's code let through (exit 0).
final class BundleLockTests: XCTestCase {
    var work = ""
    var server: Process?
    var repo: String { work + "/repo" }
    var project: String { work + "/project" }
    var lockPath: String { project + "/rehearse.lock" }

    override func setUpWithError() throws {
        work = FileManager.default.temporaryDirectory.appendingPathComponent("bundle-lock-\(UUID().uuidString)").path
        for folder in ["repo", "project", "src"] { try FileManager.default.createDirectory(atPath: work + "/" + folder, withIntermediateDirectories: true) }
    }

    override func tearDown() {
        server?.terminate()
        server?.waitUntilExit()
        try? FileManager.default.removeItem(atPath: work)
    }

    func rehearse(_ arguments: String...) throws -> CLIOutput { try runRehearse(arguments) }

    /// Packs bundle `name` (drift) at `version` into the repository and indexes it; `note`
    /// changes the entry module's bytes (a republished version), `api` the host API range it asks
    /// for, `dependencies` the bundles it needs (name: range).
    func publish(_ version: String, name: String = "drift", note: String = "", api: String = "^1.1", dependencies: String = "{}") throws {
        let folder = work + "/src/\(name)-\(version)-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let manifest = #"{"name": "\#(name)", "version": "\#(version)", "api": "\#(api)", "description": "A bundle that moves.", "#
            + #""exports": {"answer": "answer: a number"}, "dependencies": \#(dependencies)}"#
        try manifest.write(toFile: folder + "/rehearse-plugin.json", atomically: true, encoding: .utf8)
        try "-- \(name) \(version)\(note)\nreturn { answer = 1 }\n".write(toFile: folder + "/init.lua", atomically: true, encoding: .utf8)
        let packed = try rehearse("plugins", "pack", folder, "--into", repo)
        XCTAssertEqual(packed.status, 0, packed.stderr)
        XCTAssertEqual(try rehearse("plugins", "index", repo).status, 0)
    }

    /// Takes `version` out of the repository (its archive deleted, the index written again).
    func withdraw(_ version: String) throws {
        try FileManager.default.removeItem(atPath: repo + "/drift-\(version).tar")
        XCTAssertEqual(try rehearse("plugins", "index", repo).status, 0)
    }

    func lockBytes() throws -> Data { try Data(contentsOf: URL(fileURLWithPath: lockPath)) }

    func lockedEntry(from bytes: Data? = nil) throws -> [String: Any] {
        let lock = try XCTUnwrap(JSONSerialization.jsonObject(with: bytes ?? lockBytes()) as? [String: Any])
        return try XCTUnwrap((lock["bundles"] as? [[String: Any]])?.first)
    }

    func exists(_ relative: String) -> Bool { FileManager.default.fileExists(atPath: project + "/" + relative) }

    /// drift 1.0.0 installed plainly (range ^1.0.0), then updated to 1.1.0: the lock's state
    /// before each attack.
    func lockAtOneOne() throws {
        try publish("1.0.0")
        XCTAssertEqual(try rehearse("plugins", "install", "drift", "--repo", repo, "--project", project).status, 0)
        try publish("1.1.0")
        let updated = try rehearse("plugins", "update", "--project", project)
        XCTAssertEqual(updated.status, 0, updated.stderr)
        XCTAssertEqual(try lockedEntry()["version"] as? String, "1.1.0")
        XCTAssertEqual(try lockedEntry()["range"] as? String, "^1.0.0")
    }

    /// The index stops listing 1.1.0: update used to install 1.0.0 and delete plugins/drift-1.1.0
    /// (exit 0). Now exit 2 naming the bundle, the locked version and what the index offers,
    /// with the lock byte for byte as it was and no folder touched; a plain `install NAME` too.
    /// Asked for by a range, going back is still possible.
    func testUpdateNeverMovesBelowTheLock() throws {
        try lockAtOneOne()
        try withdraw("1.1.0")
        let before = try lockBytes()
        for arguments in [["update", "--project", project], ["update", "drift", "--project", project, "--json"],
                          ["install", "drift", "--repo", repo, "--project", project]] {
            let out = try runRehearse(["plugins"] + arguments)
            XCTAssertEqual(out.status, 2, "\(arguments): \(out.stdout) \(out.stderr)")
            XCTAssertTrue(out.stderr.contains("drift is locked at 1.1.0"), out.stderr)
            XCTAssertTrue(out.stderr.contains("no longer lists 1.1.0; the newest it offers inside ^1.0.0 is 1.0.0 (it lists 1.0.0)"), out.stderr)
            XCTAssertEqual(try lockBytes(), before)
            XCTAssertTrue(exists("plugins/drift-1.1.0/init.lua"))
            XCTAssertFalse(exists("plugins/drift-1.0.0"))
        }
        let back = try rehearse("plugins", "install", "drift@1.0.0", "--repo", repo, "--project", project)
        XCTAssertEqual(back.status, 0, back.stderr)
        XCTAssertEqual(try lockedEntry()["version"] as? String, "1.0.0")
    }

    /// 1.1.0 republished with other bytes, in a fresh checkout (the lock kept, plugins/ not):
    /// install took it ("unchanged"), rewrote the lock's sha256, and verify passed. Now install,
    /// update and install --locked refuse it, naming both digests, and the lock stays.
    func testARepublishedVersionIsRefusedAndTheLockKept() throws {
        try lockAtOneOne()
        let lockedSHA = try XCTUnwrap(try lockedEntry()["sha256"] as? String)
        try publish("1.1.0", note: " (republished)")
        let republished = try sha256sum(repo + "/drift-1.1.0.tar")
        XCTAssertNotEqual(republished, lockedSHA)
        try FileManager.default.removeItem(atPath: project + "/plugins")
        let before = try lockBytes()
        for arguments in [["install", "drift", "--repo", repo], ["update"], ["install", "--locked"]] {
            let out = try runRehearse(["plugins"] + arguments + ["--project", project])
            XCTAssertEqual(out.status, 2, "\(arguments): \(out.stdout) \(out.stderr)")
            XCTAssertTrue(out.stderr.contains("drift 1.1.0 changed in the repository: \(lockPath) records sha256 \(lockedSHA), "
                                              + "the repository now has \(republished)"), out.stderr)
            XCTAssertEqual(try lockBytes(), before)
            XCTAssertFalse(exists("plugins"), "\(arguments)")
        }
    }

    /// A fresh checkout: `install --locked` puts exactly the locked 1.0.0 in place although the
    /// repository offers 1.1.0, writes no lock (its bytes and time unchanged), and a second run
    /// finds it in place; `verify` passes after it.
    func testInstallLockedInstallsExactlyTheLock() throws {
        try publish("1.0.0")
        XCTAssertEqual(try rehearse("plugins", "install", "drift@1.0.0", "--repo", repo, "--project", project).status, 0)
        try publish("1.1.0")
        let locked = try lockedEntry()
        try FileManager.default.removeItem(atPath: project + "/plugins")
        let before = try lockBytes()
        let modified = try FileManager.default.attributesOfItem(atPath: lockPath)[.modificationDate] as? Date
        let out = try rehearse("plugins", "install", "--locked", "--project", project, "--json")
        XCTAssertEqual(out.status, 0, out.stderr)
        let report = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(out.stdout.utf8)) as? [String: Any])
        XCTAssertEqual(report["lockWritten"] as? Bool, false)
        let change = try XCTUnwrap((report["changes"] as? [[String: Any]])?.first)
        XCTAssertEqual(change["to"] as? String, "1.0.0")
        XCTAssertTrue(change["from"] is NSNull)
        XCTAssertEqual(try lockBytes(), before)
        XCTAssertEqual(try FileManager.default.attributesOfItem(atPath: lockPath)[.modificationDate] as? Date, modified)
        XCTAssertTrue(exists("plugins/drift-1.0.0/init.lua"))
        XCTAssertFalse(exists("plugins/drift-1.1.0"))
        XCTAssertEqual(try sha256sum(project + "/plugins/drift-1.0.0/init.lua"), (locked["files"] as? [String: String])?["init.lua"])
        XCTAssertEqual(try rehearse("plugins", "verify", "--project", project).status, 0)
        let again = try rehearse("plugins", "install", "--locked", "--project", project)
        XCTAssertEqual(again.status, 0, again.stderr)
        XCTAssertTrue(again.stdout.contains("drift 1.0.0 already in place in plugins/drift-1.0.0"), again.stdout)
    }

    /// What install --locked refuses, each with exit 2 and nothing written: no lock, a bundle
    /// named beside --locked, a locked version the repository no longer lists, a folder that
    /// differs from the lock.
    func testInstallLockedFailsWhenAnythingWouldDiffer() throws {
        let missing = try rehearse("plugins", "install", "--locked", "--project", project)
        XCTAssertEqual(missing.status, 2, missing.stderr)
        XCTAssertTrue(missing.stderr.contains("\(lockPath) does not exist"), missing.stderr)
        XCTAssertFalse(exists("rehearse.lock"))
        XCTAssertFalse(exists("plugins"))

        try publish("1.0.0")
        try publish("1.1.0")
        XCTAssertEqual(try rehearse("plugins", "install", "drift@1.0.0", "--repo", repo, "--project", project).status, 0)
        let before = try lockBytes()
        let named = try rehearse("plugins", "install", "--locked", "drift", "--project", project)
        XCTAssertEqual(named.status, 2, named.stderr)
        XCTAssertTrue(named.stderr.contains("--locked"), named.stderr)

        try FileManager.default.removeItem(atPath: project + "/plugins")
        try withdraw("1.0.0")
        let delisted = try rehearse("plugins", "install", "--locked", "--project", project)
        XCTAssertEqual(delisted.status, 2, delisted.stderr)
        XCTAssertTrue(delisted.stderr.contains("drift 1.0.0 is locked in \(lockPath), but \(repo)/rehearse-index.json does not list that version (it lists 1.1.0)"),
                      delisted.stderr)
        XCTAssertFalse(exists("plugins"))

        try publish("1.0.0")
        XCTAssertEqual(try rehearse("plugins", "install", "--locked", "--project", project).status, 0)
        try "return { answer = 2 }\n".write(toFile: project + "/plugins/drift-1.0.0/init.lua", atomically: true, encoding: .utf8)
        let edited = try rehearse("plugins", "install", "--locked", "--project", project)
        XCTAssertEqual(edited.status, 2, edited.stderr)
        XCTAssertTrue(edited.stderr.contains("plugins/drift-1.0.0 differs from \(lockPath) (plugins/drift-1.0.0/init.lua changed"), edited.stderr)
        XCTAssertEqual(try lockBytes(), before)
    }

    /// A lock edited by hand: a bundle locked twice (which entry won depended on the reader), a
    /// folder that is the project itself or hidden, a digest that is no SHA-256. Each is refused
    /// by every reader, naming the entry; verify passed the first two before.
    func testAHandEditedLockIsRefusedNamingTheEntry() throws {
        try publish("1.0.0")
        XCTAssertEqual(try rehearse("plugins", "install", "drift", "--repo", repo, "--project", project).status, 0)
        let original = try lockBytes()
        let cases: [(String, ([String: Any]) -> [[String: Any]], String)] = [
            ("twice", { [$0, $0] }, "bundles[1] locks drift a second time"),
            ("project", { var e = $0; e["folder"] = ""; return [e] }, "bundles[0].folder \"\" must be a path inside the project"),
            ("hidden", { var e = $0; e["folder"] = "plugins/.drift"; return [e] }, "bundles[0].folder \"plugins/.drift\" must be a path inside the project"),
            ("digest", { var e = $0; e["sha256"] = "ABC"; return [e] }, "bundles[0].sha256 \"ABC\" is not a SHA-256"),
        ]
        for (name, edit, message) in cases {
            var lock = try XCTUnwrap(JSONSerialization.jsonObject(with: original) as? [String: Any])
            lock["bundles"] = edit(try lockedEntry(from: original))
            try JSONSerialization.data(withJSONObject: lock).write(to: URL(fileURLWithPath: lockPath))
            for command in ["verify", "install"] {
                let out = command == "verify" ? try rehearse("plugins", "verify", "--project", project)
                    : try rehearse("plugins", "install", "--locked", "--project", project)
                XCTAssertEqual(out.status, 2, "\(name) \(command): \(out.stderr)")
                XCTAssertTrue(out.stderr.contains(message), "\(name) \(command): \(out.stderr)")
            }
        }
    }

    /// A lock whose bundles do not meet each other's dependencies (base's entry deleted by
    /// hand): install --locked refuses it before writing anything, naming both bundles.
    func testInstallLockedRefusesALockMissingADependency() throws {
        try publish("1.0.0", name: "base")
        try publish("1.0.0", name: "app", dependencies: #"{"base": "^1.0"}"#)
        XCTAssertEqual(try rehearse("plugins", "install", "app", "--repo", repo, "--project", project).status, 0)
        var lock = try XCTUnwrap(JSONSerialization.jsonObject(with: lockBytes()) as? [String: Any])
        let entries = try XCTUnwrap(lock["bundles"] as? [[String: Any]])
        XCTAssertEqual(entries.compactMap { $0["name"] as? String }, ["app", "base"])
        lock["bundles"] = entries.filter { $0["name"] as? String == "app" }
        try JSONSerialization.data(withJSONObject: lock).write(to: URL(fileURLWithPath: lockPath))
        try FileManager.default.removeItem(atPath: project + "/plugins")
        let out = try rehearse("plugins", "install", "--locked", "--project", project)
        XCTAssertEqual(out.status, 2, out.stderr)
        XCTAssertTrue(out.stderr.contains("app 1.0.0 depends on base ^1.0, but \(lockPath) does not lock base"), out.stderr)
        XCTAssertFalse(exists("plugins"))
    }

    /// `outdated` exits 1 when a repository lists a newer version this host accepts (inside or
    /// outside the range), 0 when all are current or the only newer one needs another host API,
    /// 2 without a lock.
    func testOutdatedExitStatusIsOneWhenSomethingIsOutdated() throws {
        XCTAssertEqual(try rehearse("plugins", "outdated", "--project", project).status, 2)
        try publish("1.0.0")
        XCTAssertEqual(try rehearse("plugins", "install", "drift", "--repo", repo, "--project", project).status, 0)
        let current = try rehearse("plugins", "outdated", "--project", project)
        XCTAssertEqual(current.status, 0, current.stderr)
        try publish("3.0.0", api: "^9.0")
        let incompatible = try rehearse("plugins", "outdated", "--project", project, "--json")
        XCTAssertEqual(incompatible.status, 0, incompatible.stdout)
        try publish("2.0.0")
        let outside = try rehearse("plugins", "outdated", "--project", project, "--json")
        XCTAssertEqual(outside.status, 1, outside.stderr)
        let bundle = try XCTUnwrap(((JSONSerialization.jsonObject(with: Data(outside.stdout.utf8)) as? [String: Any])?["bundles"] as? [[String: Any]])?.first)
        XCTAssertEqual(bundle["outsideRange"] as? [String], ["3.0.0", "2.0.0"])
        XCTAssertEqual(bundle["incompatible"] as? [String], ["3.0.0"])
        XCTAssertEqual(bundle["outdated"] as? Bool, true)
        try publish("1.0.1")
        let inside = try rehearse("plugins", "outdated", "--project", project)
        XCTAssertEqual(inside.status, 1, inside.stderr)
        XCTAssertTrue(inside.stdout.contains("drift 1.0.0 (range ^1.0.0): newer inside the range 1.0.1; outside it 3.0.0, 2.0.0"), inside.stdout)
    }

    /// A plain-HTTP repository on 127.0.0.1 still installs, with a warning naming its URL and
    /// that only the lock's sha256 checks it: on stderr, and under "warnings" in --json. A
    /// folder repository gets none.
    func testAPlainHTTPRepositoryIsWarnedAbout() throws {
        try publish("1.0.0")
        let (process, port) = try startFixtureServer("static_server.py", [repo])
        server = process
        let base = "http://127.0.0.1:\(port)"
        let warning = "\(base) is a plain http:// repository: what it serves can be changed on the way, and only the sha256 recorded in rehearse.lock checks it"
        let text = try rehearse("plugins", "install", "drift", "--repo", base, "--project", project)
        XCTAssertEqual(text.status, 0, text.stderr)
        XCTAssertTrue(text.stderr.contains(warning), text.stderr)
        try publish("1.0.1")
        for command in ["outdated", "update"] {
            let out = try rehearse("plugins", command, "--project", project, "--json")
            XCTAssertEqual(out.status, command == "outdated" ? 1 : 0, out.stderr)
            XCTAssertTrue(out.stderr.contains(warning), out.stderr)
            let warnings = (try JSONSerialization.jsonObject(with: Data(out.stdout.utf8)) as? [String: Any])?["warnings"] as? [String]
            XCTAssertEqual(warnings?.count, 1, command)
            XCTAssertTrue(warnings?.first?.hasPrefix(warning) == true, "\(warnings ?? [])")
        }
        let local = try rehearse("plugins", "install", "drift", "--repo", repo, "--project", work + "/other", "--json")
        XCTAssertEqual(local.status, 0, local.stderr)
        XCTAssertFalse(local.stderr.contains("plain http"), local.stderr)
        XCTAssertEqual((try JSONSerialization.jsonObject(with: Data(local.stdout.utf8)) as? [String: Any])?["warnings"] as? [String], [])
    }
}
