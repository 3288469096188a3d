import Formats
import CLua

/// One conversion of a Lua value to a `LuaValue`, bounded: a script's table may be deep, cyclic,
/// or share one subtable so often that a naive walk takes exponential time.
struct LuaConversion {
    /// Tables nested deeper than this are refused.
    static let maxDepth = 32
    /// Values in the converted result, counting a shared table once for each place it appears
    /// (the default bound; a caller may set a smaller one).
    static let maxValues = 100_000
    /// Bytes of strings in the converted result, counted the same way (the default bound).
    static let maxStringBytes = 16 << 20

    let L: OpaquePointer
    /// The keys leading from the value converted to the table being converted (for messages).
    var path: [LuaValue] = []
    /// Tables being converted now: meeting one again is a cycle.
    var open: Set<UInt> = []
    /// Tables already converted, with what they count: a shared table is converted once.
    var done: [UInt: (value: LuaValue, values: Int, bytes: Int)] = [:]
    var values = 0
    var bytes = 0
    /// The bounds of this conversion.
    let valueLimit: Int
    let byteLimit: Int

    init(L: OpaquePointer, maxValues: Int = LuaConversion.maxValues, maxStringBytes: Int = LuaConversion.maxStringBytes) {
        self.L = L
        valueLimit = maxValues
        byteLimit = maxStringBytes
    }

    var pathText: String {
        var text = "value"
        for key in path {
            switch key {
            case .string(let s): text += "." + ScriptText.escaped(s)
            case .integer(let i): text += "[\(i)]"
            default: break
            }
        }
        return text
    }

    /// The refusal of the value at `pathText` for `problem`, with its sentence.
    func failure(_ problem: HostRefusal.ValueProblem, _ message: String) -> LuaError {
        var error = LuaError(kind: .runtime, message: message)
        error.refusal = .value(path: pathText, problem)
        return error
    }

    mutating func count(values more: Int, bytes moreBytes: Int) throws(LuaError) {
        values += more
        bytes += moreBytes
        if values > valueLimit {
            throw failure(.tooManyValues(valueLimit), "\(pathText) holds more than \(valueLimit) values (counting a shared table each time it appears)")
        }
        if bytes > byteLimit {
            throw failure(.tooManyBytes(byteLimit), "\(pathText) holds more than \(byteLimit) bytes of strings")
        }
    }

    mutating func convert(_ index: Int32, depth: Int) throws(LuaError) -> LuaValue {
        switch lua_type(L, index) {
        case LUA_TNIL, LUA_TNONE: return .nil
        case LUA_TBOOLEAN:
            try count(values: 1, bytes: 0)
            return .bool(lua_toboolean(L, index) != 0)
        case LUA_TNUMBER:
            try count(values: 1, bytes: 0)
            if lua_isinteger(L, index) != 0 { return .integer(Int(clua_tointegerx(L, index, nil))) }
            return .double(clua_tonumberx(L, index, nil))
        case LUA_TSTRING:
            var length = 0
            _ = clua_tolstring(L, index, &length)
            try count(values: 1, bytes: length)
            // Text the host keeps (names, model attributes, metrics) must be text: a byte
            // sequence that is not UTF-8 is refused, never silently replaced.
            guard let text = readValidString(L, index) else {
                throw failure(.notUTF8, "\(pathText) is not valid UTF-8 text; the host accepts text only")
            }
            return .string(text)
        case LUA_TTABLE: return try convertTable(index, depth: depth)
        default:
            throw failure(.unconvertible(LuaStack(L: L).type(at: index).name), "\(pathText) is a \(LuaStack(L: L).type(at: index).name), which cannot be converted")
        }
    }

    mutating func convertTable(_ index: Int32, depth: Int) throws(LuaError) -> LuaValue {
        let identity = tableIdentity(L, index)
        if let seen = done[identity] {
            try count(values: seen.values, bytes: seen.bytes)
            return seen.value
        }
        guard !open.contains(identity) else { throw failure(.cycle, "\(pathText) contains itself (a cycle)") }
        guard depth < Self.maxDepth else { throw failure(.tooDeep(Self.maxDepth), "table nested deeper than \(Self.maxDepth) levels at \(pathText)") }
        guard lua_checkstack(L, 4) != 0 else { throw failure(.stackExhausted, "Lua stack exhausted at \(pathText)") }
        let valuesBefore = values, bytesBefore = bytes
        try count(values: 1, bytes: 0)

        // The keys first (bounded), then each field in sorted key order.
        var strings: [String] = []
        var numbered: [Int] = []
        var otherKinds: Set<String> = []
        lua_pushnil(L)
        while lua_next(L, index) != 0 {
            clua_pop(L, 1)
            if lua_type(L, -1) == LUA_TSTRING {
                strings.append(readString(L, -1))
            } else if let key = LuaStack(L: L).integer(at: -1), key >= 1 {
                numbered.append(key)
            } else {
                otherKinds.insert(LuaStack(L: L).type(at: -1).name)
            }
            if strings.count + numbered.count > valueLimit - values {
                clua_pop(L, 1)
                throw failure(.tooManyValues(valueLimit), "\(pathText) holds more than \(valueLimit) values (counting a shared table each time it appears)")
            }
        }
        guard otherKinds.isEmpty else {
            throw failure(.keyTypes(otherKinds.sorted()), "\(pathText) has keys of type \(otherKinds.sorted().joined(separator: ", ")); only strings and 1...n are allowed")
        }
        guard strings.isEmpty || numbered.isEmpty else { throw failure(.mixedKeys, "\(pathText) mixes string keys and list items") }

        open.insert(identity)
        let result: LuaValue
        if !numbered.isEmpty {
            numbered.sort()
            guard numbered.last == numbered.count else { throw failure(.holes, "\(pathText) is a list with holes") }
            var items: [LuaValue] = []
            items.reserveCapacity(numbered.count)
            for key in 1...numbered.count {
                _ = lua_rawgeti(L, index, lua_Integer(key))
                path.append(.integer(key))
                items.append(try convert(lua_gettop(L), depth: depth + 1))
                path.removeLast()
                clua_pop(L, 1)
            }
            result = .array(items)
        } else if strings.isEmpty {
            result = .array([])
        } else {
            strings.sort()
            var fields: [String: LuaValue] = [:]
            fields.reserveCapacity(strings.count)
            for key in strings {
                LuaStack(L: L).push(key)
                _ = lua_rawget(L, index)
                path.append(.string(key))
                fields[key] = try convert(lua_gettop(L), depth: depth + 1)
                path.removeLast()
                clua_pop(L, 1)
            }
            result = .table(fields)
        }
        open.remove(identity)
        done[identity] = (result, values - valuesBefore, bytes - bytesBefore)
        return result
    }
}
