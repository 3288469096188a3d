import Glibc

/// A thread of the sweep's own with an 8 MiB stack, as the main thread has: Lua's parser and
/// its C calls recurse on the C stack, and the pool threads of Dispatch get far less.
final class WorkerThread: @unchecked Sendable {
    // Safe: `body` is set once before the thread starts and read only by that thread; `thread`
    // is written by `start` and read by `join`, both on the creating thread.
    private let body: @Sendable () -> Void
    private var thread: pthread_t = 0

    init(_ body: @escaping @Sendable () -> Void) { self.body = body }

    /// Starts the thread; the process stops when it cannot (no thread is no sweep).
    func start() {
        let attributes = UnsafeMutablePointer<pthread_attr_t>.allocate(capacity: 1)
        pthread_attr_init(attributes)
        defer {
            pthread_attr_destroy(attributes)
            attributes.deallocate()
        }
        pthread_attr_setstacksize(attributes, 8 << 20)
        let context = Unmanaged.passRetained(self).toOpaque()
        let status = pthread_create(&thread, attributes, { raw in
            let worker = Unmanaged<WorkerThread>.fromOpaque(raw!).takeRetainedValue()
            worker.body()
            return nil
        }, context)
        precondition(status == 0, "cannot start a sweep thread: error \(status)")
    }

    /// Waits for the thread to end.
    func join() { pthread_join(thread, nil) }
}
