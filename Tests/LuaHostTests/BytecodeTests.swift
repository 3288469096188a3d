import CLua
import Formats
import Foundation
import LuaHost
import XCTest

/// Bytes written by lua_dump, collected through a C callback.
nonisolated(unsafe) private var dumped: [UInt8] = []

/// Real precompiled chunks, made with Lua's own lua_dump, are refused everywhere.
final class BytecodeTests: XCTestCase {
    func realBytecode() -> [UInt8] {
        let L = luaL_newstate()!
        defer { lua_close(L) }
        XCTAssertEqual(luaL_loadstring(L, "return 6 * 7"), LUA_OK)
        dumped = []
        let writer: lua_Writer = { _, bytes, size, _ in
            dumped += UnsafeRawBufferPointer(start: bytes, count: size)
            return 0
        }
        XCTAssertEqual(lua_dump(L, writer, nil, 0), 0)
        return dumped
    }

    func testPrecompiledFileAndTextAreRefused() throws {
        let bytes = realBytecode()
        XCTAssertEqual(bytes.first, 0x1B)
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("chunk-\(UUID().uuidString).luac").path
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let state = try LuaState()
        try state.openSandbox()
        XCTAssertThrowsError(try state.loadFile(path)) { error in
            XCTAssertEqual((error as? LuaError)?.kind, .syntax)
            XCTAssertEqual((error as? LuaError)?.refusal, .sandbox(.textChunksOnly), "\(error)")
        }
        XCTAssertThrowsError(try state.load(String(decoding: bytes, as: UTF8.self), chunkName: "x")) { error in
            XCTAssertEqual((error as! LuaError).kind, .syntax)
            XCTAssertEqual((error as? LuaError)?.refusal, .sandbox(.textChunksOnly), "\(error)")
        }
        // Through the sandbox's load: nil and a message, as Lua's load reports failures.
        state.setGlobal("chunk", .string(String(decoding: bytes, as: UTF8.self)))
        let result = try state.run("return load(chunk)", chunkName: "l.lua")
        XCTAssertEqual(result.first, .nil)
        XCTAssertEqual(result.last, "attempt to load a binary chunk (mode is 't')")
    }

    /// A source file holding bytes that are not UTF-8 is refused at the line of the first one,
    /// never loaded with the bytes replaced; UTF-8 text of several bytes a character loads.
    func testASourceThatIsNotUTF8IsRefusedAtItsLine() throws {
        let source = Array("local a = 1\n-- café\nlocal s = \"v".utf8) + [0xFF] + Array("\"\nreturn s\n".utf8)
        XCTAssertEqual(LuaSourceText.decode(source), .failure(LuaSourceText.BadLine(line: 3)))
        XCTAssertEqual(LuaSourceText.decode(Array("-- café\nreturn 1".utf8)), .success("-- café\nreturn 1"))
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("latin-\(UUID().uuidString).lua").path
        try Data(source).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let state = try LuaState()
        try state.openSandbox()
        XCTAssertThrowsError(try state.loadFile(path)) { error in
            XCTAssertEqual((error as? LuaError)?.kind, .syntax)
            XCTAssertEqual((error as? LuaError)?.place, .script(ScriptLine(file: path, line: 3)))
        }
    }
}
