import Foundation
import Plugins
import Scenario
import XCTest

/// The scripting API is described once (`ScriptingAPI`): the checked-in editor and lint files
/// are what the generator writes, and scripts see exactly the described functions.
final class ScriptingAPITests: XCTestCase {
    func testCheckedInFilesAreWhatTheGeneratorWrites() throws {
        let bundles = PluginCatalog(searchPath: [repositoryRoot + "/plugins"]).bundles.map(\.manifest)
        let files = try ScriptingAPI.generatedFiles(bundles: bundles)
        XCTAssertEqual(files.keys.sorted(), [".luacheckrc", "scripts/.luarc.json", "scripts/types/alarm-rollback.lua", "scripts/types/batch-approval.lua", "scripts/types/primary-replica.lua",
                                             "scripts/types/rehearse.lua", "scripts/types/rehearse/faults.lua",
                                             "scripts/types/slow-boot.lua", "scripts/types/zone-outage-drill.lua"])
        for (path, text) in files {
            let onDisk = try String(contentsOfFile: repositoryRoot + "/" + path, encoding: .utf8)
            XCTAssertEqual(onDisk, text, "\(path) differs from what `rehearse api generate` writes; run it and commit the result")
        }
    }

    func testScriptsSeeExactlyTheDescribedFunctionsBesideTheSandbox() throws {
        var printed: [String] = []
        let path = try writeScenario(baseScaleSet + """

            local names = {}
            for name, value in pairs(_G) do
              if type(value) == "function" then names[#names + 1] = name end
            end
            table.sort(names)
            print(table.concat(names, " "))
            """)
        _ = try load(path: path, options: options(printed: { printed.append($0) }))
        let seen = Set(printed.first?.split(separator: " ").map(String.init) ?? [])
        let standard: Set<String> = ["assert", "collectgarbage", "error", "getmetatable", "ipairs", "load", "next", "pairs", "pcall",
                                     "print", "rawequal", "rawget", "rawlen", "rawset", "require", "select", "setmetatable",
                                     "tonumber", "tostring", "type", "xpcall"]
        XCTAssertEqual(seen.subtracting(standard), Set(ScriptingAPI.functions.map(\.name)))
    }

    func testTheLuacheckStandardHasNoBlockedFunction() throws {
        let files = try ScriptingAPI.generatedFiles(bundles: [])
        let rc = try XCTUnwrap(files[".luacheckrc"])
        let osFields = try XCTUnwrap(rc.split(separator: "\n").first { $0.contains("os = { fields") })
        XCTAssertEqual(osFields.trimmingCharacters(in: .whitespaces), #"os = { fields = { "clock", "difftime", "time" } },"#)
        for blocked in ["\"io\"", "\"warn\"", "\"dofile\"", "\"loadfile\"", "\"dump\"", "\"getenv\"", "debug", "package"] {
            XCTAssertFalse(rc.contains(blocked), blocked)
        }
    }
}
