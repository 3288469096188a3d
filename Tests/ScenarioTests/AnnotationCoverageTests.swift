import Foundation
@testable import Scenario
import UpgradeEngine
import XCTest

/// The editor annotations a scenario author reads (`scripts/types/`, LuaLS/EmmyLua style) cover
/// what the host really accepts: every global function a script sees, every field `scaleset`,
/// `health_model`, `risk`, `expect` and a hook answer read, and every function `rehearse.faults`
/// exports. Read from the checked-in files, not from the description that writes them, so an
/// annotation missing for a registered function or an accepted field fails here. (No Lua language
/// server installs from Debian or PyPI here; this comparison is the check.)
final class AnnotationCoverageTests: XCTestCase {
    /// The `---@field` names of `---@class name` in `file` (a `?` or a trailing comment dropped).
    func fields(of name: String, in file: String) throws -> Set<String> {
        let text = try String(contentsOfFile: repositoryRoot + "/" + file, encoding: .utf8)
        var inside = false
        var found: Set<String> = []
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("---@class ") { inside = line.dropFirst("---@class ".count).split(separator: " ").first == Substring(name); continue }
            guard inside else { continue }
            guard line.hasPrefix("---@field ") else { inside = false; continue }
            let field = line.dropFirst("---@field ".count).prefix { $0 != " " }
            if !field.hasPrefix("[") { found.insert(String(field.hasSuffix("?") ? field.dropLast() : field)) }
        }
        return found
    }

    /// What a script's `print` prints when the scenario runs `body` after a plain scale set.
    func printed(_ body: String) throws -> [String] {
        var lines: [String] = []
        let path = try writeScenario(baseScaleSet + "\n" + body)
        _ = try load(path: path, options: options(printed: { lines.append($0) }))
        return lines
    }

    func testEveryGlobalFunctionAScriptSeesIsAnnotated() throws {
        let seen = Set(try printed("""
            local names = {}
            for name, value in pairs(_G) do if type(value) == "function" then names[#names + 1] = name end end
            table.sort(names)
            print(table.concat(names, " "))
            """).first?.split(separator: " ").map(String.init) ?? [])
        let standard: Set<String> = ["assert", "collectgarbage", "error", "getmetatable", "ipairs", "load", "next", "pairs", "pcall",
                                     "print", "rawequal", "rawget", "rawlen", "rawset", "require", "select", "setmetatable",
                                     "tonumber", "tostring", "type", "xpcall"]
        let text = try String(contentsOfFile: repositoryRoot + "/scripts/types/rehearse.lua", encoding: .utf8)
        let annotated = Set(text.split(separator: "\n").compactMap { line -> String? in
            guard line.hasPrefix("function ") else { return nil }
            return String(line.dropFirst("function ".count).prefix { $0 != "(" })
        })
        XCTAssertFalse(seen.isEmpty)
        XCTAssertEqual(seen.subtracting(standard).subtracting(annotated).sorted(), [], "registered but not annotated")
        XCTAssertEqual(annotated.subtracting(seen).sorted(), [], "annotated but not registered")
        // The editor knows them as globals too (scripts/.luarc.json).
        let luarc = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: repositoryRoot + "/scripts/.luarc.json")))
            as? [String: Any])
        XCTAssertEqual(Set(luarc["diagnostics.globals"] as? [String] ?? []), seen.subtracting(standard))
    }

    func testTheScaleSetAnnotationHasEveryFieldTheReaderAccepts() throws {
        XCTAssertEqual(try fields(of: "rehearse.ScaleSet", in: "scripts/types/rehearse.lua"), Set(DefinitionReader.knownKeys))
    }

    func testTheHealthModelAnnotationsHaveEveryFieldTheReaderAccepts() throws {
        let behaviour = Set(HealthModelReader.behaviourFields)
        XCTAssertEqual(try fields(of: "rehearse.HealthBehaviour", in: "scripts/types/rehearse.lua"), behaviour)
        XCTAssertEqual(try fields(of: "rehearse.HealthModel", in: "scripts/types/rehearse.lua"), behaviour.union(["versions"]))
    }

    func testTheExpectationAndRiskAnnotationsHaveEveryKey() throws {
        XCTAssertEqual(try fields(of: "rehearse.Expectations", in: "scripts/types/rehearse.lua"), Set(Expectation.Key.allCases.map(\.rawValue)))
        let text = try String(contentsOfFile: repositoryRoot + "/scripts/types/rehearse.lua", encoding: .utf8)
        let param = try XCTUnwrap(text.split(separator: "\n").first { $0.hasPrefix("---@param requirements {") })
        let keys = Set(param.drop { $0 != "{" }.dropFirst().prefix { $0 != "}" }.split(separator: ",").map {
            String($0.trimmingCharacters(in: .whitespaces).prefix { $0 != ":" && $0 != "?" })
        })
        XCTAssertEqual(keys, RiskReader.keys)
    }

    func testTheHookAnswerAnnotationHasEveryFieldAnAnswerMayGive() throws {
        XCTAssertEqual(try fields(of: "rehearse.HookAnswer", in: "scripts/types/rehearse.lua"), ["approve", "reject", "wait_until", "after", "event"])
    }

    func testTheFaultsModuleAnnotationHasEveryExport() throws {
        let exports = Set(try printed("""
            local names = {}
            for name in pairs(require "rehearse.faults") do names[#names + 1] = name end
            table.sort(names)
            print(table.concat(names, " "))
            """).first?.split(separator: " ").map(String.init) ?? [])
        XCTAssertTrue(exports.contains("boot_failures"))
        XCTAssertEqual(try fields(of: "rehearse.Faults", in: "scripts/types/rehearse/faults.lua"), exports)
    }
}
