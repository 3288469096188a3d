import Foundation
@testable import Reports
@testable import Scenario
import XCTest

/// The files the executable carries inside itself (`.ci/embed-resources`) are byte for byte the
/// files in the tree, and every one of them is carried: a Lua module or a template changed
/// without running the script fails here.
final class EmbeddedResourcesTests: XCTestCase {
    let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// Every file under `folder` ending in `suffix`, by its path inside the folder.
    func files(_ folder: String, _ suffix: String) throws -> [String: String] {
        let base = root.appendingPathComponent(folder)
        var found: [String: String] = [:]
        let walker = try XCTUnwrap(FileManager.default.enumerator(atPath: base.path))
        while let path = walker.nextObject() as? String {
            guard path.hasSuffix(suffix) else { continue }
            found[String(path.dropLast(suffix.count))] = try String(contentsOf: base.appendingPathComponent(path), encoding: .utf8)
        }
        return found
    }

    func testEveryBuiltinLuaModuleIsCarriedByteForByte() throws {
        let onDisk = try files("Sources/Scenario/Lua", ".lua")
        XCTAssertFalse(onDisk.isEmpty)
        let byName = Dictionary(uniqueKeysWithValues: onDisk.map { ($0.key.replacingOccurrences(of: "/", with: "."), $0.value) })
        XCTAssertEqual(Set(BuiltinLibrary.modules.keys), Set(byName.keys), "run .ci/embed-resources")
        for (name, text) in byName.sorted(by: { $0.key < $1.key }) {
            XCTAssertEqual(BuiltinLibrary.modules[name]?.utf8.count, text.utf8.count, "\(name): run .ci/embed-resources")
            XCTAssertTrue(BuiltinLibrary.modules[name] == text, "\(name) differs from its file: run .ci/embed-resources")
        }
        XCTAssertTrue(BuiltinLibrary.modules.keys.contains("rehearse.faults"))
    }

    func testEveryPageTemplateIsCarriedByteForByte() throws {
        let onDisk = try files("Sources/Reports/Templates", ".mustache")
        XCTAssertEqual(Set(EmbeddedTemplates.templates.keys), Set(onDisk.keys), "run .ci/embed-resources")
        XCTAssertEqual(Set(onDisk.keys), ["report", "sweep"])
        for (name, text) in onDisk.sorted(by: { $0.key < $1.key }) {
            XCTAssertTrue(EmbeddedTemplates.templates[name] == text, "\(name).mustache differs from its file: run .ci/embed-resources")
        }
    }
}
