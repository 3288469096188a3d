import Glibc

// Every unsafe construct of Scenario lives in this file: the sweep's worker threads, started
// through pthreads. (The runtime's hot fields keep their exclusivity checks: without them
// `rehearse-bench scenario` measured the same, 270-278 ns a call either way.)

extension WorkerThread {
    /// Starts the thread; false when the system cannot (no memory or threads left), an error
    /// the sweep reports rather than a trap. Safe: the attributes live for the `pthread_create`
    /// call (destroyed and freed by the `defer`); the worker is passed retained and the new thread
    /// takes that retain over (released here instead when the thread could not start), so it
    /// lives until its body has run. It buys an 8 MiB stack, which Dispatch's threads do not have.
    func start() -> Bool {
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
        if status != 0 { Unmanaged<WorkerThread>.fromOpaque(context).release() }
        return status == 0
    }
}
