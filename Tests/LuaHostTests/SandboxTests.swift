import Formats
import Foundation
import LuaHost
import XCTest

final class SandboxTests: XCTestCase {
    func sandboxed(folders: [String] = [], printed: @escaping (String) -> Void = { _ in }, clock: @escaping () -> Double = { 0 }) throws -> LuaState {
        let state = try LuaState()
        try state.openSandbox(LuaSandboxOptions(moduleFolders: folders, seed: 7, print: printed, clock: clock, epoch: 1_700_000_000))
        return state
    }

    func testDangerousGlobalsAreAbsent() throws {
        let state = try sandboxed()
        let absent = try state.run("""
            return io, debug, package, dofile, loadfile, string.dump, os.execute, os.exit, os.remove,
                   os.rename, os.tmpname, os.getenv, warn, ("").dump
            """, chunkName: "probe.lua")
        XCTAssertEqual(absent.count, 14)
        XCTAssertTrue(absent.allSatisfy { $0 == .nil }, "\(absent)")
    }

    func testIoOpenFailsWithLocation() throws {
        let state = try sandboxed()
        XCTAssertThrowsError(try state.run("\nlocal f = io.open('/etc/passwd')", chunkName: "scripts/evil.lua")) { error in
            let e = error as! LuaError
            XCTAssertEqual(e.kind, .runtime)
            XCTAssertEqual(e.location, "scripts/evil.lua:2")
        }
        XCTAssertEqual(try state.run("return type(io), type(string)", chunkName: "scripts/evil.lua"), ["nil", "table"])
    }

    func testOsExecuteIsNotCallable() throws {
        let state = try sandboxed()
        XCTAssertThrowsError(try state.run("\n\nos.execute('touch /tmp/rehearse-pwned')", chunkName: "x.lua")) { error in
            XCTAssertEqual((error as? LuaError)?.kind, .runtime)
            XCTAssertEqual((error as? LuaError)?.location, "x.lua:3")
        }
        XCTAssertEqual(try state.run("return type(os.execute), type(os.time)", chunkName: "x.lua"), ["nil", "function"])
        XCTAssertFalse(FileManager.default.fileExists(atPath: "/tmp/rehearse-pwned"))
    }

    func testRequireRefusesPathsOutsideFolders() throws {
        let dir = try makeModules(["lib/util.lua": "return { answer = 42 }", "pkg/init.lua": "return 'pkg'"])
        let state = try sandboxed(folders: [dir])
        XCTAssertEqual(try state.run("return require('lib.util').answer, (require('pkg'))", chunkName: "r.lua"), [42, "pkg"])
        for name in ["../../etc/passwd", "/etc/passwd", "lib..util", "lib/util", ""] {
            XCTAssertThrowsError(try state.run("require(\"\(name)\")", chunkName: "r.lua")) { error in
                XCTAssertEqual((error as? LuaError)?.refusal, .module(name: name, .badName), "\(name): \(error)")
            }
        }
        XCTAssertThrowsError(try state.run("require('no.pe')", chunkName: "r.lua")) { error in
            let tried = ["no/pe.lua", "no/pe/init.lua"].map { dir + "/" + $0 }
            XCTAssertEqual((error as? LuaError)?.refusal, .module(name: "no.pe", .notFound(tried: tried)), "\(error)")
        }
        XCTAssertThrowsError(try sandboxed().run("require('lib.util')", chunkName: "r.lua")) { error in
            XCTAssertEqual((error as? LuaError)?.refusal, .module(name: "lib.util", .notFound(tried: [])), "\(error)")
        }
    }

    func testRequireRefusesSymlinkLeavingFolder() throws {
        let dir = try makeModules(["ok.lua": "return 1"])
        try FileManager.default.createSymbolicLink(atPath: dir + "/escape.lua", withDestinationPath: "/etc/hostname")
        let state = try sandboxed(folders: [dir])
        XCTAssertThrowsError(try state.run("require('escape')", chunkName: "r.lua")) { error in
            XCTAssertEqual((error as? LuaError)?.refusal, .file(BoundedFile.Refusal(path: dir + "/escape.lua", .leadsOutOfFolder(dir))), "\(error)")
        }
    }

    func testPrintGoesToHost() throws {
        var lines: [String] = []
        let state = try sandboxed(printed: { lines.append($0) })
        try state.run("print('a', 1, nil, true)", chunkName: "p.lua")
        XCTAssertEqual(lines, ["a\t1\tnil\ttrue"])
    }

    func testRandomIsSeededByHost() throws {
        let draw = "local t = {} for i = 1, 5 do t[i] = math.random(1, 1000) end return table.concat(t, ',')"
        let a = try sandboxed().run(draw, chunkName: "a.lua")
        let b = try sandboxed().run(draw, chunkName: "b.lua")
        XCTAssertEqual(a, b)
        let reseeded = try sandboxed().run("math.randomseed(99) local x = math.random(1000) math.randomseed(99) return x == math.random(1000)", chunkName: "s.lua")
        XCTAssertEqual(reseeded, [true])
        // Lua's own argument error, at the script's line.
        XCTAssertThrowsError(try sandboxed().run("\nreturn math.random(5, 1)", chunkName: "e.lua")) { error in
            XCTAssertEqual((error as? LuaError)?.kind, .runtime)
            XCTAssertEqual((error as? LuaError)?.location, "e.lua:2")
        }
        XCTAssertEqual(try sandboxed().run("return pcall(math.random, 5, 1)", chunkName: "e.lua").first, false)
    }

    func testClocksAreVirtual() throws {
        var now = 12.5
        let state = try sandboxed(clock: { now })
        XCTAssertEqual(try state.run("return os.time(), os.clock()", chunkName: "c.lua"), [.integer(1_700_000_012), 12.5])
        now = 70
        XCTAssertEqual(try state.run("return os.time()", chunkName: "c.lua"), [.integer(1_700_000_070)])
    }

    func testFinalizersAreRefused() throws {
        let state = try sandboxed()
        XCTAssertThrowsError(try state.run("setmetatable({}, { __gc = function() while true do end end })", chunkName: "g.lua")) { error in
            XCTAssertEqual((error as? LuaError)?.refusal, .sandbox(.finalizers), "\(error)")
        }
        XCTAssertThrowsError(try state.run("collectgarbage('stop')", chunkName: "g.lua"))
    }

    func makeModules(_ files: [String: String]) throws -> String {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("rehearse-modules-\(UUID().uuidString)").path
        for (path, text) in files {
            let full = dir + "/" + path
            try FileManager.default.createDirectory(atPath: (full as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            try text.write(toFile: full, atomically: true, encoding: .utf8)
        }
        return dir
    }
}
