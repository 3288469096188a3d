import CLua
import CLuaSupport
import Glibc

// Every raw pointer of the LuaHost module lives in this file: reading Lua's string bytes, knowing
// a string again by its object (LuaStringMemo), and passing Swift closures through C as opaque
// pointers.

/// Reads the string at `index` (which must be a string) without running any conversion.
@usableFromInline
func readString(_ L: OpaquePointer, _ index: Int32) -> String {
    var length = 0
    guard let bytes = clua_tolstring(L, index, &length) else { return "" }
    return bytes.withMemoryRebound(to: UInt8.self, capacity: length) {
        String(decoding: UnsafeBufferPointer(start: $0, count: length), as: UTF8.self)
    }
}

/// The string at `index` when its bytes are valid UTF-8, else nil (nothing is replaced).
func readValidString(_ L: OpaquePointer, _ index: Int32) -> String? {
    var length = 0
    guard let bytes = clua_tolstring(L, index, &length) else { return nil }
    return bytes.withMemoryRebound(to: UInt8.self, capacity: length) {
        String(validating: UnsafeBufferPointer(start: $0, count: length), as: UTF8.self)
    }
}

/// At most the first `maxBytes` bytes of the string at `index`, and its whole length in bytes.
func readStringPrefix(_ L: OpaquePointer, _ index: Int32, maxBytes: Int) -> (prefix: String, length: Int) {
    var length = 0
    guard let bytes = clua_tolstring(L, index, &length) else { return ("", 0) }
    let kept = min(length, max(0, maxBytes))
    let prefix = bytes.withMemoryRebound(to: UInt8.self, capacity: kept) {
        String(decoding: UnsafeBufferPointer(start: $0, count: kept), as: UTF8.self)
    }
    return (prefix, length)
}

/// Pushes a Swift string's UTF-8 bytes as a Lua string.
@usableFromInline
func pushBytes(_ L: OpaquePointer, _ value: String) {
    var value = value
    value.withUTF8 { bytes in
        _ = bytes.withMemoryRebound(to: CChar.self) { lua_pushlstring(L, $0.baseAddress, $0.count) }
    }
}

/// Compiles `text` as a text chunk named `chunkName`; Lua's status.
func loadText(_ L: OpaquePointer, _ text: String, chunkName: String) -> Int32 {
    var text = text
    return text.withUTF8 { bytes in
        bytes.withMemoryRebound(to: CChar.self) { clua_loadbufferx(L, $0.baseAddress, $0.count, chunkName, "t") }
    }
}

/// Whether `length` bytes at `bytes` equal the static string `choice` (of that length).
@usableFromInline
func sameBytes(_ bytes: UnsafePointer<CChar>, _ choice: StaticString, _ length: Int) -> Bool {
    memcmp(bytes, choice.utf8Start, length) == 0
}

/// Whether `length` bytes at `bytes` equal `name` (of that length) ignoring ASCII case.
func sameBytesIgnoringASCIICase(_ bytes: UnsafePointer<CChar>, _ name: StaticString, _ length: Int) -> Bool {
    let wanted = name.utf8Start
    for i in 0..<length {
        let a = UInt8(bitPattern: bytes[i]), b = wanted[i]
        if a == b { continue }
        let lowerA = (a >= 65 && a <= 90) ? a + 32 : a, lowerB = (b >= 65 && b <= 90) ? b + 32 : b
        if lowerA != lowerB { return false }
    }
    return true
}

/// The identity of the table at `index` (its address, only ever compared, never shown).
func tableIdentity(_ L: OpaquePointer, _ index: Int32) -> UInt {
    UInt(bitPattern: lua_topointer(L, index))
}

/// A static string's bytes as the C string Lua's API takes (static strings are nul-terminated).
@inlinable @inline(__always)
func cString(_ s: StaticString) -> UnsafePointer<CChar> {
    UnsafeRawPointer(s.utf8Start).assumingMemoryBound(to: CChar.self)
}

/// A Swift function exposed to Lua, kept alive by its `LuaState` and reached from C through an
/// unretained pointer.
/// A Swift function box retained for Lua (released when the state closes).
typealias RetainedSwiftFunction = Unmanaged<SwiftFunctionBox>

final class SwiftFunctionBox {
    let name: String
    let body: LuaSwiftFunction
    /// The state's record of the last refusal a Swift function raised.
    let raised: RaisedError
    init(name: String, body: @escaping LuaSwiftFunction, raised: RaisedError) {
        self.name = name
        self.body = body
        self.raised = raised
    }
}

/// The single C entry point for every Swift function: runs the closure and leaves either its
/// results or an error message on the stack. It never raises: the C trampoline does.
let swiftDispatch: rh_dispatch_fn = { L, closure in
    guard let L, let closure else { return RH_SWIFT_ERROR }
    let box = Unmanaged<SwiftFunctionBox>.fromOpaque(closure).takeUnretainedValue()
    let stack = LuaStack(L: L)
    let arguments = LuaArguments(stack: stack, function: box.name, count: Int(lua_gettop(L)))
    do {
        let results = try box.body(arguments)
        lua_settop(L, 0)
        for value in results { stack.push(value) }
        return Int32(results.count)
    } catch let error as LuaArgumentError {
        let text = error.render(function: box.name)
        box.raised.note(text, error.refusal)
        stack.push(text)
    } catch let error as LuaError {
        let text = error.location.map { "\($0): \(error.message)" } ?? error.message
        box.raised.note(text, error.refusal, error: error)
        stack.push(text)
    } catch {
        box.raised.note("", nil)
        stack.push("\(box.name): \(error)")
    }
    return RH_SWIFT_ERROR
}

extension LuaState {
    /// Pushes a Lua function that runs `body`; the state keeps `body` alive until it closes.
    func pushSwiftFunction(named name: String, _ body: @escaping LuaSwiftFunction) {
        let box = Unmanaged.passRetained(SwiftFunctionBox(name: name, body: body, raised: raised))
        swiftFunctions.append(box)
        rh_push_swift_function(L, box.toOpaque())
    }

    /// Releases every Swift function box; called once the Lua state is closed.
    func releaseSwiftFunctions() {
        for box in swiftFunctions { box.release() }
        swiftFunctions.removeAll()
    }
}

extension LuaState {
    /// Installs the C half of the sandbox (the allowlisted libraries).
    func rh_open_sandbox_bridge() -> Int32 { rh_open_sandbox(L) }
}

extension LuaStack {
    /// Pushes registry slot `ref`.
    @usableFromInline
    func pushRegistry(_ ref: Int32) { _ = lua_rawgeti(L, CLUA_REGISTRYINDEX, lua_Integer(ref)) }
}

/// The last string read through `LuaState.string(at:maxBytes:memo:)`, kept with its copy.
public struct LuaStringMemo {
    var ref: Int32 = CLUA_NOREF
    var object: UnsafeRawPointer?
    var text = ""

    public init() {}
}

extension LuaState {
    /// At most `maxBytes` of the string at `index` (as `LuaStack.string(at:maxBytes:)`), through
    /// `memo`: the very Lua string `memo` holds gives back its copy without reading it again
    /// (`copied` 0); any other is copied and becomes the memo's. The memo keeps its string alive
    /// (a registry reference), so no other string can take its address meanwhile; a string longer
    /// than `maxBytes` is never kept. nil when the value is not a string.
    public func string(at index: Int32, maxBytes: Int, memo: inout LuaStringMemo) -> (text: String, copied: Int)? {
        guard lua_type(L, index) == LUA_TSTRING, let object = lua_topointer(L, index) else { return nil }
        if object == memo.object { return (memo.text, 0) }
        let (text, length) = readStringPrefix(L, index, maxBytes: maxBytes)
        guard length <= maxBytes else { return (text, text.utf8.count) }
        let absolute = lua_absindex(L, index)
        withHostAllocation {
            lua_pushvalue(L, absolute)
            if memo.ref == CLUA_NOREF {
                memo.ref = luaL_ref(L, CLUA_REGISTRYINDEX)
            } else {
                lua_rawseti(L, CLUA_REGISTRYINDEX, lua_Integer(memo.ref))
            }
        }
        memo.object = object
        memo.text = text
        return (text, length)
    }

    /// The same for field `key` of `table` (read raw when the table has a metatable).
    public func string(_ key: StaticString, of table: LuaTableView, maxBytes: Int, memo: inout LuaStringMemo) -> (text: String, copied: Int)? {
        table.with(key) { _ in string(at: -1, maxBytes: maxBytes, memo: &memo) }
    }

    /// Drops the string `memo` keeps.
    public func release(_ memo: inout LuaStringMemo) {
        if memo.ref != CLUA_NOREF { rh_release_ref(host, memo.ref) }
        memo = LuaStringMemo()
    }
}

extension LuaArguments {
    /// Where the Lua code that made this call is, as `chunk:line` (nil when not known). A file's
    /// chunk is its whole path: Lua's own `short_src` (what `luaL_where` writes) cuts a path
    /// longer than 60 characters to `...` and its tail, which no program can open. Other chunks
    /// are named as Lua names them.
    public var callerLocation: String? {
        var record = lua_Debug()
        guard lua_getstack(stack.L, 1, &record) != 0, lua_getinfo(stack.L, "Sl", &record) != 0, record.currentline > 0 else { return nil }
        if let source = record.source, source.pointee == CChar(UInt8(ascii: "@")) {
            return "\(String(cString: source + 1)):\(record.currentline)"
        }
        luaL_where(stack.L, 1)
        defer { clua_pop(stack.L, 1) }
        let text = stack.string(at: -1) ?? ""
        return text.hasSuffix(": ") ? String(text.dropLast(2)) : nil
    }
}
