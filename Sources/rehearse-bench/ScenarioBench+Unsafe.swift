import ArgumentParser
import CLuaBench
import Foundation
import LuaHost

// Every unsafe construct of rehearse-bench lives in this file: the C floor's loop reads the
// upgrade times through a pointer.

extension ScenarioUnderTest {
    /// The floor doing `calls` health calls (set-up included), its vm tables changing as
    /// rehearse's do: its wall time.
    func floor(calls: Int, upgradedMillis: [Int64]) throws -> Double {
        let floorLimits = clb_limits(memory_bytes: limits.memoryBytes, instructions: Int64(limits.instructions),
                                     run_instructions: Int64(limits.runInstructions), backstop_ms: UInt32(limits.wallClockMilliseconds),
                                     run_backstop_ms: UInt32(limits.runWallClockMilliseconds))
        let start = nowNanoseconds()
        // Safe: the buffer is the array's own storage, read by the C loop only during the call.
        let result = upgradedMillis.withUnsafeBufferPointer { upgraded in
            clb_floor_loop(scenarioHealth, "bench_health", Int64(calls), 1000, floorLimits, upgraded.baseAddress)
        }
        let seconds = Double(nowNanoseconds() - start) / 1e9
        guard result.ns_per_call > 0, result.skipped == 0 else { throw ValidationError("the floor's health calls failed") }
        return seconds
    }
}
