import LuaHost

// Every unsafe construct of rehearse-fuzz lives in this file: the one shared Lua state, and
// libFuzzer's C entry points, whose inputs arrive as pointers.

extension Fuzz {
    /// One Lua state for every input (as the host keeps one per scenario); small limits.
    // nonisolated(unsafe): the fuzzer calls `run` from one thread only, and a LuaState is used from one thread at a time.
    nonisolated(unsafe) static let state: LuaState = {
        let state = try! LuaState(limits: LuaLimits(instructions: 200_000, memoryBytes: 8 << 20, wallClockMilliseconds: 0))
        try! state.openSandbox()
        return state
    }()
}

#if FUZZING
/// libFuzzer's own driver, called from the entry point SwiftPM gives an executable.
@_silgen_name("LLVMFuzzerRunDriver")
func LLVMFuzzerRunDriver(
    _ argc: UnsafeMutablePointer<Int32>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
    _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> Int32
) -> Int32

/// The entry libFuzzer's driver calls for each input.
@_cdecl("LLVMFuzzerTestOneInput")
/// Safe: libFuzzer's buffer holds `size` bytes for the call, and they are copied out at once.
public func fuzzOne(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    guard let data else { return 0 }
    Fuzz.run(Array(UnsafeBufferPointer(start: data, count: size)))
    return 0
}

@_cdecl("rehearse_fuzz_main")
func fuzzMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    var count = argc
    var arguments = argv
    return LLVMFuzzerRunDriver(&count, &arguments, fuzzOne)
}
#endif
