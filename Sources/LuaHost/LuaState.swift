public import Formats
public import CLua
public import CLuaSupport
import Foundation

/// A Lua function kept in the registry so the host can call it repeatedly without looking it
/// up. `name` is what errors from calling it are prefixed with (e.g. "health").
public struct LuaFunctionRef: Sendable, Equatable {
    @usableFromInline let ref: Int32
    /// The host-side name used in error messages.
    public let name: String
}

/// Any Lua value kept in the registry by the host (typically a table it passes repeatedly).
public struct LuaTableRef: Sendable, Equatable {
    @usableFromInline let ref: Int32
}

/// One Lua 5.4 state with a counting allocator, an instruction budget per call and a single
/// protected-call funnel. It owns its `lua_State` and closes it exactly once, on deinit.
///
/// Not thread-safe: use a state from one thread at a time.
public final class LuaState {
    let host: OpaquePointer
    @usableFromInline let L: OpaquePointer
    var swiftFunctions: [RetainedSwiftFunction] = []
    /// The last refusal a Swift function of this state raised, for the call that fails with it.
    let raised = RaisedError()
    /// The limits every top-level call runs under.
    public private(set) var limits: LuaLimits

    /// Creates a bare state (no libraries) under `limits`. Call `openSandbox` to give scripts
    /// their library.
    public init(limits: LuaLimits = LuaLimits()) throws {
        guard let host = rh_host_new(max(0, limits.memoryBytes), swiftDispatch) else {
            throw LuaError(kind: .memory(limits.memoryBytes), message: "could not create a Lua state")
        }
        self.host = host
        self.L = rh_host_state(host)
        self.limits = limits
        apply(limits)
    }

    deinit {
        rh_host_free(host)
        releaseSwiftFunctions()
    }

    /// Changes the limits for the calls that follow.
    public func setLimits(_ limits: LuaLimits) {
        self.limits = limits
        apply(limits)
    }

    private func apply(_ limits: LuaLimits) {
        rh_host_set_memory_limit(host, max(0, limits.memoryBytes))
        switch limits.counting {
        case .exact: rh_host_set_budget(host, Int64(limits.instructions), 1, 0)
        case .watchdog(let ms): rh_host_set_budget(host, Int64(limits.instructions), 0, UInt32(clamping: max(1, ms)))
        }
        rh_host_set_backstop(host, UInt32(clamping: max(0, limits.wallClockMilliseconds)))
        rh_host_set_run_backstop(host, UInt32(clamping: max(0, limits.runWallClockMilliseconds)))
        rh_host_set_run_budget(host, limits.counting == .exact ? Int64(max(0, limits.runInstructions)) : 0)
    }

    /// What the wall-clock backstops name first when they end the process (`seed 7`), so a
    /// message from one of many runs says which.
    public func setRunLabel(_ label: String) { rh_host_set_run_label(host, label) }

    /// Instructions counted since the run began (exact counting only), in steps of the count hook.
    public var runInstructionsUsed: Int { Int(rh_host_run_used(host)) }

    /// Charges `units` of the host's own work on what a call handed it (copying, judging) to the
    /// run's instructions (`runInstructions`); true when that spent the run's budget.
    public func chargeRun(_ units: Int) -> Bool { rh_host_charge_run(host, Int64(clamping: units)) != 0 }

    /// Starts the run's counts from zero: wall time spent in calls (`runWallClockMilliseconds`)
    /// and instructions (`runInstructions`).
    public func resetRunTime() { rh_host_reset_run_time(host) }

    /// Runs `body`, whose allocations are the host's own bookkeeping (tables it keeps per
    /// instance, registry references): they raise the memory cap by as much, so they never count
    /// against the script's memory.
    public func withHostAllocation<R>(_ body: () throws -> R) rethrows -> R {
        rh_host_alloc_begin(host)
        defer { rh_host_alloc_end(host) }
        return try body()
    }

    /// Bytes the host allocated for itself so far (see `withHostAllocation`).
    public var hostBytes: Int { rh_host_bytes(host) }

    /// Ends the call that is running now (from a Swift function it called): every following
    /// instruction raises, past any `pcall` of the script's, and the call fails with
    /// `LuaError.Kind.aborted`. For a host function whose failure must end the run rather than
    /// be caught by the script.
    public func abortCurrentCall() { rh_abort_call(host) }

    /// Keeps a function reference under its name for the wall-clock backstop's message.
    func labeled(_ ref: Int32, _ name: String) -> LuaFunctionRef {
        rh_label_ref(host, ref, name)
        return LuaFunctionRef(ref: ref, name: name)
    }

    /// Whether top-level calls of `function` run without the count hook (`LuaLimits.Counting.exact`
    /// counts nothing in them anyway: a straight function, while no script touched a metatable).
    public func runsStraight(_ function: LuaFunctionRef) -> Bool { rh_function_is_straight(host, function.ref) != 0 }

    /// Bytes the state holds now.
    public var memoryInUse: Int { rh_host_memory_used(host) }

    @usableFromInline var stack: LuaStack { LuaStack(L: L) }

    // MARK: Loading

    /// Compiles `text` as a chunk named `chunkName` (shown in errors as `chunkName:line`).
    /// Precompiled bytecode is refused.
    public func load(_ text: String, chunkName: String) throws -> LuaFunctionRef {
        let status = loadText(L, text, chunkName: "@" + chunkName)
        guard status == LUA_OK else {
            let raw = stack.string(at: -1) ?? "cannot load \(chunkName)"
            clua_pop(L, 1)
            let (location, message) = LuaError.splitLocation(raw)
            // The parser's own limit ("C stack overflow": 300 nested parentheses, 200 labels in
            // one block) carries no position: the chunk is named, and what the limit is.
            var error: LuaError
            if let location {
                error = LuaError(kind: .syntax, message: message, location: location)
            } else {
                let why = message == "C stack overflow" ? "the script is past a limit of Lua's parser (about 200 levels of nested parentheses, blocks or calls, or as many labels in one block)" : message
                error = LuaError(kind: .syntax, message: why, location: chunkName)
            }
            // Lua refuses a precompiled chunk (its first byte is ESC) in text mode.
            if text.utf8.first == 0x1B { error.refusal = .sandbox(.textChunksOnly) }
            return try fail(error)
        }
        return labeled(withHostAllocation { luaL_ref(L, CLUA_REGISTRYINDEX) }, chunkName)
    }

    /// Reads and compiles the file at `path` (a regular file of at most `maxBytes` bytes, checked
    /// before reading); errors show `displayName` (default: the path).
    public func loadFile(_ path: String, displayName: String? = nil, maxBytes: Int = BoundedFile.maxSourceBytes) throws -> LuaFunctionRef {
        let name = displayName ?? path
        let data: [UInt8]
        do {
            data = try BoundedFile.read(path, maxBytes: maxBytes)
        } catch {
            throw LuaError(kind: .file, message: "cannot load \(error)")
        }
        if data.first == 0x1B {
            var error = LuaError(kind: .syntax, message: "\(name) is precompiled Lua bytecode; only source text is accepted")
            error.refusal = .sandbox(.textChunksOnly)
            throw error
        }
        switch LuaSourceText.decode(data) {
        case .success(let text): return try load(text, chunkName: name)
        case .failure(let bad): throw LuaError(kind: .syntax, message: bad.message(), location: "\(name):\(bad.line)")
        }
    }

    private func fail<T>(_ error: LuaError) throws -> T { throw error }

    /// Loads and runs `text`, returning what it returns.
    @discardableResult
    public func run(_ text: String, chunkName: String) throws -> [LuaValue] {
        let chunk = try load(text, chunkName: chunkName)
        defer { release(chunk) }
        return try call(chunk, [])
    }

    /// Keeps `value` (built as a fresh Lua value) in the registry; push it with
    /// `LuaStack.pushReference`. Used for tables the host hands to scripts again and again.
    public func reference(_ value: LuaValue) -> LuaTableRef {
        withHostAllocation {
            stack.push(value)
            return LuaTableRef(ref: luaL_ref(L, CLUA_REGISTRYINDEX))
        }
    }

    /// Keeps a new table with `fields` set in the order given, in the registry: for the host's own
    /// records, where `reference(.table(...))` would sort the keys first.
    public func reference(record fields: [(String, LuaValue)]) -> LuaTableRef {
        withHostAllocation {
            lua_createtable(L, 0, Int32(clamping: fields.count))
            for (key, value) in fields {
                stack.push(value)
                clua_rawsetfield(L, -2, key)
            }
            return LuaTableRef(ref: luaL_ref(L, CLUA_REGISTRYINDEX))
        }
    }

    /// Keeps a new empty table with room for `arraySize` list items in the registry.
    public func referenceNewTable(arraySize: Int) -> LuaTableRef {
        withHostAllocation {
            lua_createtable(L, Int32(clamping: arraySize), 0)
            return LuaTableRef(ref: luaL_ref(L, CLUA_REGISTRYINDEX))
        }
    }

    /// Sets `t[key] = value` raw on a table kept by `reference`.
    public func setField(_ table: LuaTableRef, _ key: String, _ value: LuaValue) {
        rh_host_alloc_begin(host)
        defer { rh_host_alloc_end(host) }
        _ = lua_rawgeti(L, CLUA_REGISTRYINDEX, lua_Integer(table.ref))
        if lua_type(L, -1) == LUA_TTABLE {
            stack.push(value)
            clua_rawsetfield(L, -2, key)
        }
        clua_pop(L, 1)
    }

    /// Sets `t[key]` raw, on a table kept by `reference`, to the table `value` keeps (shared, not copied).
    public func setField(_ table: LuaTableRef, _ key: String, reference value: LuaTableRef) {
        rh_host_alloc_begin(host)
        defer { rh_host_alloc_end(host) }
        _ = lua_rawgeti(L, CLUA_REGISTRYINDEX, lua_Integer(table.ref))
        if lua_type(L, -1) == LUA_TTABLE {
            _ = lua_rawgeti(L, CLUA_REGISTRYINDEX, lua_Integer(value.ref))
            clua_rawsetfield(L, -2, key)
        }
        clua_pop(L, 1)
    }

    /// Runs `body` with slot `slot` of the table kept by `table` pushed on the stack (at -1).
    public func withSlot<R>(_ table: LuaTableRef, _ slot: Int, _ body: (LuaStack) throws -> R) rethrows -> R {
        let top = lua_gettop(L)
        defer { lua_settop(L, top) }
        _ = lua_rawgeti(L, CLUA_REGISTRYINDEX, lua_Integer(table.ref))
        _ = lua_rawgeti(L, -1, lua_Integer(slot))
        return try body(stack)
    }

    /// Drops a registry reference to a table.
    public func release(_ table: LuaTableRef) { rh_release_ref(host, table.ref) }

    /// Drops a registry reference; the function may then be collected.
    public func release(_ function: LuaFunctionRef) { rh_release_ref(host, function.ref) }

    // MARK: Globals and functions

    /// The global `name` as a callable reference, or nil when it is not a function.
    public func globalFunction(_ name: String) -> LuaFunctionRef? {
        _ = lua_rawgeti(L, CLUA_REGISTRYINDEX, lua_Integer(LUA_RIDX_GLOBALS))
        defer { clua_pop(L, 1) }
        guard clua_rawgetfield(L, -1, name) == LUA_TFUNCTION else {
            clua_pop(L, 1)
            return nil
        }
        return labeled(withHostAllocation { luaL_ref(L, CLUA_REGISTRYINDEX) }, name)
    }

    /// Sets global `name` (raw: no metamethod of the globals table runs).
    public func setGlobal(_ name: String, _ value: LuaValue) {
        rh_host_alloc_begin(host)
        defer { rh_host_alloc_end(host) }
        _ = lua_rawgeti(L, CLUA_REGISTRYINDEX, lua_Integer(LUA_RIDX_GLOBALS))
        stack.push(value)
        clua_rawsetfield(L, -2, name)
        clua_pop(L, 1)
    }

    /// Makes `body` callable from Lua as global `name`, or as `table.name` when `table` is given
    /// (the table is created when missing).
    public func register(_ name: String, in table: String? = nil, _ body: @escaping LuaSwiftFunction) {
        rh_host_alloc_begin(host)
        defer { rh_host_alloc_end(host) }
        _ = lua_rawgeti(L, CLUA_REGISTRYINDEX, lua_Integer(LUA_RIDX_GLOBALS))
        if let table {
            if clua_rawgetfield(L, -1, table) != LUA_TTABLE {
                clua_pop(L, 1)
                lua_createtable(L, 0, 4)
                lua_pushvalue(L, -1)
                clua_rawsetfield(L, -3, table)
            }
        }
        pushSwiftFunction(named: table.map { "\($0).\(name)" } ?? name, body)
        clua_rawsetfield(L, -2, name)
        lua_settop(L, RH_RESERVED_SLOTS)
    }

    /// A Swift function as a value that can be passed to Lua (e.g. to a prelude chunk).
    public func function(named name: String, _ body: @escaping LuaSwiftFunction) -> LuaFunctionRef {
        return labeled(withHostAllocation {
            pushSwiftFunction(named: name, body)
            return luaL_ref(L, CLUA_REGISTRYINDEX)
        }, name)
    }

    // MARK: Calls

    /// The call funnel. Pushes `function`, lets `arguments` push its arguments (returning how
    /// many), calls it protected under the limits, and hands the `results` results to `read`
    /// before popping them. A failure throws `LuaError` with message, location and traceback.
    @inlinable
    public func call<R>(
        _ function: LuaFunctionRef, results: Int32 = 1,
        arguments: (LuaStack) -> Int32, read: (LuaStack) throws -> R
    ) throws -> R {
        let base = lua_gettop(L)
        // A call from inside a Swift function (a nested call) has only the slots Lua gave that
        // function; this never raises.
        guard lua_checkstack(L, 8) != 0 else {
            throw LuaError(kind: .runtime, message: "Lua stack exhausted (calls nested too deeply)", function: function.name)
        }
        _ = lua_rawgeti(L, CLUA_REGISTRYINDEX, lua_Integer(function.ref))
        let nargs = arguments(stack)
        let status = rh_pcall(L, nargs, results, function.ref)
        guard status == LUA_OK else { throw callError(status, function: function.name) }
        defer { lua_settop(L, base) }
        return try read(stack)
    }

    /// The error of a failed `LuaHandle.callHealth` (its message is on top; this pops it).
    public func failure(of call: HealthCall, function: LuaFunctionRef) -> LuaError {
        guard call.status != HealthCall.noRoom else {
            return LuaError(kind: .runtime, message: "Lua stack exhausted (calls nested too deeply)", function: function.name)
        }
        return callError(call.status, function: function.name)
    }

    /// The state's raw handle, for the probe's hot path.
    public var handle: LuaHandle { LuaHandle(L: L) }

    /// Reads what a call left on top of the stack (at -1) before `endCall`.
    @inlinable
    public func readTop<R>(_ body: (LuaStack) throws -> R) rethrows -> R { try body(stack) }

    /// Calls `function` with `arguments` and converts all its results.
    @discardableResult
    public func call(_ function: LuaFunctionRef, _ arguments: [LuaValue]) throws -> [LuaValue] {
        let base = lua_gettop(L)
        return try call(function, results: CLUA_MULTRET, arguments: { stack in
            for argument in arguments { stack.push(argument) }
            return Int32(arguments.count)
        }, read: { stack in
            var values: [LuaValue] = []
            var index = base + 1
            while index <= stack.top {
                do {
                    values.append(try stack.value(at: index))
                } catch {
                    var failure = LuaError(kind: .runtime, message: "result #\(index - base) of \(function.name): \((error as? LuaError)?.message ?? "\(error)")")
                    failure.refusal = (error as? LuaError)?.refusal
                    throw failure
                }
                index += 1
            }
            return values
        })
    }
}
