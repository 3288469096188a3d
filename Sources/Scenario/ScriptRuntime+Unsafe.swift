import Formats
import Glibc
import LuaHost
import UpgradeEngine

// Every unsafe construct of Scenario lives in this file: the runtime's hot stored state without
// exclusivity checks, and the sweep's worker threads started through pthreads.

/// The running side of a loaded scenario: its Lua state and what the engine's calls into it
/// need (each instance's `vm` table, the model versions, the virtual clock, what the script is
/// doing now). It knows nothing of the simulation: the engine hands each call an instance
/// snapshot and the time, and model versions arrive as `modelUpdated` events.
///
/// Its stored state is declared here, in Scenario's one file of unsafe constructs: `activity`,
/// `now` and `vms` are read and written on every probe, on the simulation's one thread, never
/// while a behaviour that could reach them runs; unchecked exclusivity spares a runtime check per
/// access (two to four per probe).
final class ScriptRuntime {
    let state: LuaState
    /// What the script is doing now (hot: see above).
    @exclusivity(unchecked) var activity = Activity.loading
    /// An error raised inside a host function (a nested health, phase or fault call failed while
    /// an action ran) that must end the run whatever the script does with the Lua error.
    var fatal: (any Error)?
    /// The virtual time of the call in progress, in milliseconds (`os.clock`, `os.time`).
    @exclusivity(unchecked) var now: Millis = 0
    /// Model attributes by version (version n is `models[n - 1]`).
    var models: [[String: String]]
    /// Whether each model version has the Application Health extension (`vm.model.healthExtension`).
    var healthExtensions = [false]
    /// One `vm.model` table per model version, made when an instance first shows it and shared by
    /// every instance on that version: a long attribute (a 15 MB `image`) exists once, not once
    /// per instance.
    var modelTables: [LuaTableRef?] = []
    /// Per-instance `vm` tables and what each shows (hot: see above).
    @exclusivity(unchecked) var vms: [VMSlot] = []

    init(state: LuaState, model: [String: String]) {
        self.state = state
        models = [model]
    }

}

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
