import ArgumentParser
import CLuaBench
import LuaHost

/// The health script of issue 2: a fresh nested table per call.
let healthScript = """
    function health(id, t)
      return { applicationHealthState = (t % 97 == 0) and "Unhealthy" or "Healthy",
               customMetrics = { rollingUpgrade = { PhaseOrderingNumber = id % 3, SkipUpgrade = false } } }
    end
    """

/// The states a health result may report, matched without allocating.
let healthStates = LuaStringChoices(["Healthy", "Unhealthy"])

/// What one host loop computed: its cost and checksums that prove it did the same work.
struct LoopResult: Equatable {
    var nsPerCall: Double
    var unhealthy: Int
    var phaseSum: Int
    var skipped: Int

    static func == (a: LoopResult, b: LoopResult) -> Bool {
        a.unhealthy == b.unhealthy && a.phaseSum == b.phaseSum && a.skipped == b.skipped
    }
}

/// Calls `health` through LuaHost (sandbox, budget and memory cap on), reading the state
/// string and both metrics of every result, as the engine's health source does.
func luaHostLoop(calls: Int, counting: LuaLimits.Counting) throws -> LoopResult {
    let state = try LuaState(limits: LuaLimits(counting: counting))
    try state.openSandbox()
    try state.run(healthScript, chunkName: "health.lua")
    guard let health = state.globalFunction("health") else { throw ValidationError("health is not defined") }
    var result = LoopResult(nsPerCall: 0, unhealthy: 0, phaseSum: 0, skipped: 0)
    let start = nowNanoseconds()
    for i in 0..<calls {
        try state.call(health, arguments: { stack in
            stack.push(i % 1000)
            stack.push(i)
            return 2
        }, read: { stack in
            guard let table = stack.table(at: -1) else { return }
            if table.string("applicationHealthState", oneOf: healthStates) == 1 { result.unhealthy += 1 }
            table.table("customMetrics") { metrics in
                metrics.table("rollingUpgrade") { rolling in
                    result.phaseSum += rolling.integer("PhaseOrderingNumber") ?? 0
                    if rolling.bool("SkipUpgrade") == true { result.skipped += 1 }
                }
            }
        })
    }
    result.nsPerCall = Double(nowNanoseconds() - start) / Double(calls)
    return result
}

func cLoop(calls: Int) -> LoopResult {
    let r = clb_c_loop(healthScript, Int64(calls))
    return LoopResult(nsPerCall: r.ns_per_call, unhealthy: Int(r.unhealthy), phaseSum: Int(r.phase_sum), skipped: Int(r.skipped))
}

func pureLuaLoop(calls: Int) -> LoopResult {
    let r = clb_lua_loop(healthScript, Int64(calls))
    return LoopResult(nsPerCall: r.ns_per_call, unhealthy: Int(r.unhealthy), phaseSum: Int(r.phase_sum), skipped: Int(r.skipped))
}

/// `rehearse-bench lua`: LuaHost against a C host and a pure-Lua loop, side by side.
struct LuaCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "lua",
        abstract: "Per-call cost of a health script through LuaHost (exact budget, the default), a C host and pure Lua; ratio = LuaHost/C."
    )

    @Option(help: "Paired rounds; the ratio is their median.") var rounds = 9
    @Option(help: "Calls per host per round.") var calls = 200_000

    func run() throws {
        guard rounds > 0, calls > 0 else { throw ValidationError("--rounds and --calls must be positive") }
        // `host` runs with the default limits (an exact, deterministic budget); `watchdog` with
        // the budget armed only by a 10 ms watchdog, which costs nothing on a short call but whose
        // verdict depends on the machine's load.
        var host: [Double] = [], c: [Double] = [], lua: [Double] = [], watchdog: [Double] = [], ratios: [Double] = []
        _ = try luaHostLoop(calls: calls / 4, counting: LuaLimits().counting)  // warm up
        _ = cLoop(calls: calls / 4)
        for round in 0..<rounds {
            // Alternate which host goes first so drift on a noisy machine hits both alike.
            let (h, k): (LoopResult, LoopResult)
            if round % 2 == 0 {
                h = try luaHostLoop(calls: calls, counting: LuaLimits().counting)
                k = cLoop(calls: calls)
            } else {
                k = cLoop(calls: calls)
                h = try luaHostLoop(calls: calls, counting: LuaLimits().counting)
            }
            guard h == k, k.nsPerCall > 0 else { throw ValidationError("LuaHost and C computed different results: \(h) vs \(k)") }
            host.append(h.nsPerCall)
            c.append(k.nsPerCall)
            ratios.append(h.nsPerCall / k.nsPerCall)
            lua.append(pureLuaLoop(calls: calls).nsPerCall)
            watchdog.append(try luaHostLoop(calls: calls, counting: .watchdog(milliseconds: 10)).nsPerCall)
        }
        print("calls_per_round=\(calls)")
        print("rounds=\(rounds)")
        report("pure_lua_ns", median(lua))
        report("c_host_ns", median(c))
        report("luahost_ns", median(host))
        report("luahost_watchdog_ns", median(watchdog))
        report("watchdog_ratio", median(watchdog) / median(c), decimals: 3)
        report("ratio", median(ratios), decimals: 3)
    }
}
