import Foundation
import XCTest
#if canImport(FoundationXML)
import FoundationXML
#endif

/// Every output file (`--report`, `--junit`, `--runs`, `--events`, the plugin lock) is opened
/// one way: a regular file is replaced whole, a device, a FIFO or `-` is written into, a
/// symbolic link is followed, a folder is exit 2, a failed run leaves an existing file as it was.
/// Only /dev/null and /dev/full are written as real devices.
extension HostileOutputTests {
    /// Each output option, with the command that writes it.
    var writers: [(option: String, arguments: [String])] { [
        ("--report", ["run", "scripts/ten-at-twenty.lua"]),
        ("--events", ["run", "scripts/ten-at-twenty.lua"]),
        ("--junit", ["test", "scripts/ten-at-twenty.lua"]),
        ("--runs", ["sweep", "scripts/ten-at-twenty.lua", "--seeds", "0..1"]),
        ("--report", ["sweep", "scripts/ten-at-twenty.lua", "--seeds", "0..1"]),
    ] }

    func fileType(_ path: String) -> mode_t? {
        var info = stat()
        return lstat(path, &info) == 0 ? info.st_mode & S_IFMT : nil
    }

    func testDevFullIsExitTwoAndStaysACharacterDevice() throws {
        for (option, arguments) in writers {
            let out = try runRehearse(arguments + [option, "/dev/full"])
            XCTAssertEqual(out.status, 2, "\(arguments) \(option): \(out.stderr)")
            XCTAssertTrue(out.stderr.contains(option), out.stderr)
            XCTAssertEqual(fileType("/dev/full"), S_IFCHR, "\(option) replaced /dev/full")
        }
        XCTAssertEqual(try runRehearse(["run", "scripts/ten-at-twenty.lua", "--report", "/dev/null"]).status, 0)
        XCTAssertEqual(fileType("/dev/null"), S_IFCHR)
    }

    func testAFolderIsExitTwoAndStaysAFolder() throws {
        for (option, arguments) in writers {
            let out = try runRehearse(arguments + [option, work])
            XCTAssertEqual(out.status, 2, "\(arguments) \(option): \(out.stderr)")
            XCTAssertTrue(out.stderr.contains(option), out.stderr)
            XCTAssertEqual(fileType(work), S_IFDIR)
        }
    }

    /// A FIFO whose reader is this test (its buffer made large enough for the whole file).
    func withFIFO(_ body: (String) throws -> Void) throws -> [UInt8] {
        let fifo = work + "/fifo-\(UUID().uuidString)"
        XCTAssertEqual(mkfifo(fifo, 0o600), 0)
        let reader = open(fifo, O_RDWR | O_NONBLOCK)
        XCTAssertGreaterThanOrEqual(reader, 0)
        defer { close(reader) }
        _ = fcntl(reader, 1031, 1 << 20)  // F_SETPIPE_SZ (Linux), which Glibc does not export to Swift
        try body(fifo)
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = read(reader, &buffer, buffer.count)
            guard n > 0 else { break }
            bytes += buffer[..<n]
        }
        XCTAssertEqual(fileType(fifo), S_IFIFO, "the FIFO is still a FIFO")
        return bytes
    }

    func testAFIFOWithAReaderGetsTheBytes() throws {
        let xml = try withFIFO { fifo in
            let out = try runRehearse(["test", "scripts/ten-at-twenty.lua", "--junit", fifo])
            XCTAssertEqual(out.status, 0, out.stderr)
        }
        XCTAssertFalse(xml.isEmpty, "nothing came through the FIFO")
        guard !xml.isEmpty else { return }
        let parsed = try XMLDocument(data: Data(xml))
        XCTAssertEqual(try parsed.nodes(forXPath: "/testsuites/testsuite").count, 1)
        let page = try withFIFO { fifo in
            let out = try runRehearse(["run", "scripts/ten-at-twenty.lua", "--report", fifo])
            XCTAssertEqual(out.status, 0, out.stderr)
        }
        XCTAssertTrue(String(decoding: page, as: UTF8.self).hasSuffix("</html>\n") || String(decoding: page, as: UTF8.self).hasSuffix("</html>"))
    }

    func testASymbolicLinkIsFollowedAndStaysALink() throws {
        for (index, (option, arguments)) in writers.enumerated() {
            let target = work + "/target-\(index)", link = work + "/link-\(index)"
            try "old".write(toFile: target, atomically: true, encoding: .utf8)
            // A relative link: resolved from the link's folder, not from where rehearse runs.
            try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: "target-\(index)")
            let out = try runRehearse(arguments + [option, link])
            XCTAssertEqual(out.status, 0, "\(arguments) \(option): \(out.stderr)")
            XCTAssertEqual(fileType(link), S_IFLNK, "\(option) replaced the link")
            XCTAssertEqual(try FileManager.default.destinationOfSymbolicLink(atPath: link), "target-\(index)")
            let written = try String(contentsOfFile: target, encoding: .utf8)
            XCTAssertNotEqual(written, "old", "\(option) did not write the link's target")
            XCTAssertGreaterThan(written.count, 100)
        }
        // A dangling link: its target is created.
        try FileManager.default.createSymbolicLink(atPath: work + "/dangling", withDestinationPath: work + "/created.xml")
        XCTAssertEqual(try runRehearse(["test", "scripts/ten-at-twenty.lua", "--junit", work + "/dangling"]).status, 0)
        XCTAssertEqual(fileType(work + "/dangling"), S_IFLNK)
        XCTAssertEqual(fileType(work + "/created.xml"), S_IFREG)
    }

    /// A run that fails (a script error in the run, exit 2) leaves the events file and the
    /// report as they were: they used to be truncated when the run started.
    func testAFailedRunLeavesExistingFilesAsTheyWere() throws {
        let scenario = work + "/fails.lua"
        try """
            scaleset { name = "web", capacity = 2, upgradePolicy = { mode = "Rolling" },
                       healthExtension = { protocol = "http", port = 80, requestPath = "/" } }
            at("PT1M", function() error("boom") end)
            """.write(toFile: scenario, atomically: true, encoding: .utf8)
        try "old events\n".write(toFile: work + "/events.jsonl", atomically: true, encoding: .utf8)
        try "old page\n".write(toFile: work + "/page.html", atomically: true, encoding: .utf8)
        let out = try runRehearse(["run", scenario, "--events", work + "/events.jsonl", "--report", work + "/page.html"])
        XCTAssertEqual(out.status, 2, out.stderr)
        XCTAssertEqual(try String(contentsOfFile: work + "/events.jsonl", encoding: .utf8), "old events\n")
        XCTAssertEqual(try String(contentsOfFile: work + "/page.html", encoding: .utf8), "old page\n")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: work).sorted(), ["events.jsonl", "fails.lua", "page.html"], "no temporary file left")
    }

    /// A regular file is replaced, not rewritten in place: a reader that opened it before the run
    /// still reads the old bytes; its permissions stay.
    func testARegularFileIsReplacedWhole() throws {
        let path = work + "/junit.xml"
        try "old".write(toFile: path, atomically: true, encoding: .utf8)
        XCTAssertEqual(chmod(path, 0o600), 0)
        let before = try FileHandle(forReadingFrom: URL(fileURLWithPath: path))
        XCTAssertEqual(try runRehearse(["test", "scripts/ten-at-twenty.lua", "--junit", path]).status, 0)
        XCTAssertEqual(String(decoding: before.readDataToEndOfFile(), as: UTF8.self), "old")
        XCTAssertEqual(try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int, 0o600)
        XCTAssertEqual(try XMLDocument(contentsOf: URL(fileURLWithPath: path)).nodes(forXPath: "/testsuites/testsuite").count, 1)
    }

    func testDashIsStandardOutput() throws {
        let out = try runRehearse(["test", "scripts/ten-at-twenty.lua", "--output", "json", "--junit", "-"])
        XCTAssertEqual(out.status, 0, out.stderr)
        XCTAssertNotNil(out.stdout.range(of: "<testsuites"))
        XCTAssertFalse(FileManager.default.fileExists(atPath: repositoryRoot + "/-"))
    }

    /// `/dev/stdout` redirected to a file is the process's own standard output: the events and
    /// the JSON after them follow each other, neither written over the other.
    func testDevStdoutRedirectedToAFileSharesStandardOutput() throws {
        XCTAssertEqual(try runShell("'\(rehearseBinary)' run --json --events /dev/stdout scripts/ten-at-twenty.lua > '\(work)/out.txt'"), 0)
        let text = try String(contentsOfFile: work + "/out.txt", encoding: .utf8)
        let events = text.split(separator: "\n").prefix { $0.hasPrefix("{\"") }
        XCTAssertGreaterThan(events.count, 10)
        XCTAssertEqual(try events.map { try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }.last??["kind"] as? String, "runEnded")
        let status = text.split(separator: "\n").dropFirst(events.count).joined(separator: "\n")
        let json = try JSONSerialization.jsonObject(with: Data(status.utf8)) as? [String: Any]
        XCTAssertNotNil(json?["runningStatus"], status)
    }

    /// The plugin lock is written the same way: a lock that is a link stays one.
    func testThePluginLockFollowsALink() throws {
        let repo = work + "/repo", project = work + "/project"
        for folder in [repo, project, work + "/shared"] { try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true) }
        XCTAssertEqual(try runRehearse(["plugins", "pack", "plugins/zone-outage-drill", "--into", repo]).status, 0)
        XCTAssertEqual(try runRehearse(["plugins", "index", repo]).status, 0)
        try FileManager.default.createSymbolicLink(atPath: project + "/rehearse.lock", withDestinationPath: work + "/shared/rehearse.lock")
        let out = try runRehearse(["plugins", "install", "zone-outage-drill", "--repo", repo, "--project", project])
        XCTAssertEqual(out.status, 0, out.stderr)
        XCTAssertEqual(fileType(project + "/rehearse.lock"), S_IFLNK)
        let lock = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: work + "/shared/rehearse.lock"))) as! [String: Any]
        XCTAssertEqual((lock["bundles"] as? [[String: Any]])?.first?["name"] as? String, "zone-outage-drill")
        XCTAssertEqual(try runRehearse(["plugins", "verify", "--project", project]).status, 0)
    }
}
