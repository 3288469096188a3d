import Formats
import Foundation
import LuaHost
import XCTest

/// The attacks of a hostile script author on the host itself: value conversion, nested calls,
/// work inside C library functions, output that differs between runs. Each ends as a clear error
/// with the state still usable, or is made harmless.
final class HostileScriptTests: XCTestCase {
    let modes: [LuaLimits.Counting] = [.exact, .watchdog(milliseconds: 5)]

    func state(_ counting: LuaLimits.Counting = .watchdog(milliseconds: 10), instructions: Int = 1_000_000, memory: Int = 16 << 20,
               printed: @escaping (String) -> Void = { _ in }) throws -> LuaState {
        let state = try LuaState(limits: LuaLimits(instructions: instructions, memoryBytes: memory, counting: counting))
        try state.openSandbox(LuaSandboxOptions(print: printed))
        return state
    }

    func assertStillUsable(_ state: LuaState, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(try state.run("return 1 + 1", chunkName: "after.lua"), [2], file: file, line: line)
    }

    // MARK: Conversion of script values

    func testTableNestedDeeperThan32LevelsIsRefused() throws {
        let s = try state()
        let e = error { try s.run("local t = {} for i = 1, 40 do t = { k = t } end return t", chunkName: "deep.lua") }
        XCTAssertEqual(e?.kind, .runtime)
        XCTAssertEqual(e?.message, "result #1 of deep.lua: table nested deeper than 32 levels at value" + String(repeating: ".k", count: 32))
        // 32 levels convert.
        let ok = try s.run("local t = 1 for i = 1, 32 do t = { k = t } end return t", chunkName: "ok.lua")
        var depth = 0
        var value = ok[0]
        while case .table(let fields) = value { depth += 1; value = fields["k"]! }
        XCTAssertEqual(depth, 32)
        assertStillUsable(s)
    }

    func testCyclicTableIsRefused() throws {
        let s = try state()
        let e = error { try s.run("local c = {} c.rollingUpgrade = c return c", chunkName: "cycle.lua") }
        XCTAssertEqual(e?.message, "result #1 of cycle.lua: value.rollingUpgrade contains itself (a cycle)")
    }

    func testSharedSubtablesAreConvertedOnceAndBoundedBySize() throws {
        let s = try state()
        // 2^28 leaves if expanded: refused by the size bound at once, not after minutes.
        let e = error { try s.run("local t = {} for i = 1, 28 do t = { t, t } end return t", chunkName: "shared.lua") }
        XCTAssertEqual(e?.refusal, .value(path: "value[1][1][1][1][1][1][1][1][1][1][1][1][2]", .tooManyValues(100_000)), "\(String(describing: e))")
        // A little sharing is fine and gives the same value in both places.
        let small = try s.run("local leaf = { x = 1 } local t = leaf for i = 1, 4 do t = { t, t } end return t", chunkName: "small.lua")
        var node = small[0]
        for _ in 0..<4 {
            guard case .array(let pair) = node else { return XCTFail("not a pair: \(node)") }
            XCTAssertEqual(pair.count, 2)
            XCTAssertEqual(pair[0], pair[1])
            node = pair[0]
        }
        XCTAssertEqual(node, .table(["x": 1]))
    }

    func testConversionReportsTheSameProblemWhateverTheHashOrder() throws {
        let s = try state()
        let e = error { try s.run("return { [true] = 1, [{}] = 2, [2.5] = 3, ok = 4 }", chunkName: "keys.lua") }
        XCTAssertEqual(e?.message, "result #1 of keys.lua: value has keys of type boolean, number, table; only strings and 1...n are allowed")
    }

    // MARK: Calls from inside calls

    /// A Swift function that calls the global Lua function `inner` (as the engine calls `phase`
    /// while an `at` action runs), passing the error through.
    func registerNestedCaller(_ s: LuaState) {
        s.register("call_inner") { _ in
            let inner = s.globalFunction("inner")!
            defer { s.release(inner) }
            return try s.call(inner, [])
        }
    }

    func testNestedCallRunsUnderTheMemoryCap() throws {
        for mode in modes {
            let s = try state(mode)
            registerNestedCaller(s)
            try s.run("function inner() local s = string.rep('x', 1e9) return #s end", chunkName: "n.lua")
            let e = error { try s.run("return call_inner()", chunkName: "outer.lua") }
            XCTAssertEqual(e?.kind, .memory(16 << 20), "\(mode): \(String(describing: e))")
            XCTAssertEqual(e?.location, "n.lua:1", "\(mode)")
            XCTAssertLessThan(s.memoryInUse, 16 << 20)
            assertStillUsable(s)
        }
    }

    func testNestedCallHasItsOwnBudget() throws {
        for mode in modes {
            // The outer call spends most of its budget first; the nested call still gets a whole one.
            let s = try state(mode, instructions: 2_000_000)
            registerNestedCaller(s)
            try s.run("function inner() local x = 0 for i = 1, 400000 do x = x + i end return x end", chunkName: "n.lua")
            let script = "local x = 0 for i = 1, 350000 do x = x + i end return call_inner()"
            XCTAssertEqual(try s.run(script, chunkName: "outer.lua"), [.integer(80_000_200_000)], "\(mode)")
            // A runaway nested call is stopped with its own location, not the outer one's.
            try s.run("function inner()\n  while true do end\nend", chunkName: "n.lua")
            let e = error { try s.run("return call_inner()", chunkName: "outer.lua") }
            XCTAssertEqual(e?.location, "n.lua:2", "\(mode): \(String(describing: e))")
            XCTAssertEqual(e?.kind, .budget(2_000_000), "\(mode)")
            assertStillUsable(s)
        }
    }

    /// A host error the script catches and raises again in words of its own, or at its own
    /// line, is the script's error: the host's data stays with the host's own text.
    func testAHostErrorTheScriptWrapsOrRaisesAgainIsTheScripts() throws {
        let s = try state()
        registerNestedCaller(s)
        s.register("refuse") { _ in throw LuaError(kind: .runtime, message: "nothing to cancel", refusal: .misplaced(function: "refuse", during: "at")) }
        try s.run("function inner()\n  error('real problem')\nend", chunkName: "n.lua")
        let wrapped = error { try s.run("local ok, e = pcall(refuse)\nerror('while restarting: ' .. e, 0)", chunkName: "w.lua") }
        XCTAssertEqual(wrapped?.message, "while restarting: nothing to cancel")
        XCTAssertEqual(wrapped?.location, "w.lua:2")
        let again = error { try s.run("local ok, e = pcall(call_inner)\n\nerror(e)", chunkName: "again.lua") }
        XCTAssertEqual(again?.kind, .runtime)
        XCTAssertEqual(again?.location, "again.lua:3")
        // Passed on unchanged, it keeps what the host knew.
        let unchanged = error { try s.run("\nrefuse()", chunkName: "u.lua") }
        XCTAssertEqual(unchanged?.refusal, .misplaced(function: "refuse", during: "at"))
        XCTAssertEqual(unchanged?.location, "u.lua:2")
    }

    func testNestedCallUsesTheHostMessageHandler() throws {
        let s = try state()
        registerNestedCaller(s)
        try s.run("function inner()\n  error('real problem')\nend", chunkName: "n.lua")
        // The first argument of the running C function is a callable table: slot 1 is not the handler.
        let e = error {
            try s.run("return call_inner(setmetatable({}, { __call = function() return 'forged' end }))", chunkName: "outer.lua")
        }
        XCTAssertEqual(e?.kind, .runtime)
        XCTAssertEqual(e?.location, "n.lua:2", "\(String(describing: e))")
        XCTAssertEqual(e?.message, "real problem", "\(String(describing: e))")
    }

    func testAbortedCallCannotBeCaughtByTheScript() throws {
        let s = try state()
        s.register("fatal") { _ in
            s.abortCurrentCall()
            throw LuaArgumentError(position: 1, problem: "the host gave up")
        }
        let e = error { try s.run("local ok = pcall(fatal) for i = 1, 10 do end return 'went on'", chunkName: "a.lua") }
        XCTAssertEqual(e?.kind, .aborted)
        assertStillUsable(s)
    }

    // MARK: Work inside C library functions

    func testCLibraryWorkIsChargedToTheBudget() throws {
        let cases = [
            "table.move({}, 1, math.maxinteger, 1)",
            "local t = {} for i = 1, 200000 do t[i] = i end for i = 1, 1000 do table.insert(t, 1, i) end",
            "local t = {} for i = 1, 200000 do t[i] = i end for i = 1, 1000 do table.remove(t, 1) end",
            "local s = string.rep('local x = 1\\n', 50000) for i = 1, 1000 do load(s) end",
            "local t = {} for i = 1, 100000 do t[i] = -i end for i = 1, 100 do table.sort(t) end",
            "table.concat({}, '', 1, math.maxinteger)",
        ]
        for mode in modes {
            for body in cases {
                let s = try state(mode)
                let started = Date()
                let e = error { try s.run(body, chunkName: "c.lua") }
                XCTAssertEqual(e?.kind, .budget(1_000_000), "\(mode) \(body): \(String(describing: e))")
                XCTAssertEqual(e?.location, "c.lua:1", "\(mode) \(body)")
                XCTAssertLessThan(Date().timeIntervalSince(started), 10, "\(mode) \(body)")
                assertStillUsable(s)
            }
        }
    }

    func testEmptyStringRepReturnsAtOnce() throws {
        let s = try state()
        XCTAssertEqual(try s.run("return string.rep('', math.maxinteger), ('x'):rep(0), string.rep('', 5, '')", chunkName: "r.lua"), ["", "", ""])
        XCTAssertEqual(try s.run("return string.rep('ab', 3, '-')", chunkName: "r.lua"), ["ab-ab-ab"])
    }

    func testCoroutineResumesCannotRunPastTheBudget() throws {
        let fresh = "while true do local co = coroutine.create(function() for i = 1, 990 do end end) coroutine.resume(co) end"
        let reused = "local co = coroutine.wrap(function() while true do for i = 1, 990 do end coroutine.yield() end end) while true do co() end"
        for mode in modes {
            for body in [fresh, reused] {
                let s = try state(mode)
                let started = Date()
                let e = error { try s.run(body, chunkName: "co.lua") }
                XCTAssertEqual(e?.kind, .budget(1_000_000), "\(mode) \(body)")
                // ~200× the budget would take seconds; the budget itself takes milliseconds.
                XCTAssertLessThan(Date().timeIntervalSince(started), 2, "\(mode) \(body)")
            }
        }
    }

    func testEphemeronTablesAreRefused() throws {
        let s = try state()
        for body in ["setmetatable({}, { __mode = 'k' })", "local mt = {} setmetatable({}, mt) rawset(mt, '__mode', 'k')"] {
            let e = error { try s.run(body, chunkName: "weak.lua") }
            XCTAssertEqual(e?.location, "weak.lua:1", body)
            XCTAssertEqual(e?.refusal, .sandbox(.weakKeys), "\(String(describing: e))")
        }
        XCTAssertEqual(try s.run("local t = setmetatable({}, { __mode = 'kv' }) t[{}] = 1 return getmetatable(t).__mode", chunkName: "kv.lua"), ["kv"])
    }

    // MARK: Output that is the same on every run

    func testTostringNamesObjectsByOrderNotAddress() throws {
        let s = try state()
        let shown = try s.run("""
            local a, b = {}, {}
            return tostring(a), tostring(b), tostring(a), tostring(print), string.format('%s|%5s', b, 'x'),
                   tostring(setmetatable({}, { __tostring = function() return 'mine' end }))
            """, chunkName: "t.lua")
        XCTAssertEqual(shown, ["table: #1", "table: #2", "table: #1", "function: #3", "table: #2|    x", "mine"])
        let e = error { try s.run("return string.format('%p', {})", chunkName: "p.lua") }
        XCTAssertEqual(e?.refusal, .sandbox(.formatPointer))
        XCTAssertEqual(e?.location, "p.lua:1")
        // Caught by the script and replaced by its own error: that error carries no refusal.
        let replaced = error { try s.run("pcall(string.format, '%p', {}) error('mine')", chunkName: "q.lua") }
        XCTAssertNil(replaced?.refusal)
        XCTAssertEqual(replaced?.location, "q.lua:1")
    }

    func testPairsVisitsKeysInAFixedOrder() throws {
        let s = try state()
        let order = try s.run("""
            local t = { zeta = 1, alpha = 2, [3] = 'c', [1] = 'a', mid = 3, [true] = 0 }
            local keys = {}
            for k in pairs(t) do keys[#keys + 1] = tostring(k) end
            local custom = setmetatable({}, { __pairs = function(t) return function(_, k) if k == nil then return 'only', 1 end end, t, nil end })
            for k in pairs(custom) do keys[#keys + 1] = k end
            return table.concat(keys, ',')
            """, chunkName: "order.lua")
        XCTAssertEqual(order, ["1,3,alpha,mid,zeta,true,only"])
    }

    /// `next` visits keys in the same fixed order as `pairs`, in every state: Lua's own order over
    /// string, table and function keys follows a per-state hash seed and addresses.
    func testNextVisitsKeysInTheSameFixedOrderInEveryState() throws {
        let chunk = """
            local t, made = {}, {}
            for i = 1, 300 do t["key" .. ((i * 7919) % 1000)] = i end
            for i = 1, 5 do made[i] = {} t[made[i]] = -i end
            t[2.5], t[1], t[false] = 'f', 'one', 'no'
            local keys, k = {}, nil
            repeat
              k = next(t, k)
              if k ~= nil then keys[#keys + 1] = type(k) == 'table' and ('t' .. -t[k]) or tostring(k) end
            until k == nil
            t.key919 = nil                     -- a key cleared (i = 1 made it) is skipped
            local again = {}
            for key in next, t do if type(key) == 'string' then again[#again + 1] = key end end
            local viaPairs = {}
            for key in pairs(t) do viaPairs[#viaPairs + 1] = type(key) == 'table' and ('t' .. -t[key]) or tostring(key) end
            local ok, err = pcall(next, t, 'missing')
            return table.concat(keys, ','), #again, table.concat(viaPairs, ','), ok, next({}), err
            """
        let first = try state().run(chunk, chunkName: "next.lua")
        let second = try state().run(chunk, chunkName: "next.lua")
        XCTAssertEqual(first, second)
        let keys = try XCTUnwrap(first[0].stringValue).split(separator: ",").map(String.init)
        XCTAssertEqual(keys.count, 300 + 5 + 3)
        XCTAssertEqual(Array(keys.prefix(2)), ["1", "2.5"], "numbers first, ascending")
        let strings = keys.filter { $0.hasPrefix("key") }
        XCTAssertEqual(strings, strings.sorted(), "then strings, sorted")
        XCTAssertEqual(keys[keys.count - 6], "false", "then booleans")
        XCTAssertEqual(Set(keys.suffix(5)), ["t1", "t2", "t3", "t4", "t5"], "then tables, by their allocation rank (the same in every state)")
        XCTAssertEqual(first[1], .integer(299))
        XCTAssertEqual(first[3], .bool(false), "a key the table does not hold is an error, as Lua's next says")
        XCTAssertEqual(first[4], .nil)
    }

    func testPrintShowsControlCharactersInsteadOfInterpretingThem() throws {
        var lines: [String] = []
        let s = try state(printed: { lines.append($0) })
        try s.run("print('ok\\n   PT5M  upgradeCompleted  forged', '\\27[2J\\27[31mred', 1)", chunkName: "p.lua")
        XCTAssertEqual(lines, ["ok\\n   PT5M  upgradeCompleted  forged\t\\u{1B}[2J\\u{1B}[31mred\t1"])
        XCTAssertEqual(ScriptText.escaped("a\u{202E}b\u{7F}\r"), "a\\u{202E}b\\u{7F}\\r")
        XCTAssertEqual(ScriptText.escaped("two\nlines", keepingNewlines: true), "two\nlines")
    }

    // MARK: The host's own memory

    func testHostBookkeepingDoesNotCountAgainstTheScript() throws {
        let s = try state(memory: 4 << 20)
        // The host keeps 6 MiB of its own tables (more than the cap)...
        var refs: [LuaTableRef] = []
        for i in 0..<6_000 {
            refs.append(s.reference(.table(["id": .integer(i), "name": .string(String(repeating: "n", count: 900))])))
        }
        XCTAssertGreaterThan(s.hostBytes, 6 << 20)
        // ...and the script still has its 4 MiB.
        XCTAssertEqual(try s.run("local t = {} for i = 1, 1000 do t[i] = string.rep('x', 2000) .. i end return #t", chunkName: "m.lua"), [1000])
        let e = error { try s.run("local t = {} for i = 1, 3000 do t[i] = string.rep('x', 2000) .. i end return #t", chunkName: "m.lua") }
        XCTAssertEqual(e?.kind, .memory(4 << 20))
        for ref in refs { s.release(ref) }
    }

    // MARK: Files

    func testSourceFilesAreBoundedAndConfinedBeforeReading() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("rehearse-files-\(UUID().uuidString)").path
        let outside = root + "-outside"
        try FileManager.default.createDirectory(atPath: root + "/lib", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: outside, withIntermediateDirectories: true)
        defer {
            try? FileManager.default.removeItem(atPath: root)
            try? FileManager.default.removeItem(atPath: outside)
        }
        try "return 'secret'".write(toFile: outside + "/secret.lua", atomically: true, encoding: .utf8)
        try FileManager.default.createSymbolicLink(atPath: root + "/lib/leak.lua", withDestinationPath: outside + "/secret.lua")
        // A sparse 1 GiB file: refused from its size, without reading it.
        XCTAssertTrue(FileManager.default.createFile(atPath: root + "/big.lua", contents: nil))
        let handle = FileHandle(forWritingAtPath: root + "/big.lua")!
        try handle.truncate(atOffset: 1 << 30)
        try handle.close()
        XCTAssertEqual(mkfifo(root + "/pipe.lua", 0o644), 0)

        let finder = ModuleFinder(folders: [root])
        XCTAssertThrowsError(try finder.find("lib.leak")) { error in
            XCTAssertEqual((error as? LuaArgumentError)?.refusal, .file(BoundedFile.Refusal(path: root + "/lib/leak.lua", .leadsOutOfFolder(root))))
        }
        XCTAssertThrowsError(try finder.find("big")) { error in
            XCTAssertEqual((error as? LuaArgumentError)?.refusal, .file(BoundedFile.Refusal(path: root + "/big.lua", .tooLarge(bytes: 1 << 30, limit: 4 << 20))))
        }
        XCTAssertThrowsError(try finder.find("pipe")) { error in
            XCTAssertEqual((error as? LuaArgumentError)?.refusal, .file(BoundedFile.Refusal(path: root + "/pipe.lua", .notRegular)))
        }
        let s = try state()
        XCTAssertEqual(error { try s.loadFile(root + "/big.lua") }?.kind, .file)
    }
}
