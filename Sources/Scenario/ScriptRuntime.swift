import Formats
import LuaHost
import UpgradeEngine

/// The running side of a loaded scenario: its Lua state and what the engine's calls into it
/// need (each instance's `vm` table, the model versions, the virtual clock, what the script is
/// doing now). It knows nothing of the simulation: the engine hands each call an instance
/// snapshot and the time, and model versions arrive as `modelUpdated` events.
final class ScriptRuntime {
    /// What the script is doing now, which decides what it may call: definitions (`scaleset`,
    /// `health`, `at` …) at the top level, actions inside `at` callbacks, neither inside the
    /// callbacks the engine makes (`health`, `phase`, `fault`).
    enum Activity: Equatable {
        /// The callback's name is a `StaticString`: setting the activity on every probe then costs
        /// no reference counting.
        case loading, idle, atCallback, behaviour(StaticString)

        static func == (a: Activity, b: Activity) -> Bool {
            switch (a, b) {
            case (.loading, .loading), (.idle, .idle), (.atCallback, .atCallback): return true
            case (.behaviour(let x), .behaviour(let y)): return x.description == y.description
            default: return false
            }
        }
    }

    let state: LuaState
    /// Read and written on every probe, on the simulation's one thread, never while a behaviour
    /// that could reach it runs: unchecked exclusivity spares a runtime check per access.
    @exclusivity(unchecked) var activity = Activity.loading
    /// An error raised inside a host function (a nested health, phase or fault call failed while
    /// an action ran) that must end the run whatever the script does with the Lua error.
    var fatal: (any Error)?
    /// The virtual time of the call in progress, in milliseconds (`os.clock`, `os.time`).
    @exclusivity(unchecked) var now: Millis = 0
    /// Model attributes by version (version n is `models[n - 1]`).
    var models: [[String: String]]
    /// One `vm.model` table per model version, made when an instance first shows it and shared by
    /// every instance on that version: a long attribute (a 15 MB `image`) exists once, not once
    /// per instance.
    var modelTables: [LuaTableRef?] = []
    /// Per-instance `vm` tables and the model version each shows (same reasoning as `activity`).
    @exclusivity(unchecked) var vmTables: [LuaTableRef?] = []
    @exclusivity(unchecked) var vmVersions: [Int] = []
    /// The `startedAt` and `lastOperation.endedAt` each `vm` table shows (ms; -1: none yet).
    @exclusivity(unchecked) var vmStarts: [Millis] = []
    @exclusivity(unchecked) var vmOperationEnds: [Millis] = []

    init(state: LuaState, model: [String: String]) {
        self.state = state
        models = [model]
    }

    /// Forgets what a previous simulation left (the `vm` tables, later model versions).
    func reset(model: [String: String]) {
        for ref in vmTables.compactMap({ $0 }) { state.release(ref) }
        for ref in modelTables.compactMap({ $0 }) { state.release(ref) }
        modelTables = []
        vmTables = []
        vmVersions = []
        vmStarts = []
        vmOperationEnds = []
        models = [model]
        now = 0
    }

    /// Follows the engine's model versions from its events, and drops the `vm` table of an
    /// instance once it is deleted (no callback sees it again), so scaling out and in for ever
    /// does not keep a table per instance ever made.
    func observe(_ event: Event) {
        switch event.payload {
        case .modelUpdated(let version, let changes, _) where version > models.count:
            var attributes = models[models.count - 1]
            for (key, value) in changes { attributes[key] = value }
            models.append(attributes)
        case .instanceDeleted:
            if let id = event.instance, id < vmTables.count, let ref = vmTables[id] {
                state.release(ref)
                vmTables[id] = nil
            }
        default:
            break
        }
    }

    /// The `vm` table handed to scripts for instance `vm`: made once per instance and kept, so
    /// `vm.state` persists; `vm.model` is replaced when the instance's model changes, and
    /// `startedAt` and `lastOperation` when it restarts or an operation on it ends.
    func vmTable(for vm: borrowing Instance) -> LuaTableRef {
        if vm.id >= vmTables.count {
            let grow = vm.id + 1 - vmTables.count
            vmTables += Array(repeating: nil, count: grow)
            vmVersions += Array(repeating: 0, count: grow)
            vmStarts += Array(repeating: -1, count: grow)
            vmOperationEnds += Array(repeating: -1, count: grow)
        }
        let operationEnd = vm.lastOperation?.endedAt ?? -1
        if let ref = vmTables[vm.id] {
            if vmVersions[vm.id] != vm.modelVersion {
                state.setField(ref, "model", reference: modelTable(vm.modelVersion))
                vmVersions[vm.id] = vm.modelVersion
            }
            if vmStarts[vm.id] != vm.health.startedAt {
                state.setField(ref, "startedAt", Self.seconds(vm.health.startedAt))
                vmStarts[vm.id] = vm.health.startedAt
            }
            if vmOperationEnds[vm.id] != operationEnd, let op = vm.lastOperation {
                state.setField(ref, "lastOperation", Self.operationValue(op))
                vmOperationEnds[vm.id] = operationEnd
            }
            return ref
        }
        var fields: [String: LuaValue] = [
            "id": .integer(vm.id), "name": .string(vm.name), "faultDomain": .integer(vm.faultDomain),
            "updateDomain": .integer(vm.updateDomain), "state": .table([:]),
            "startedAt": Self.seconds(vm.health.startedAt),
        ]
        if let zone = vm.zone { fields["zone"] = .string(zone) }
        if let replaces = vm.replaces { fields["replaces"] = .integer(replaces) }
        if let op = vm.lastOperation { fields["lastOperation"] = Self.operationValue(op) }
        let ref = state.reference(.table(fields))
        state.setField(ref, "model", reference: modelTable(vm.modelVersion))
        vmTables[vm.id] = ref
        vmVersions[vm.id] = vm.modelVersion
        vmStarts[vm.id] = vm.health.startedAt
        vmOperationEnds[vm.id] = operationEnd
        return ref
    }

    /// A virtual time as scripts get it: whole seconds as an integer, else a number.
    static func seconds(_ time: Millis) -> LuaValue {
        time % 1000 == 0 ? .integer(time / 1000) : .double(Double(time) / 1000)
    }

    /// `vm.lastOperation`: `{ kind = "upgrade", outcome = "failed", endedAt = 300 }`.
    static func operationValue(_ op: OperationRecord) -> LuaValue {
        .table(["kind": .string(op.kind.rawValue), "outcome": .string(op.succeeded ? "succeeded" : "failed"),
                "endedAt": seconds(op.endedAt)])
    }

    /// The shared `vm.model` table of model `version`.
    private func modelTable(_ version: Int) -> LuaTableRef {
        let index = min(max(version, 1), models.count) - 1
        if index >= modelTables.count { modelTables += Array(repeating: nil, count: index + 1 - modelTables.count) }
        if let ref = modelTables[index] { return ref }
        let ref = state.reference(ModelAttributes.luaValue(models[index], version: index + 1))
        modelTables[index] = ref
        return ref
    }

    func context(_ what: StaticString, _ vm: borrowing Instance, _ time: Millis) -> String {
        "\(what) of \(vm.name) at \(ISODuration.format(time))"
    }

    /// Calls `callback` with the instance's table and the time (seconds), handing the first
    /// result to `read`. Script errors carry the instance and the time.
    func invoke<R>(_ callback: ScriptSession.Callback, _ what: StaticString, _ vm: borrowing Instance, _ time: Millis, extra: String? = nil,
                   read: (LuaStack) throws -> R) throws -> R {
        let table = vmTable(for: vm)
        let outer = activity
        activity = .behaviour(what)
        now = time
        defer { activity = outer }
        do {
            return try state.call(callback.function, arguments: { stack in
                stack.pushReference(table)
                if let extra { stack.push(extra) }
                if time % 1000 == 0 { stack.push(time / 1000) } else { stack.push(Double(time) / 1000) }
                return extra == nil ? 2 : 3
            }, read: read)
        } catch var error as LuaError {
            // A result the host could not read is the callback's error too, located where it was set.
            if error.function == nil {
                error.function = what.description
                error.location = error.location ?? callback.location
            }
            throw ScenarioError.script(error, context: context(what, vm, time))
        }
    }

    /// A result of the wrong kind: a script error located where the function was registered.
    func badResult(_ callback: ScriptSession.Callback, _ message: String, _ what: StaticString, _ vm: borrowing Instance, _ time: Millis) -> ScenarioError {
        .script(LuaError(kind: .runtime, message: message, location: callback.location, function: what.description), context: context(what, vm, time))
    }
}
