public import AzureWire
public import Formats
import Synchronization
public import UpgradeEngine

/// Runs one definition for many seeds, in parallel, and keeps a digest of each run. Every run is
/// a `Rehearsal.run` with its own Lua state and simulation; digests are kept by seed position,
/// so the result is the same whatever the number of jobs and whichever thread ran which seed.
public enum Sweep {
    /// Runs `definition` for every seed in `seeds` with `inputs` (their seed replaced by each, no
    /// events kept), on `jobs` threads (at least one), and returns a digest per seed, in the order
    /// of `seeds`. `progress` is told how many runs are done, from whichever thread finished one.
    /// The first failed run, by seed order, stops the sweep: seeds after it are not started, and
    /// its failure is thrown. The threads are `SweepCapacity.threads(jobs:seeds:)`; one the system
    /// cannot start stops the sweep with a `SweepThreadFailure`.
    public static func run(_ definition: ScenarioDefinition, _ inputs: RunInputs, seeds: [UInt64], jobs: Int,
                           progress: (@Sendable (Int) -> Void)? = nil) throws -> [RunDigest] {
        var runInputs = inputs
        runInputs.recordEvents = false
        let work = SweepWork(count: seeds.count)
        let workers = SweepCapacity.threads(jobs: jobs, seeds: seeds.count)
        let body: @Sendable (Int) -> Void = { [runInputs] _ in
            while true {
                let index = work.next.add(1, ordering: .relaxed).oldValue
                guard index < seeds.count, index < work.firstFailure.load(ordering: .relaxed) else { return }
                let outcome = Result { () throws(RunFailure) in try Rehearsal.run(definition, runInputs.with(seed: seeds[index])) }
                switch outcome {
                case .success(let record): work.store(index, RunDigest(record))
                case .failure(let failure): work.fail(index, failure)
                }
                progress?(work.done.add(1, ordering: .relaxed).newValue)
            }
        }
        if workers == 1 {
            body(0)
        } else {
            var threads: [WorkerThread] = []
            for worker in 0..<workers {
                let thread = WorkerThread { body(worker) }
                guard thread.start() else {
                    work.stop()
                    for started in threads { started.join() }
                    throw SweepThreadFailure(threads: workers, started: threads.count)
                }
                threads.append(thread)
            }
            for thread in threads { thread.join() }
        }
        return try work.result()
    }

    /// `run` with the default inputs and `overrides`.
    public static func run(_ definition: ScenarioDefinition, seeds: [UInt64], overrides: [PolicyOverride] = [], jobs: Int,
                           progress: (@Sendable (Int) -> Void)? = nil) throws -> [RunDigest] {
        try run(definition, RunInputs(overrides: overrides), seeds: seeds, jobs: jobs, progress: progress)
    }
}

/// The system could not start a sweep thread (no memory or threads left): the sweep did not run.
public struct SweepThreadFailure: Error, Equatable, CustomStringConvertible, UserFacingError {
    /// The threads the sweep meant to run.
    public var threads: Int
    /// How many had started.
    public var started: Int

    /// `started` of `threads` threads could start.
    public init(threads: Int, started: Int) {
        self.threads = threads
        self.started = started
    }

    /// Which input to change: the number of jobs, with the value that was given.
    public var place: Location? { .setting(.jobs, value: nil) }
    /// Fewer jobs, at most as many as started.
    public var allowed: String? { "fewer jobs, such as \(max(1, started))" }
    /// The machine could not do what was asked; the input asked too much: 2.
    public var exitCode: Int32 { 2 }

    /// The sentence without the option's spelling, which the command line adds.
    public var description: String {
        "the system could not start sweep thread \(started + 1) of \(threads) (no memory or threads left)"
    }
}

/// The state the workers of one sweep share: the next seed position, how many runs are done,
/// the first failure by position, and the digests.
private final class SweepWork: Sendable {
    let next = Atomic<Int>(0)
    let done = Atomic<Int>(0)
    /// The position of the earliest failed run so far (`Int.max`: none).
    let firstFailure = Atomic<Int>(Int.max)
    private let slots: Mutex<[RunDigest?]>
    private let failures = Mutex<[Int: RunFailure]>([:])

    init(count: Int) { slots = Mutex(Array(repeating: nil, count: count)) }

    /// Stops every worker before its next seed (a thread could not start).
    func stop() { firstFailure.store(-1, ordering: .relaxed) }

    func store(_ index: Int, _ digest: RunDigest) { slots.withLock { $0[index] = digest } }

    func fail(_ index: Int, _ failure: RunFailure) {
        failures.withLock { $0[index] = failure }
        var current = firstFailure.load(ordering: .relaxed)
        while index < current {
            let (exchanged, original) = firstFailure.compareExchange(expected: current, desired: index, ordering: .relaxed)
            if exchanged { break }
            current = original
        }
    }

    /// Every digest, or the failure of the earliest failed seed.
    func result() throws(RunFailure) -> [RunDigest] {
        let first = firstFailure.load(ordering: .relaxed)
        if first != Int.max, let failure = failures.withLock({ $0[first] }) { throw failure }
        return slots.withLock { $0.map { $0! } }
    }
}
