import ArgumentParser
import CLuaBench
import Foundation
import Scenario
import UpgradeEngine

/// `rehearse-bench sweep`.
struct SweepBenchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sweep",
        abstract: "Sweeps of the 1,000-instance scenario: runs per second with 1 and 2 jobs, parallel efficiency, overhead against single runs, peak memory.",
        discussion: """
            With --thousand N (default 1000), also sweeps N seeds with 2 jobs (sweepN_s) and runs \
            the fair floor of the same work, N runs' health calls on 2 threads (floorN_s), and \
            prints their ratio, sweep_vs_floor, which holds from one machine to another.
            """
    )

    @Option(help: "Seeds of the timed sweeps.") var seeds = 200
    @Option(help: "Seeds of the memory check (peak_rss_mb is read after this sweep too).") var large = 2_000
    @Option(help: "Seeds of the 2-job sweep timed against the floor (0: skip).") var thousand = 1_000
    @Option(name: .customLong("jobs-list"), help: "Counts of jobs, e.g. 1,2,4,8,16: runs per second and efficiency at each (--per-thread seeds per thread, medians of --rounds) beside the machine's own, the sweep as one-job processes at 4 and the largest count, then the distributed gate against one process; nothing else.")
    var jobsList: String?
    @Option(name: .customLong("per-thread"), help: "Seeds per thread at each count of --jobs-list.") var perThread = 40
    @Option(help: "Rounds through the counts of --jobs-list; each figure is the median of its rounds.") var rounds = 3
    @Option(help: "The seeds the gate may use (its budget), with --jobs-list; 0 skips the gate.") var gateSeeds = 2_000
    @Option(help: "Instances of the swept scale set (100 to 10000): a smaller or larger working set per run.") var capacity = 1000
    @Flag(help: "With --jobs-list: also the same runs on threads sharing one definition and on threads each loading its own, at 4 and the largest count.")
    var isolation = false
    @Option(name: .customLong("rehearse"), help: "The rehearse binary the distributed gate runs (default: beside rehearse-bench).") var rehearseBinary: String?

    func validate() throws {
        guard (100...10_000).contains(capacity) else { throw ValidationError("--capacity must be 100 to 10000 instances") }
        guard gateSeeds >= 0 else { throw ValidationError("--gate-seeds must be 0 (no gate) or more") }
        guard !isolation || jobsList != nil else { throw ValidationError("--isolation is a figure of --jobs-list; give the counts too") }
    }

    func run() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("rehearse-bench-sweep-\(getpid()).lua").path
        try benchScenarioSource(capacity: capacity).write(toFile: path, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: path) }
        var options = ScenarioOptions()
        options.environment = [:]
        let definition = try ScenarioDefinition(luaScript: path, options: options)
        if let jobsList {
            let counts = jobsList.split(separator: ",").compactMap { Int($0) }
            guard !counts.isEmpty, counts.count == jobsList.split(separator: ",").count, counts.allSatisfy({ $0 >= 1 }) else {
                throw ValidationError("--jobs-list: expected counts of jobs such as 1,2,4,8,16")
            }
            guard (1...10_000).contains(perThread), (1...100).contains(rounds) else {
                throw ValidationError("--per-thread must be 1 to 10000 and --rounds 1 to 100")
            }
            try scaling(definition, counts: counts, scenarioPath: path)
            if isolation {
                // 4 threads against the largest count, both within the cores.
                let compared = Set([4, counts.max()!]).filter { $0 <= ProcessInfo.processInfo.activeProcessorCount }.sorted()
                if compared.count == 2 {
                    try self.isolation(definition, scenario: path, counts: compared)
                } else {
                    print("isolation_skipped=needs 4 threads and a larger count within the \(ProcessInfo.processInfo.activeProcessorCount) cores")
                }
            }
            if gateSeeds > 0 { try distributedGate(scenario: path, jobs: min(counts.max()!, ProcessInfo.processInfo.activeProcessorCount), budget: gateSeeds) }
            return
        }
        // The single-run wall time, in this process: the median of 5 runs.
        var singles: [Double] = []
        for seed in 0..<5 {
            let start = nowNanoseconds()
            _ = try Rehearsal.run(definition, RunInputs(seed: UInt64(seed), recordEvents: false))
            singles.append(Double(nowNanoseconds() - start) / 1e9)
        }
        var setups: [Double] = []
        for seed in 0..<20 {
            let start = nowNanoseconds()
            try Rehearsal.setUp(definition, seed: UInt64(seed))
            setups.append(Double(nowNanoseconds() - start) / 1e6)
        }
        let list = (0..<UInt64(seeds)).map { $0 }
        func timed(jobs: Int, seeds: [UInt64]) throws -> Double {
            let start = nowNanoseconds()
            let digests = try Sweep.run(definition, seeds: seeds, jobs: jobs)
            guard digests.allSatisfy({ $0.code == .completed }) else { throw ValidationError("the benchmark scenario did not complete") }
            return Double(nowNanoseconds() - start) / 1e9
        }
        let one = try timed(jobs: 1, seeds: list)
        let two = try timed(jobs: 2, seeds: list)
        let rss200 = peakRSSMegabytes()
        _ = try timed(jobs: 2, seeds: (0..<UInt64(large)).map { $0 })
        let rssLarge = peakRSSMegabytes()
        let perSecond1 = Double(seeds) / one, perSecond2 = Double(seeds) / two
        // What this machine gives two threads of independent work: the C host's Lua loop alone,
        // then on two threads at once (each its own state), the same number of calls each.
        let calls: Int64 = 2_000_000
        var ceilings: [Double] = []
        for _ in 0..<3 {
            let alone = timedLoop(threads: 1, calls: calls)
            let pair = timedLoop(threads: 2, calls: calls)
            ceilings.append(alone / pair)
        }
        var thousandFigures: (sweep: Double, floor: Double)?
        if thousand > 0 {
            let sweep = try timed(jobs: 2, seeds: (0..<UInt64(thousand)).map { $0 })
            let bench = try ScenarioUnderTest()
            defer { bench.remove() }
            let (calls, upgraded) = try bench.reference()
            let failures = FailureCount()
            let start = nowNanoseconds()
            DispatchQueue.concurrentPerform(iterations: 2) { worker in
                for _ in stride(from: worker, to: thousand, by: 2) where (try? bench.floor(calls: calls, upgradedMillis: upgraded)) == nil { failures.add() }
            }
            guard failures.value == 0 else { throw ValidationError("the floor's health calls failed") }
            thousandFigures = (sweep, Double(nowNanoseconds() - start) / 1e9)
        }
        print("runs=\(seeds)")
        report("single_run_s", median(singles), decimals: 4)
        report("setup_ms", median(setups), decimals: 3)
        report("runs_per_s_1", perSecond1, decimals: 2)
        report("runs_per_s_2", perSecond2, decimals: 2)
        report("peak_rss_mb_\(seeds)", rss200)
        report("peak_rss_mb_\(large)", rssLarge)
        let efficiency = perSecond2 / (2 * perSecond1)
        report("machine_parallel_efficiency", median(ceilings), decimals: 3)
        report("parallel_efficiency", efficiency, decimals: 3)
        report("parallel_vs_machine", efficiency / median(ceilings), decimals: 3)
        report("sweep_overhead_ratio", one / (Double(seeds) * median(singles)), decimals: 3)
        if let thousandFigures {
            report("sweep\(thousand)_s", thousandFigures.sweep, decimals: 2)
            report("floor\(thousand)_s", thousandFigures.floor, decimals: 2)
            report("sweep_vs_floor", thousandFigures.sweep / thousandFigures.floor, decimals: 3)
        }
    }
}

/// The process's peak resident memory so far, in MiB.
func peakRSSMegabytes() -> Double {
    var usage = rusage()
    getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
    return Double(usage.ru_maxrss) / 1024
}

/// Seconds for `threads` threads each running the C host's health loop for `calls` calls at
/// once; one thread's time over two threads' time is the parallel efficiency the machine allows.
func timedLoop(threads: Int, calls: Int64) -> Double {
    // Threads of their own, all started at once: Dispatch's pool grows as it sees fit and can
    // run some of the iterations one after another, which read as a slower machine.
    let start = nowNanoseconds()
    let end = onThreads(threads) { _ in _ = clb_c_vm_loop(scenarioHealth, "bench_health", calls, 1000) }
    // Each thread did the same work: with two perfect cores the two take as long as one.
    return Double(end - start) / 1e9
}

/// Failures counted by the floor's two threads.
final class FailureCount: @unchecked Sendable {  // safe: `count` is read and written only under `lock`
    private let lock = NSLock()
    private var count = 0
    func add() { lock.withLock { count += 1 } }
    var value: Int { lock.withLock { count } }
}
