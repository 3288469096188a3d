import ArgumentParser
import Foundation
import LuaHost

/// `rehearse-bench`: measures rehearse's hot paths and prints `key=value` lines, ratios last.
@main
struct Bench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rehearse-bench",
        abstract: "Measure rehearse's hot paths; prints key=value lines (build with -c release).",
        subcommands: [LuaCommand.self, EngineCommand.self, ScenarioCommand.self, ModelBenchCommand.self, InstructionCommand.self, SweepBenchCommand.self, StartupCommand.self, RiskBenchCommand.self, ServeBenchCommand.self]
    )

    /// The benchmarks run as `rehearse` does: freed memory kept for the next run.
    static func main() {
        ProcessMemory.keepFreedMemory()
        do {
            var command = try parseAsRoot()
            try command.run()
        } catch {
            exit(withError: error)
        }
    }
}

/// Wall-clock nanoseconds since an arbitrary start, monotonic.
func nowNanoseconds() -> UInt64 { DispatchTime.now().uptimeNanoseconds }

/// The middle value of `values` (the mean of the two middle ones for an even count).
func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    guard !sorted.isEmpty else { return .nan }
    let mid = sorted.count / 2
    return sorted.count % 2 == 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2
}

/// Prints one `key=value` line, numbers with a fixed number of decimals.
func report(_ key: String, _ value: Double, decimals: Int = 1) {
    print("\(key)=\(String(format: "%.\(decimals)f", value))")
}
