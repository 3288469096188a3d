import LuaHost
import XCTest

final class LuaStateTests: XCTestCase {
    func sandboxed(_ limits: LuaLimits = LuaLimits(), folders: [String] = [], printed: ((String) -> Void)? = nil) throws -> LuaState {
        let state = try LuaState(limits: limits)
        try state.openSandbox(LuaSandboxOptions(moduleFolders: folders, seed: 42, print: printed ?? { _ in }))
        return state
    }

    func testValuesRoundTripThroughLua() throws {
        let state = try sandboxed()
        let echo = try state.load("return ...", chunkName: "echo.lua")
        let values: [LuaValue] = [.nil, true, 42, 2.5, "héllo", .array([1, "two"]), .table(["a": 1, "b": .table(["c": false])])]
        XCTAssertEqual(try state.call(echo, values), values)
    }

    func testReadsSingleFieldsOfAResultTable() throws {
        let state = try sandboxed()
        try state.run("""
            function health(id, t)
              return { applicationHealthState = (t % 97 == 0) and "Unhealthy" or "Healthy",
                       customMetrics = { rollingUpgrade = { PhaseOrderingNumber = id % 3, SkipUpgrade = false } } }
            end
            """, chunkName: "health.lua")
        let health = try XCTUnwrap(state.globalFunction("health"))
        let read = try state.call(health, arguments: { $0.push(5); $0.push(97); return 2 }) { stack in
            let t = try XCTUnwrap(stack.table(at: -1))
            return (t.string("applicationHealthState"),
                    t.table("customMetrics") { m in m.table("rollingUpgrade") { $0.integer("PhaseOrderingNumber") } },
                    t.type("missing"))
        }
        XCTAssertEqual(read.0, "Unhealthy")
        XCTAssertEqual(read.1, 2)
        XCTAssertEqual(read.2, .nil)
    }

    func testSyntaxErrorNamesFileAndLine() throws {
        let state = try sandboxed()
        XCTAssertThrowsError(try state.load("local x = 1\nx = = 2\n", chunkName: "scripts/bad.lua")) { error in
            let e = error as! LuaError
            XCTAssertEqual(e.kind, .syntax)
            XCTAssertEqual(e.location, "scripts/bad.lua:2")
        }
    }

    func testRuntimeErrorHasLocationAndTraceback() throws {
        let state = try sandboxed()
        try state.run("function f()\n  local t = nil\n  return t.x\nend", chunkName: "scripts/x.lua")
        let f = try XCTUnwrap(state.globalFunction("f"))
        XCTAssertThrowsError(try state.call(f, [])) { error in
            let e = error as! LuaError
            XCTAssertEqual(e.kind, .runtime)
            XCTAssertEqual(e.location, "scripts/x.lua:3")
            XCTAssertEqual(e.function, "f")
            XCTAssertTrue(e.traceback?.contains("scripts/x.lua:3") ?? false)
            // The function, where, then what.
            XCTAssertTrue(e.description.hasPrefix("f: scripts/x.lua:3: " + e.message), e.description)
        }
    }

    func testTableAndNilErrorValuesStillReadable() throws {
        let state = try sandboxed()
        XCTAssertThrowsError(try state.run("error({ code = 1 })", chunkName: "t.lua")) { error in
            XCTAssertEqual((error as! LuaError).message, "(error object is a table value)")
        }
        XCTAssertThrowsError(try state.run("error(nil)", chunkName: "n.lua")) { error in
            XCTAssertEqual((error as! LuaError).message, "(error object is a nil value)")
        }
        XCTAssertThrowsError(try state.run("error(setmetatable({}, { __tostring = function() return 'custom' end }))", chunkName: "m.lua")) { error in
            XCTAssertEqual((error as! LuaError).message, "custom")
        }
        // A message holding a NUL byte keeps what follows it, with its location and traceback.
        XCTAssertThrowsError(try state.run("\nerror('abc\\0def')", chunkName: "z.lua")) { error in
            let e = error as! LuaError
            XCTAssertEqual(e.message, "abc\u{0}def")
            XCTAssertEqual(e.location, "z.lua:2")
            XCTAssertTrue(e.traceback?.contains("z.lua:2") ?? false)
        }
    }

    func testSwiftFunctionErrorBecomesLuaErrorWithArgumentName() throws {
        let state = try sandboxed()
        state.register("scale") { args in [.integer(try args.integer(1) * 2)] }
        XCTAssertEqual(try state.run("return scale(21)", chunkName: "ok.lua"), [42])
        XCTAssertThrowsError(try state.run("\nreturn scale('ten')", chunkName: "scripts/s.lua")) { error in
            let e = error as! LuaError
            XCTAssertEqual(e.location, "scripts/s.lua:2")
            XCTAssertEqual(e.message, "bad argument #1 to 'scale' (integer expected, got string)")
        }
        // The error can be caught by the script and the state goes on.
        XCTAssertEqual(try state.run("local ok, m = pcall(scale, {}) return ok, m", chunkName: "p.lua"),
                       [false, "bad argument #1 to 'scale' (integer expected, got table)"])
        state.register("fails") { _ in throw LuaError(kind: .runtime, message: "refused: no such instance 12") }
        XCTAssertThrowsError(try state.run("fails()", chunkName: "f.lua")) { error in
            XCTAssertEqual((error as! LuaError).message, "refused: no such instance 12")
        }
    }

    func testRefusesPrecompiledChunk() throws {
        let state = try sandboxed()
        let bytecode = "\u{1B}LuaT\u{00}\u{19}\u{93}\r\n\u{1A}\n"
        XCTAssertThrowsError(try state.load(bytecode, chunkName: "b.luac")) { error in
            XCTAssertEqual((error as? LuaError)?.refusal, .sandbox(.textChunksOnly), "\(error)")
        }
        XCTAssertEqual(try state.run("return load('\\27Lua')", chunkName: "l.lua").first, .nil)
        XCTAssertThrowsError(try state.run("return load('return 1', 'x', 'b')", chunkName: "m.lua")) { error in
            XCTAssertEqual((error as? LuaError)?.refusal, .sandbox(.textChunksOnly), "\(error)")
        }
        XCTAssertEqual(try state.run("return load('return 1 + 1')()", chunkName: "t.lua"), [2])
    }

    func testClosesExactlyOnceAndFreesMemory() throws {
        weak var weakState: LuaState?
        do {
            let state = try sandboxed()
            weakState = state
            XCTAssertGreaterThan(state.memoryInUse, 10_000)
        }
        XCTAssertNil(weakState)
    }
}
