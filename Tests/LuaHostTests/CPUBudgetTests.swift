import CLua
import Foundation
import LuaHost
import XCTest

/// Work the count hook cannot see, made countable or bounded: pattern matching counted step by
/// step, the CPU-time backstops failing the call (never ending the process), and straight calls
/// that skip the hook without changing what the exact budget counts.
final class CPUBudgetTests: XCTestCase {
    func state(_ counting: LuaLimits.Counting = .exact, instructions: Int = 1_000_000, backstop: Int = 5_000,
               runBackstop: Int = 12_000) throws -> LuaState {
        var limits = LuaLimits(instructions: instructions, memoryBytes: 64 << 20, counting: counting, wallClockMilliseconds: backstop)
        limits.runWallClockMilliseconds = runBackstop
        let state = try LuaState(limits: limits)
        try state.openSandbox()
        return state
    }

    // MARK: Patterns

    /// 2^40 ways to split 40 a's among 20 `a*`: Lua's matcher ran for hours inside one C call.
    /// Counted, it stops with the budget at the line that called it, in either counting mode.
    func testBacktrackingPatternStopsAtTheBudget() throws {
        for counting in [LuaLimits.Counting.exact, .watchdog(milliseconds: 5)] {
            let s = try state(counting)
            let e = error { try s.run("local x = 1\nreturn string.find(string.rep('a', 40), string.rep('a*', 20) .. 'b')", chunkName: "p.lua") }
            XCTAssertEqual(e?.kind, .budget(1_000_000), "\(counting)")
            XCTAssertEqual(e?.location, "p.lua:2", "\(counting)")
            // The same through a method call, gmatch and gsub, and past the script's own pcall.
            for call in ["('a'):rep(40):match(('a*'):rep(20) .. 'b')", "string.gmatch(string.rep('a', 40), string.rep('a*', 20) .. 'b')()",
                         "string.gsub(string.rep('a', 40), string.rep('a*', 20) .. 'b', '')"] {
                let e = error { try s.run("local ok = pcall(function() return \(call) end)\nreturn ok", chunkName: "q.lua") }
                XCTAssertEqual(e?.kind, .budget(1_000_000), call)
            }
            XCTAssertEqual(try s.run("return (string.find('hello', 'l+'))", chunkName: "after.lua"), [3])
        }
    }

    /// A plain search compares the needle at every place its first byte occurs: a million places
    /// of ten thousand bytes each is counted, not run for seconds.
    func testPlainSearchIsCounted() throws {
        let s = try state()
        let e = error { try s.run("return string.find(string.rep('a', 1000000), string.rep('a', 10000) .. 'b', 1, true)", chunkName: "plain.lua") }
        XCTAssertEqual(e?.kind, .budget(1_000_000))
        let f = error { try s.run("return string.find(string.rep('a', 1000000), string.rep('a', 10000) .. 'b')", chunkName: "nospecials.lua") }
        XCTAssertEqual(f?.kind, .budget(1_000_000))
    }

    /// The counted matcher answers as Lua 5.4's own does (each expected value was printed by
    /// Debian's lua5.4 for the same line).
    func testPatternFunctionsAnswerAsLuasOwn() throws {
        let s = try state()
        let cases: [(String, [LuaValue])] = [
            (#"string.find("hello world", "o w")"#, [5, 7]),
            (#"string.find("hello world", "l+")"#, [3, 4]),
            (#"string.find("hello", "l", 1, true)"#, [3, 3]),
            (#"string.find("hello", "", 10)"#, [.nil]),
            (#"string.find("hello", "", 6)"#, [6, 5]),
            (#"string.find("a.b", ".", 1, true)"#, [2, 2]),
            (#"string.find("hello", "(h)(e)")"#, [1, 2, "h", "e"]),
            (#"string.find("  x", "^%s*()")"#, [1, 2, 3]),
            (#"string.find("a", "a)")"#, [.nil]),
            (#"string.match("key = value", "(%w+)%s*=%s*(%w+)")"#, ["key", "value"]),
            (#"string.match("THE (quick) fox", "%((%a+)%)")"#, ["quick"]),
            (#"string.match("f(a(b)c)d", "%b()")"#, ["(a(b)c)"]),
            (#"string.match("THE quick", "%f[%a]%a+", 4)"#, ["quick"]),
            (#"string.match("hello", "()ll()")"#, [3, 5]),
            (#"string.match("abcabc", "(abc)%1")"#, ["abc"]),
            (#"string.match("2024-01-02", "^(%d+)-(%d+)-(%d+)$")"#, ["2024", "01", "02"]),
            (#"string.match("aaa", "a-b")"#, [.nil]),
            (#"string.match("aaab", "a-b")"#, ["aaab"]),
            (#"string.match("[]x", "[]]")"#, ["]"]),
            (#"string.match("x-y", "[%-]")"#, ["-"]),
            (#"string.match("abc", "[^a]+")"#, ["bc"]),
            (#"string.match("hello", ".-l")"#, ["hel"]),
            (#"string.match("hello", "l*", -2)"#, ["l"]),
            (#"string.match("h\u{E9}llo", "[\128-\255]+")"#, ["\u{E9}"]),
            (#"string.gsub("hello world", "o", "0")"#, ["hell0 w0rld", 2]),
            (#"string.gsub("hello world", "(%w+)", "<%1>")"#, ["<hello> <world>", 2]),
            (#"string.gsub("hello", "", "-")"#, ["-h-e-l-l-o-", 6]),
            (#"string.gsub("abc", "%w", "%0%0")"#, ["aabbcc", 3]),
            (#"string.gsub("abc", "%w", {a = 1, b = false})"#, ["1bc", 3]),
            (#"string.gsub("abc", "%w", function(c) if c == "b" then return nil end return c:upper() end)"#, ["AbC", 3]),
            (#"string.gsub("hello world", "o", "0", 1)"#, ["hell0 world", 1]),
            (#"string.gsub("abc", "^a", "x")"#, ["xbc", 1]),
            (#"string.gsub("x = 1", "()", "%1")"#, ["1x2 3=4 516", 6]),
            (#"string.gsub("sandbox:12: boom", "^sandbox:%d+: ", "")"#, ["boom", 1]),
            (#"(function() local t = {} for w in string.gmatch("one two  three", "%a+") do t[#t+1] = w end return table.concat(t, ",") end)()"#, ["one,two,three"]),
            (#"(function() local t = {} for k, v in string.gmatch("a=1, b=2", "(%w+)=(%w+)") do t[#t+1] = k .. v end return table.concat(t, ",") end)()"#, ["a1,b2"]),
            (#"(function() local n = 0 for w in string.gmatch("abc", "") do n = n + 1 end return n end)()"#, [4]),
            (#"(function() local t = {} for w in string.gmatch("hello", "l*", 3) do t[#t+1] = "[" .. w .. "]" end return table.concat(t) end)()"#, ["[ll][]"]),
        ]
        for (code, expected) in cases {
            XCTAssertEqual(try s.run("return " + code, chunkName: "case.lua"), expected, code)
        }
    }

    /// Random patterns (classes, sets, anchors, quantifiers, captures, %b, %f, back-references)
    /// on random subjects, through find, plain find, match, gsub with a string, a limit and a
    /// function, and gmatch: the sandbox's functions and Lua's own library give the same
    /// results and the same errors, case for case.
    func testPatternFunctionsAgreeWithLuasOwnOnRandomPatterns() throws {
        let driver = #"""
        local seed, n = ...
        local function rnd(k) seed = (seed * 1103515245 + 12345) % 2147483648 return seed % k end
        local items = {"a", "b", "%", "(", ")", "[", "]", "^", "$", "*", "+", "-", "?", ".", "%a", "%d", "%b()", "%f[a]",
                       "%1", "1", " ", "c", "[^a]", "[a-c]", "%s", "%S", "()", "%%", "[%a-]"}
        local chars = {"a", "b", "(", ")", "1", " ", "c", "-", "%", "[", "]"}
        local function show(...)
          local t = table.pack(...)
          for i = 1, t.n do t[i] = type(t[i]) == "string" and string.format("%q", t[i]) or tostring(t[i]) end
          return table.concat(t, " ", 1, t.n)
        end
        local out = {}
        for i = 1, n do
          local p = {} for j = 1, rnd(8) do p[#p + 1] = items[rnd(#items) + 1] end p = table.concat(p)
          local s = {} for j = 1, rnd(14) do s[#s + 1] = chars[rnd(#chars) + 1] end s = table.concat(s)
          local init = rnd(19) - 9
          out[#out + 1] = show(p, s, init)
          out[#out + 1] = show(pcall(string.find, s, p, init))
          out[#out + 1] = show(pcall(string.find, s, p, init, true))
          out[#out + 1] = show(pcall(string.match, s, p, init))
          out[#out + 1] = show(pcall(string.gsub, s, p, "<%0>"))
          out[#out + 1] = show(pcall(string.gsub, s, p, "%1", rnd(4)))
          out[#out + 1] = show(pcall(string.gsub, s, p, function(...) return select("#", ...) > 1 and "x" or nil end))
          out[#out + 1] = show(pcall(function()
            local r, k = {}, 0
            for a, b in string.gmatch(s, p, init) do k = k + 1 r[k] = tostring(a) .. "," .. tostring(b) if k > 40 then break end end
            return table.concat(r, ";")
          end))
        end
        return table.concat(out, "\n")
        """#
        let s = try state(instructions: 100_000_000)
        let plain = try XCTUnwrap(luaL_newstate())
        defer { lua_close(plain) }
        luaL_openlibs(plain)
        let chunk = try s.load(driver, chunkName: "drive.lua")
        for seed in 1...40 {
            let ours = try s.call(chunk, [.integer(seed), .integer(150)])
            XCTAssertEqual(clua_loadbufferx(plain, driver, driver.utf8.count, "@drive.lua", "t"), LUA_OK)
            lua_pushinteger(plain, lua_Integer(seed))
            lua_pushinteger(plain, 150)
            XCTAssertEqual(clua_pcall(plain, 2, 1, 0), LUA_OK)
            var length = 0
            let theirs = String(cString: clua_tolstring(plain, -1, &length))
            clua_pop(plain, 1)
            XCTAssertEqual(ours.first?.stringValue, theirs, "seed \(seed)")
        }
    }

    func testMalformedPatternsRaiseLuasMessages() throws {
        let s = try state()
        let cases = [
            (#"string.find("a", "%")"#, "malformed pattern (ends with '%')"),
            (#"string.find("a", "[a")"#, "malformed pattern (missing ']')"),
            (#"string.find("a", "(a")"#, "unfinished capture"),
            (#"string.find("a", "%1")"#, "invalid capture index %1"),
            (#"string.gsub("a", "a", "%2")"#, "invalid capture index %2"),
            (#"string.gsub("a", "a", "%x")"#, "invalid use of '%' in replacement string"),
            (#"string.find("a", "%f")"#, "missing '[' after '%f' in pattern"),
            (#"string.gsub("abc", "%w", {a = {}})"#, "invalid replacement value (a table)"),
            (#"string.find(("x"):rep(300), ("(x)"):rep(33))"#, "too many captures"),
        ]
        for (code, message) in cases {
            XCTAssertEqual(try s.run("local ok, m = pcall(function() return \(code) end) return ok, m", chunkName: "bad.lua"),
                           [false, .string("bad.lua:1: " + message)], code)
        }
        let e = error { try s.run(#"return string.gsub("a", "a", true)"#, chunkName: "arg.lua") }
        XCTAssertEqual(e?.message, "bad argument #3 to 'gsub' (string/function/table expected, got boolean)", "\(String(describing: e))")
    }

    // MARK: CPU-time backstops

    /// Work no budget counts (here copying 10 MB strings, a few instructions each) meets the
    /// call's CPU-time backstop: the call fails with its own error, the state stays usable, and
    /// the process goes on.
    func testUncountedWorkMeetsTheCallBackstopAsAnError() throws {
        for counting in [LuaLimits.Counting.exact, .watchdog(milliseconds: 5)] {
            let s = try state(counting, backstop: 300)
            let e = error { try s.run("for i = 1, 100000 do local s = string.rep('x', 10000000) end", chunkName: "rep.lua") }
            XCTAssertEqual(e?.kind, .cpuTime(300), "\(counting)")
            XCTAssertEqual(e?.location, "rep.lua:1", "\(counting)")
            XCTAssertEqual(try s.run("return 1 + 1", chunkName: "after.lua"), [2])
        }
    }

    /// Many calls each within their limits add up to the run's CPU-time backstop: the call running
    /// then fails, and so does every later one until the host starts a new run.
    func testRunBackstopFailsCallsUntilTheRunIsReset() throws {
        let s = try state(backstop: 5_000, runBackstop: 300)
        try s.run("function work() local s = string.rep('x', 10000000) return #s end", chunkName: "work.lua")
        let work = try XCTUnwrap(s.globalFunction("work"))
        var failure: LuaError?
        for _ in 0..<100_000 {
            do {
                _ = try s.call(work, [])
            } catch {
                failure = error as? LuaError
                break
            }
        }
        XCTAssertEqual(failure?.kind, .runCPUTime(300))
        XCTAssertEqual(error { try s.call(work, []) }?.kind, .runCPUTime(300))
        s.resetRunTime()
        XCTAssertEqual(try s.call(work, []), [10_000_000])
    }

    // MARK: Straight calls

    /// A health function that builds and returns a table has no loop and no call: the exact
    /// budget would count nothing in it, so it runs without the hook. Anything that loops,
    /// calls or is longer than a hook step is counted as before.
    func testOnlyStraightShortFunctionsSkipTheHook() throws {
        let s = try state()
        let long = "local x = 0\n" + String(repeating: "x = x + 1\n", count: 1_000)
        try s.run("""
            function health(vm, t)
              return { applicationHealthState = (t % 97 == 0) and "Unhealthy" or "Healthy",
                       customMetrics = { rollingUpgrade = { PhaseOrderingNumber = vm.id % 3, SkipUpgrade = false } } }
            end
            function loops(n) local x = 0 for i = 1, n do x = x + i end return x end
            function forever() while true do end end
            function calls(s) return tostring(s) end
            function closes() local x <close> = nil end
            function long() \(long) return x end
            """, chunkName: "f.lua")
        let function = { (name: String) in try XCTUnwrap(s.globalFunction(name)) }
        XCTAssertTrue(s.runsStraight(try function("health")))
        for name in ["loops", "forever", "calls", "closes", "long"] {
            XCTAssertFalse(s.runsStraight(try function(name)), name)
        }
        // Straight calls count nothing, as the hook counted nothing in them.
        let health = try function("health")
        for t in 0..<2_000 {
            XCTAssertEqual(try s.call(health, [.table(["id": .integer(t)]), .integer(t)]).count, 1)
        }
        XCTAssertEqual(s.runInstructionsUsed, 0)
        XCTAssertEqual(error { try s.call(try function("forever"), []) }?.kind, .budget(1_000_000))
    }

    /// A metamethod runs Lua code that the function's length does not bound: once a script sets
    /// or reads a metatable (the strings' one included), every call is counted again, and a loop
    /// behind `t.x` or `s.len` stops at the budget.
    func testMetatablesTurnStraightCallsBackToCounted() throws {
        let cases = [("t = {} function get(s) return t.x end", "setmetatable(t, { __index = function() while true do end end })"),
                     ("function get(s) return s.n end", "getmetatable('').__index = function() while true do end end")]
        for (definition, metatable) in cases {
            let s = try state()
            try s.run(definition, chunkName: "m.lua")
            let get = try XCTUnwrap(s.globalFunction("get"))
            XCTAssertTrue(s.runsStraight(get), definition)
            try s.run(metatable, chunkName: "mt.lua")
            XCTAssertFalse(s.runsStraight(get), metatable)
            XCTAssertEqual(error { try s.call(get, ["x"]) }?.kind, .budget(1_000_000), metatable)
        }
    }

    /// A released reference whose number is taken by another function is checked again.
    func testAReusedReferenceIsCheckedAgain() throws {
        let s = try state()
        try s.run("function a() return 1 end function b() while true do end end", chunkName: "r.lua")
        let a = try XCTUnwrap(s.globalFunction("a"))
        XCTAssertTrue(s.runsStraight(a))
        s.release(a)
        let b = try XCTUnwrap(s.globalFunction("b"))
        XCTAssertFalse(s.runsStraight(b))
        XCTAssertEqual(error { try s.call(b, []) }?.kind, .budget(1_000_000))
    }
}
