import LuaHost
import XCTest

/// Hostile scripts: every one must end as a clear error, the process must survive, and the state
/// must still work afterwards.
final class LimitsTests: XCTestCase {
    let modes: [LuaLimits.Counting] = [.exact, .watchdog(milliseconds: 5)]

    func state(_ counting: LuaLimits.Counting, instructions: Int = 1_000_000, memory: Int = 16 << 20) throws -> LuaState {
        let state = try LuaState(limits: LuaLimits(instructions: instructions, memoryBytes: memory, counting: counting))
        try state.openSandbox()
        return state
    }

    func assertStillUsable(_ state: LuaState, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(try state.run("return 1 + 1", chunkName: "after.lua"), [2], file: file, line: line)
    }

    func runHealth(_ state: LuaState, _ body: String) throws {
        try state.run(body, chunkName: "scripts/x.lua")
        let f = try XCTUnwrap(state.globalFunction("health"))
        try state.call(f, [])
    }

    func testInfiniteLoopStopsWithBudgetError() throws {
        for mode in modes {
            let s = try state(mode)
            XCTAssertThrowsError(try runHealth(s, "function health()\n  while true do end\nend")) { error in
                XCTAssertEqual("\(error)", "health: budget of 1000000 instructions exceeded at scripts/x.lua:2", "\(mode)")
            }
            assertStillUsable(s)
        }
    }

    func testPcallCannotSwallowBudget() throws {
        for mode in modes {
            let s = try state(mode)
            let script = "function health()\n  for i = 1, 100 do pcall(function() while true do end end) end\n  return 'escaped'\nend"
            XCTAssertThrowsError(try runHealth(s, script)) { error in
                XCTAssertEqual((error as! LuaError).kind, .budget(1_000_000), "\(mode)")
            }
            assertStillUsable(s)
        }
    }

    func testCoroutineLoopingForeverIsStopped() throws {
        for mode in modes {
            let s = try state(mode)
            let script = """
                function health()
                  local co = coroutine.create(function() while true do end end)
                  local ok = coroutine.resume(co)
                  local w = coroutine.wrap(function() while true do coroutine.yield() end end)
                  while true do w() end
                end
                """
            XCTAssertThrowsError(try runHealth(s, script)) { error in
                XCTAssertEqual((error as! LuaError).kind, .budget(1_000_000), "\(mode)")
            }
            assertStillUsable(s)
        }
    }

    func testHugeStringRepIsMemoryError() throws {
        for mode in modes {
            let s = try state(mode)
            // 1e10 bytes is past Lua's own string size guard (INT_MAX), which refuses it first.
            XCTAssertThrowsError(try s.run("return string.rep('x', 1e10)", chunkName: "m.lua")) { error in
                XCTAssertEqual("\(error)", "m.lua: m.lua:1: resulting string too large")
            }
            // 1e9 bytes is allowed by Lua and refused by the host's cap.
            XCTAssertThrowsError(try s.run("return string.rep('x', 1e9)", chunkName: "m.lua")) { error in
                // Positioned although Lua calls no message handler for a memory error.
                XCTAssertEqual((error as? LuaError)?.kind, .memory(16 << 20), "\(mode)")
                XCTAssertEqual((error as? LuaError)?.location, "m.lua:1", "\(mode)")
            }
            assertStillUsable(s)
        }
    }

    func testTableGrowingForeverIsMemoryErrorEvenInsidePcall() throws {
        for mode in modes {
            let s = try state(mode, instructions: 100_000_000)
            let script = "local t = {}\npcall(function() local i = 0 while true do i = i + 1 t[i] = {i} end end)\nreturn #t"
            XCTAssertThrowsError(try s.run(script, chunkName: "grow.lua")) { error in
                XCTAssertEqual((error as! LuaError).kind, .memory(16 << 20), "\(mode) \(error)")
            }
            assertStillUsable(s)
            XCTAssertLessThan(s.memoryInUse, 16 << 20)
        }
    }

    func testRunawayRecursionIsStackOverflowError() throws {
        let s = try state(.exact, instructions: 100_000_000, memory: 256 << 20)
        XCTAssertThrowsError(try s.run("local function f(n) return 1 + f(n + 1) end\nreturn f(1)", chunkName: "rec.lua")) { error in
            // Lua's own error, raised where the recursion is, and caught as the script's.
            XCTAssertEqual((error as? LuaError)?.kind, .runtime, "\(error)")
            XCTAssertEqual((error as? LuaError)?.location, "rec.lua:1", "\(error)")
        }
        assertStillUsable(s)
    }

    func testErrorInsideSwiftFunctionDuringLimitsKeepsStateUsable() throws {
        let s = try state(.watchdog(milliseconds: 5))
        s.register("boom") { _ in throw LuaArgumentError(position: 1, problem: "no") }
        XCTAssertThrowsError(try s.run("for i = 1, 10 do pcall(boom) end boom()", chunkName: "b.lua")) { error in
            XCTAssertEqual((error as! LuaError).message, "bad argument #1 to 'boom' (no)")
        }
        assertStillUsable(s)
    }

    func testWorkUnderBudgetCompletesInBothModes() throws {
        for mode in modes {
            let s = try state(mode, instructions: 5_000_000)
            XCTAssertEqual(try s.run("local x = 0 for i = 1, 100000 do x = x + i end return x", chunkName: "ok.lua"), [5_000_050_000])
        }
    }
}
