import Foundation

/// Runs `body` in a task and blocks the calling thread until it returns (the command line is
/// synchronous). The box hands the value from the task to the waiting thread; the semaphore
/// orders the write before the read, hence `@unchecked Sendable`.
public func blockingWait<T: Sendable>(_ body: @escaping @Sendable () async -> T) -> T {
    let box = WaitBox<T>()
    let done = DispatchSemaphore(value: 0)
    Task {
        box.value = await body()
        done.signal()
    }
    done.wait()
    return box.value!
}

/// Where `blockingWait`'s task leaves its value for the waiting thread.
final class WaitBox<T>: @unchecked Sendable {  // safe: written once by the task before the semaphore signals, read after the wait
    var value: T?
}
