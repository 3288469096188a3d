/// The limits every top-level call into a state runs under.
public struct LuaLimits: Sendable, Equatable {
    /// How the instruction budget is counted.
    public enum Counting: Sendable, Equatable {
        /// A count hook runs for the whole call: the budget is exact and deterministic, and every
        /// instruction pays Lua's hooked interpreter path (about 10–20% on a health call). A
        /// straight function (no loop, no call, shorter than a hook step: the hook would count
        /// nothing) runs without it while no script has touched a metatable.
        case exact
        /// A watchdog thread arms the count hook only once a call has run longer than this many
        /// milliseconds; from then on `instructions` more are allowed. A call that finishes in
        /// time pays nothing, no call is stopped before it has run `instructions` instructions,
        /// and a runaway call stops after the grace time plus the budget. Not deterministic: how
        /// much runs before the hook is armed depends on the machine's load, so a call near the
        /// budget may pass on one run and fail on another. For trusted, measured code only.
        case watchdog(milliseconds: Int)
    }

    /// Instructions one top-level call may execute (0 = unlimited).
    public var instructions: Int
    /// Bytes the whole state may hold (0 = unlimited).
    public var memoryBytes: Int
    /// How `instructions` is enforced.
    public var counting: Counting
    /// Milliseconds of CPU time one call's thread may spend in it (0 = never) before the call
    /// fails with `LuaError.Kind.cpuTime` at its next instruction: a backstop for work the count
    /// hook cannot see (the collector of a pathological heap, a C library function). Measured on
    /// the thread's CPU clock, so the verdict does not depend on how many threads share the
    /// machine. A call still inside one C function after twice this ends the process with exit
    /// status 2 (nothing can interrupt it). (The name predates the CPU clock.)
    public var wallClockMilliseconds: Int
    /// Milliseconds of CPU time all calls of one run may spend together (sampled at each tick of
    /// the watchdog; 0 = never) before the call running then, or the next, fails with
    /// `LuaError.Kind.runCPUTime`: a last resort for a run of many calls that each stay within
    /// their limits but spend long in C work no budget counts. The host starts each run's count
    /// with `LuaState.resetRunTime()`.
    public var runWallClockMilliseconds: Int = 12_000
    /// Instructions all calls of one run may execute together, nested calls included (0 =
    /// unlimited; counted only with `.exact`): the deterministic bound on a run of many calls
    /// that each stay within `instructions`. The host starts each run's count with
    /// `LuaState.resetRunTime()`. A run that spends it fails like a call that spends its own.
    public var runInstructions: Int = 2_000_000_000

    /// 10,000,000 instructions a call, 64 MiB, counted exactly (the verdict and the line named
    /// are the same on every run, whatever the machine's load), a 5 s CPU-time backstop.
    public init(instructions: Int = 10_000_000, memoryBytes: Int = 64 << 20, counting: Counting = .exact,
                wallClockMilliseconds: Int = 5_000) {
        self.instructions = instructions
        self.memoryBytes = memoryBytes
        self.counting = counting
        self.wallClockMilliseconds = wallClockMilliseconds
    }

    /// No budget, no memory cap, no backstop: for trusted code only.
    public static let unlimited: LuaLimits = {
        var limits = LuaLimits(instructions: 0, memoryBytes: 0, wallClockMilliseconds: 0)
        limits.runWallClockMilliseconds = 0
        limits.runInstructions = 0
        return limits
    }()
}
