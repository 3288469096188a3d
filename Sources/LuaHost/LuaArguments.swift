import CLua
import CLuaSupport
public import Formats

/// A Swift function callable from Lua: it reads its arguments and returns its results.
/// Throwing `LuaArgumentError` (through the `LuaArguments` readers) or any other error ends the
/// Lua call with an error message naming the function.
public typealias LuaSwiftFunction = (LuaArguments) throws -> [LuaValue]

/// A bad argument, rendered as Lua does: `bad argument #2 to 'scale' (integer expected, got string)`.
public struct LuaArgumentError: Error {
    /// The 1-based argument position.
    public var position: Int
    /// What was wrong with it.
    public var problem: String
    /// What the host refused behind it, when it is a refusal: the argument's value (too deep,
    /// not text, …) or a file it named (a module).
    public var refusal: HostRefusal?

    /// Argument `position` (1-based) was wrong: `problem`; `refusal`, what the host refused behind it.
    public init(position: Int, problem: String, refusal: HostRefusal? = nil) {
        self.position = position
        self.problem = problem
        self.refusal = refusal
    }

    func render(function: String) -> String { "bad argument #\(position) to '\(function)' (\(problem))" }
}

extension LuaArgumentError: UserFacingError {
    /// The call's line is known only to Lua, which adds it when the error becomes a `LuaError`.
    public var place: Location? { nil }
    /// Bad input (a script that calls with a bad argument): 2.
    public var exitCode: Int32 { 2 }
}

/// The arguments of one call from Lua into a Swift function.
public struct LuaArguments {
    let stack: LuaStack
    /// The function's name, as errors show it.
    public let function: String
    /// How many arguments were passed.
    public let count: Int

    private func expected(_ what: String, _ position: Int) -> LuaArgumentError {
        LuaArgumentError(position: position, problem: "\(what) expected, got \(stack.type(at: Int32(position)).name)")
    }

    /// The type of argument `position`.
    public func type(_ position: Int) -> LuaType { position > count ? .none : stack.type(at: Int32(position)) }

    /// Argument `position` converted whole (nil when absent).
    public func value(_ position: Int) throws -> LuaValue {
        guard position <= count else { return .nil }
        do {
            return try stack.value(at: Int32(position))
        } catch {
            throw LuaArgumentError(position: position, problem: error.message, refusal: error.refusal)
        }
    }

    /// Argument `position`, which must be a string.
    public func string(_ position: Int) throws -> String {
        guard let s = stack.string(at: Int32(position)) else { throw expected("string", position) }
        return s
    }

    /// At most the first `maxBytes` bytes of argument `position`, which must be a string, and
    /// its whole length in bytes: the host copies no more than it keeps.
    public func stringPrefix(_ position: Int, maxBytes: Int) throws -> (prefix: String, length: Int) {
        guard stack.type(at: Int32(position)) == .string else { throw expected("string", position) }
        return readStringPrefix(stack.L, Int32(position), maxBytes: maxBytes)
    }

    /// Argument `position`, which must be an integer (an integral float counts).
    public func integer(_ position: Int) throws -> Int {
        guard let i = stack.integer(at: Int32(position)) else { throw expected("integer", position) }
        return i
    }

    /// Argument `position`, which must be a table, converted whole.
    public func table(_ position: Int) throws -> LuaValue {
        guard type(position) == .table else { throw expected("table", position) }
        return try value(position)
    }

    // `callerLocation` (where the calling Lua code is) reads Lua's debug record: LuaState+Unsafe.swift.

    /// Charges `units` instructions for the host's own work in this call (recording what the
    /// script did) to the call's budget and the run's. When that spends either, the script stops
    /// at its next instruction, as when it spends them itself: `pcall` cannot catch it.
    public func charge(_ units: Int) {
        _ = rh_charge_quietly(stack.L, Int64(clamping: units))
    }

    /// Argument `position` when it is a table, as a field reader valid during the call.
    public func tableView(_ position: Int) throws -> LuaTableView {
        guard let view = stack.table(at: Int32(position)) else { throw expected("table", position) }
        return view
    }

    /// Argument `position`, which must be a function, kept in the registry for later calls.
    public func function(_ position: Int, name: String) throws -> LuaFunctionRef {
        guard type(position) == .function else { throw expected("function", position) }
        let host = rh_host_of(stack.L)
        rh_host_alloc_begin(host)
        lua_pushvalue(stack.L, Int32(position))
        let ref = luaL_ref(stack.L, CLUA_REGISTRYINDEX)
        rh_host_alloc_end(host)
        rh_label_ref(host, ref, name)
        return LuaFunctionRef(ref: ref, name: name)
    }
}
