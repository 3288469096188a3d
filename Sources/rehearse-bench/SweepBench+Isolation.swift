import Foundation
import Scenario
import UpgradeEngine

/// What a sweep's threads share: the same runs on threads that share one definition and on
/// threads that each load their own from the script. Where the second keeps its rate at the
/// largest count and the first does not, the threads lose time on the definition's shared storage.
extension SweepBenchCommand {
    func isolation(_ definition: ScenarioDefinition, scenario path: String, counts: [Int]) throws {
        var shared: [Int: [Double]] = [:], own: [Int: [Double]] = [:]
        for _ in 0..<rounds {
            for threads in counts {
                shared[threads, default: []].append(try perThreadRate(threads: threads, path: path, shared: definition))
                own[threads, default: []].append(try perThreadRate(threads: threads, path: path, shared: nil))
            }
        }
        for threads in counts {
            report("shared_definition_runs_per_s_per_thread_\(threads)", median(shared[threads]!), decimals: 2)
            report("own_definition_runs_per_s_per_thread_\(threads)", median(own[threads]!), decimals: 2)
        }
        if let low = counts.min(), let top = counts.max(), top > low {
            report("shared_definition_efficiency_\(top)_vs_\(low)", median(shared[top]!) / median(shared[low]!), decimals: 3)
            report("own_definition_efficiency_\(top)_vs_\(low)", median(own[top]!) / median(own[low]!), decimals: 3)
        }
    }

    /// Runs per second per thread of `perThread` seeds on each of `threads` threads started
    /// together, every thread with `shared` or, when nil, its own definition loaded from `path`
    /// before the clock starts.
    private func perThreadRate(threads: Int, path: String, shared: ScenarioDefinition?) throws -> Double {
        let ready = DispatchSemaphore(value: 0), go = DispatchSemaphore(value: 0)
        let failed = FailureCount()
        let perThread = perThread
        var start: UInt64 = 0
        let elapsed = onThreads(threads) { thread in
            var options = ScenarioOptions()
            options.environment = [:]
            let definition = shared ?? (try? ScenarioDefinition(luaScript: path, options: options))
            ready.signal()
            go.wait()
            guard let definition else { failed.add(); return }
            for seed in (thread * perThread)..<((thread + 1) * perThread) {
                if (try? Rehearsal.run(definition, RunInputs(seed: UInt64(seed), recordEvents: false))) == nil { failed.add() }
            }
        } whenStarted: {
            for _ in 0..<threads { ready.wait() }
            start = nowNanoseconds()
            for _ in 0..<threads { go.signal() }
        }
        guard failed.value == 0 else { throw BenchFailure("a run of the isolation figure failed") }
        return Double(perThread) / (Double(elapsed - start) / 1e9)
    }
}

/// Runs `body` on `count` threads of 8 MiB stacks (as a sweep's are) at once, calls `whenStarted`
/// on this thread once all are started, and returns the clock when the last one ended.
func onThreads(_ count: Int, _ body: @escaping @Sendable (Int) -> Void, whenStarted: () -> Void = {}) -> UInt64 {
    let done = DispatchSemaphore(value: 0)
    for index in 0..<count {
        let thread = Thread {
            body(index)
            done.signal()
        }
        thread.stackSize = 8 << 20
        thread.start()
    }
    whenStarted()
    for _ in 0..<count { done.wait() }
    return nowNanoseconds()
}
