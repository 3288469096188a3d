public import CLua
import Glibc

/// The kinds of value a Lua stack slot or table field can hold.
public enum LuaType: Int32, Sendable {
    case none = -1, `nil` = 0, boolean, lightUserdata, number, string, table, function, userdata, thread

    /// Lua's own name for the type.
    public var name: String {
        switch self {
        case .none: return "no value"
        case .nil: return "nil"
        case .boolean: return "boolean"
        case .lightUserdata, .userdata: return "userdata"
        case .number: return "number"
        case .string: return "string"
        case .table: return "table"
        case .function: return "function"
        case .thread: return "thread"
        }
    }
}

/// A view of a state's stack for pushing arguments and reading results. Valid only inside the
/// closure it was handed to; it never runs script code (reads are raw, without metamethods).
public struct LuaStack {
    @usableFromInline let L: OpaquePointer

    @usableFromInline init(L: OpaquePointer) { self.L = L }

    /// The index of the top slot (the number of slots in use).
    @inlinable
    public var top: Int32 { lua_gettop(L) }

    /// The type at `index`.
    public func type(at index: Int32) -> LuaType { LuaType(rawValue: lua_type(L, index)) ?? .none }

    /// Pushes an integer.
    @inlinable
    public func push(_ value: Int) { lua_pushinteger(L, lua_Integer(value)) }
    /// Pushes a float.
    @inlinable
    public func push(_ value: Double) { lua_pushnumber(L, value) }
    /// Pushes a boolean.
    @inlinable
    public func push(_ value: Bool) { lua_pushboolean(L, value ? 1 : 0) }
    /// Pushes a string (bytes as UTF-8; Lua strings may hold any bytes).
    public func push(_ value: String) {
        pushBytes(L, value)
    }

    /// Pushes any `LuaValue`, building tables as needed.
    public func push(_ value: LuaValue) {
        _ = lua_checkstack(L, 4)  // nested tables take slots; this never raises
        switch value {
        case .nil: lua_pushnil(L)
        case .bool(let b): push(b)
        case .integer(let i): push(i)
        case .double(let d): push(d)
        case .string(let s): push(s)
        case .array(let items):
            lua_createtable(L, Int32(clamping: items.count), 0)
            for (i, item) in items.enumerated() {
                push(item)
                lua_rawseti(L, -2, lua_Integer(i + 1))
            }
        case .table(let fields):
            lua_createtable(L, 0, Int32(clamping: fields.count))
            for key in fields.keys.sorted() {
                push(key)
                push(fields[key]!)
                lua_rawset(L, -3)
            }
        }
    }

    /// At most the first `maxBytes` bytes of the string at `index` (numbers are not converted),
    /// or nil: the host copies no more than it keeps.
    public func string(at index: Int32, maxBytes: Int) -> String? {
        guard lua_type(L, index) == LUA_TSTRING else { return nil }
        return readStringPrefix(L, index, maxBytes: maxBytes).prefix
    }

    /// The string at `index` (numbers are not converted), or nil.
    @inlinable
    public func string(at index: Int32) -> String? {
        guard lua_type(L, index) == LUA_TSTRING else { return nil }
        return readString(L, index)
    }

    /// The integer at `index` (a float with an integral value counts), or nil.
    @inlinable
    public func integer(at index: Int32) -> Int? {
        var ok: Int32 = 0
        let v = clua_tointegerx(L, index, &ok)
        return ok != 0 && lua_type(L, index) == LUA_TNUMBER ? Int(v) : nil
    }

    /// The table at `index` as a field reader, or nil when it is not a table.
    @inlinable
    public func table(at index: Int32) -> LuaTableView? {
        lua_type(L, index) == LUA_TTABLE ? LuaTableView(L: L, index: lua_absindex(L, index)) : nil
    }

    /// Whether the value at `index` has a metatable (which a raw read must not trigger).
    @usableFromInline
    func hasMetatable(_ index: Int32) -> Bool {
        guard lua_getmetatable(L, index) != 0 else { return false }
        clua_pop(L, 1)
        return true
    }

    /// Converts the value at `index` whole (see `LuaConversion` for the bounds). Throws for
    /// functions, userdata, threads, tables with other keys than strings or 1...n, cycles, tables
    /// nested deeper than `LuaConversion.maxDepth` and values past the size bounds, naming the
    /// path that failed. Fields are visited in sorted key order, so the same table always gives
    /// the same result and the same error, whatever Lua's hash order.
    public func value(at index: Int32, maxValues: Int = 100_000,
                      maxStringBytes: Int = 16 << 20) throws(LuaError) -> LuaValue {
        let top = lua_gettop(L)
        var conversion = LuaConversion(L: L, maxValues: maxValues, maxStringBytes: maxStringBytes)
        do {
            return try conversion.convert(lua_absindex(L, index), depth: 0)
        } catch {
            lua_settop(L, top)
            throw error
        }
    }
}

/// Reads the fields of one table on the stack, raw (no metamethods run), without converting
/// the rest of it. Valid while the table stays at its stack slot.
///
/// Field names are `StaticString`s so that the hot path (a health result read on every probe)
/// hands Lua a pointer without building a C string; `value(forKey:)` takes any `String`.
public struct LuaTableView {
    @usableFromInline let L: OpaquePointer
    /// The absolute stack index of the table.
    public let index: Int32
    /// A table without a metatable is read with `lua_getfield`'s fast path, which then cannot
    /// run script code; one with a metatable is read raw.
    @usableFromInline let raw: Bool

    @usableFromInline init(L: OpaquePointer, index: Int32) {
        self.L = L
        self.index = index
        self.raw = LuaStack(L: L).hasMetatable(index)
    }

    @inlinable @inline(__always)
    func with<R>(_ key: StaticString, _ body: (Int32) throws -> R) rethrows -> R {
        let type = raw ? clua_rawgetfield_abs(L, index, cString(key)) : lua_getfield(L, index, cString(key))
        defer { clua_pop(L, 1) }
        return try body(type)
    }

    /// Which of `choices` the string `t[key]` equals, byte for byte, without building a Swift
    /// string; nil when it is not a string or matches none.
    @inlinable
    public func string(_ key: StaticString, oneOf choices: LuaStringChoices) -> Int? {
        with(key) { $0 == LUA_TSTRING ? choices.match(L, -1) : nil }
    }

    /// The type of `t[key]`.
    @inlinable
    public func type(_ key: StaticString) -> LuaType { with(key) { LuaType(rawValue: $0) ?? .none } }

    /// `t[key]` when it is a string.
    @inlinable
    public func string(_ key: StaticString) -> String? { with(key) { $0 == LUA_TSTRING ? readString(L, -1) : nil } }

    /// At most the first `maxBytes` bytes of the string `t[key]`, or nil.
    public func string(_ key: StaticString, maxBytes: Int) -> String? {
        with(key) { $0 == LUA_TSTRING ? readStringPrefix(L, -1, maxBytes: maxBytes).prefix : nil }
    }

    /// `t[key]` when it is an integer (or an integral float).
    @inlinable
    public func integer(_ key: StaticString) -> Int? { with(key) { _ in LuaStack(L: L).integer(at: -1) } }

    /// `t[key]` when it is a number.
    @inlinable
    public func number(_ key: StaticString) -> Double? {
        with(key) { $0 == LUA_TNUMBER ? clua_tonumberx(L, -1, nil) : nil }
    }

    /// `t[key]` when it is a boolean.
    @inlinable
    public func bool(_ key: StaticString) -> Bool? { with(key) { $0 == LUA_TBOOLEAN ? lua_toboolean(L, -1) != 0 : nil } }

    /// Runs `body` on the table at `t[key]`; nil when that field is not a table.
    @inlinable
    public func table<R>(_ key: StaticString, _ body: (LuaTableView) throws -> R) rethrows -> R? {
        try with(key) { type in
            type == LUA_TTABLE ? try body(LuaTableView(L: L, index: lua_absindex(L, -1))) : nil
        }
    }

    /// `t[key]` converted whole, for any key.
    public func value(forKey key: String, maxValues: Int = 100_000,
                      maxStringBytes: Int = 16 << 20) throws(LuaError) -> LuaValue {
        LuaStack(L: L).push(key)
        _ = lua_rawget(L, index)
        defer { clua_pop(L, 1) }
        return try LuaStack(L: L).value(at: -1, maxValues: maxValues, maxStringBytes: maxStringBytes)
    }

    /// Copies `t[key]` into slot `slot` of the table kept by `table` (nil clears the slot),
    /// without converting it; returns its type. For keeping a value for later at the cost of a
    /// few stack operations.
    @inlinable
    public func copy(_ key: StaticString, into table: LuaTableRef, slot: Int) -> LuaType {
        _ = lua_rawgeti(L, CLUA_REGISTRYINDEX, lua_Integer(table.ref))
        let type = raw ? clua_rawgetfield_abs(L, index, cString(key)) : lua_getfield(L, index, cString(key))
        lua_rawseti(L, -2, lua_Integer(slot))
        clua_pop(L, 1)
        return LuaType(rawValue: type) ?? .none
    }

    /// The string key of this table equal to `name` ignoring ASCII case (the smallest, byte-wise,
    /// when several are), or nil. For wire keys that Azure matches case-insensitively.
    /// Allocates nothing unless a key matches.
    public func key(caseInsensitive name: StaticString) -> String? {
        var found: String?
        lua_pushnil(L)
        while lua_next(L, index) != 0 {
            clua_pop(L, 1)
            guard lua_type(L, -1) == LUA_TSTRING else { continue }
            var length = 0
            guard let bytes = clua_tolstring(L, -1, &length), length == name.utf8CodeUnitCount,
                  sameBytesIgnoringASCIICase(bytes, name, length) else { continue }
            let key = readString(L, -1)
            if found.map({ key < $0 }) ?? true { found = key }
        }
        return found
    }

    /// Copies `t[key]` (any string key) into slot `slot` of the table kept by `table`; its type.
    public func copy(key: String, into table: LuaTableRef, slot: Int) -> LuaType {
        _ = lua_rawgeti(L, CLUA_REGISTRYINDEX, lua_Integer(table.ref))
        LuaStack(L: L).push(key)
        let type = lua_rawget(L, index)
        lua_rawseti(L, -2, lua_Integer(slot))
        clua_pop(L, 1)
        return LuaType(rawValue: type) ?? .none
    }

    /// How many entries the table has (all keys, not only 1...n).
    public var entryCount: Int {
        var count = 0
        lua_pushnil(L)
        while lua_next(L, index) != 0 {
            count += 1
            clua_pop(L, 1)
        }
        return count
    }

}

/// A fixed set of strings to match Lua strings against without allocating (e.g. the health
/// states "Healthy", "Unhealthy"). Build it once and keep it.
public struct LuaStringChoices: Sendable {
    @usableFromInline let choices: [StaticString]

    /// The choices, in the order `match` reports them.
    public init(_ choices: [StaticString]) { self.choices = choices }

    @usableFromInline
    func match(_ L: OpaquePointer, _ index: Int32) -> Int? {
        var length = 0
        guard let bytes = clua_tolstring(L, index, &length) else { return nil }
        for (i, choice) in choices.enumerated() where choice.utf8CodeUnitCount == length {
            if sameBytes(bytes, choice, length) { return i }
        }
        return nil
    }
}
