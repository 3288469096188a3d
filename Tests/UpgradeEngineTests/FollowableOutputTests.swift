import Formats
import Foundation
import XCTest

/// serve's `--events` file grows at `PATH.partial` while the run goes on, and replaces PATH only
/// when the run ends well: a reader can follow it, and a failed run leaves PATH as it was.
final class FollowableOutputTests: XCTestCase {
    var folder = ""

    override func setUpWithError() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("rehearse-follow-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws { try? FileManager.default.removeItem(atPath: folder) }

    func contents(_ path: String) -> String? { FileManager.default.contents(atPath: path).map { String(decoding: $0, as: UTF8.self) } }

    func testEachLineIsInThePartialFileAtOnceAndTheCommitReplacesTheOldFile() throws {
        let path = folder + "/events.jsonl"
        try "old\n".write(toFile: path, atomically: false, encoding: .utf8)
        let file = try OutputFile(path: path, role: "the events file", followable: true)
        file.writeLine(#"{"time":0}"#)
        XCTAssertEqual(contents(path + ".partial"), "{\"time\":0}\n")
        file.writeLine(#"{"time":5000}"#)
        XCTAssertEqual(contents(path + ".partial"), "{\"time\":0}\n{\"time\":5000}\n")
        XCTAssertEqual(contents(path), "old\n")
        try file.commit()
        XCTAssertEqual(contents(path), "{\"time\":0}\n{\"time\":5000}\n")
        XCTAssertNil(contents(path + ".partial"))
    }

    func testARunThatNeverCommitsLeavesTheOldFileAndNoPartialFile() throws {
        let path = folder + "/events.jsonl"
        try "old\n".write(toFile: path, atomically: false, encoding: .utf8)
        do {
            let file = try OutputFile(path: path, role: "the events file", followable: true)
            file.writeLine("new")
        }
        XCTAssertEqual(contents(path), "old\n")
        XCTAssertNil(contents(path + ".partial"))
    }

    func testAStalePartialFileIsReplacedAndALinkAtThatNameIsRefused() throws {
        let path = folder + "/events.jsonl"
        try "left by a killed server\n".write(toFile: path + ".partial", atomically: false, encoding: .utf8)
        let file = try OutputFile(path: path, role: "the events file", followable: true)
        file.writeLine("a")
        XCTAssertEqual(contents(path + ".partial"), "a\n")
        try file.commit()
        XCTAssertEqual(contents(path), "a\n")
        // A link at the partial name is never written through: its target keeps its bytes.
        let other = folder + "/other"
        try "keep\n".write(toFile: other, atomically: false, encoding: .utf8)
        try FileManager.default.createSymbolicLink(atPath: path + ".partial", withDestinationPath: other)
        XCTAssertThrowsError(try OutputFile(path: path, role: "the events file", followable: true)) { error in
            XCTAssertEqual((error as? OutputFileError)?.path, path)
        }
        XCTAssertEqual(contents(other), "keep\n")
        XCTAssertEqual(contents(path), "a\n")
    }
}
