import Formats
import Glibc

/// A thread of the sweep's own with an 8 MiB stack, as the main thread has: Lua's parser and
/// its C calls recurse on the C stack, and the pool threads of Dispatch get far less.
final class WorkerThread: @unchecked Sendable {  // safe: see below (`body` immutable, `thread` touched on the creating thread only)
    // Safe: `body` is set once before the thread starts and read only by that thread; `thread`
    // is written by `start` and read by `join`, both on the creating thread.
    let body: @Sendable () -> Void
    var thread: pthread_t = 0

    init(_ body: @escaping @Sendable () -> Void) { self.body = body }

    // `start()`, which goes through pthreads, is in WorkerThread+Unsafe.swift.

    /// Waits for the thread to end.
    func join() { pthread_join(thread, nil) }
}

/// How many threads a sweep runs at once: what was asked, but no more than the seeds, the
/// cores (runs are CPU-bound: more threads only hold more memory) and what memory holds.
public enum SweepCapacity {
    /// What one thread may hold: its 8 MiB stack, a Lua state up to its 64 MiB cap, an allocator
    /// arena and the run's engine.
    public static let bytesPerThread = 160 << 20
    /// What the process keeps for itself before any thread is counted.
    public static let reservedBytes = 1 << 30

    /// Threads for `jobs` asked and `seeds` to run: at least 1, at most `seeds`, the cores, and
    /// (physical memory or the address-space limit, whichever is lower, less `reservedBytes`)
    /// ÷ `bytesPerThread`.
    public static func threads(jobs: Int, seeds: Int) -> Int {
        max(1, min(jobs, seeds, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))), memoryThreads))
    }

    /// The threads memory holds.
    static var memoryThreads: Int {
        let pages = sysconf(Int32(_SC_PHYS_PAGES)), pageSize = sysconf(Int32(_SC_PAGESIZE))
        var memory = pages > 0 && pageSize > 0 ? CheckedNumber.product(pages, pageSize, atMost: Int.max) : Int.max
        var limit = rlimit()
        if getrlimit(__rlimit_resource_t(RLIMIT_AS.rawValue), &limit) == 0, limit.rlim_cur != rlim_t.max {  // rlim_t.max: RLIM_INFINITY
            memory = min(memory, Int(clamping: limit.rlim_cur))
        }
        return max(1, (memory - reservedBytes) / bytesPerThread)
    }
}
