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
    /// Read and written on every probe, on the simulation's one thread.
    var activity = Activity.loading
    /// An error raised inside a host function (a nested health, phase or fault call failed while
    /// an action ran) that must end the run whatever the script does with the Lua error.
    var fatal: (any Error)?
    /// The virtual time of the call in progress, in milliseconds (`os.clock`, `os.time`).
    var now: Millis = 0
    /// Model attributes by version (version n is `models[n - 1]`).
    var models: [[String: String]]
    /// Whether each model version has the Application Health extension (`vm.model.healthExtension`).
    var healthExtensions = [false]
    /// Whether the scenario's gates act in this run (`fleet().gate`): false in a shadow gate's
    /// other run and with `sweep --no-gate`.
    var gateActs = true
    /// One `vm.model` table per model version, made when an instance first shows it and shared by
    /// every instance on that version: a long attribute (a 15 MB `image`) exists once, not once
    /// per instance.
    var modelTables: [LuaTableRef?] = []
    /// Per-instance `vm` tables and what each shows.
    var vms: [VMSlot] = []

    /// One instance's `vm` table and the values it shows: the model version, `startedAt` and
    /// `lastOperation.endedAt` (ms; -1: none yet). Plain values, so reading one copies nothing
    /// that is counted.
    struct VMSlot {
        var table: LuaTableRef?
        var version = 0
        var start: Millis = -1
        var operationEnd: Millis = -1
    }

    init(state: LuaState, model: [String: String]) {
        self.state = state
        models = [model]
    }

    /// Forgets what a previous simulation left (the `vm` tables, later model versions).
    func reset(model: [String: String], healthExtension: Bool) {
        for ref in vms.compactMap(\.table) { state.release(ref) }
        for ref in modelTables.compactMap({ $0 }) { state.release(ref) }
        modelTables = []
        vms = []
        models = [model]
        healthExtensions = [healthExtension]
        now = 0
    }

    /// Follows the engine's model versions from its events, and drops the `vm` table of an
    /// instance once it is deleted (no callback sees it again), so scaling out and in for ever
    /// does not keep a table per instance ever made.
    func observe(_ event: Event) {
        switch event.payload {
        case .modelUpdated(let version, let changes, _, let health) where version > models.count:
            var attributes = models[models.count - 1]
            for (key, value) in changes { attributes[key] = value }
            models.append(attributes)
            switch health {
            case .set?: healthExtensions.append(true)
            case .remove?: healthExtensions.append(false)
            case nil: healthExtensions.append(healthExtensions[healthExtensions.count - 1])
            }
        case .instanceDeleted:
            if let id = event.instance, id < vms.count, let ref = vms[id].table {
                state.release(ref)
                vms[id].table = nil
            }
        default:
            break
        }
    }

    /// The `vm` table handed to scripts for instance `vm`: made once per instance and kept, so
    /// `vm.state` persists; `vm.model` is replaced when the instance's model changes, and
    /// `startedAt` and `lastOperation` when it restarts or an operation on it ends.
    func vmTable(for vm: borrowing Instance) -> LuaTableRef {
        LentInstance.lending(vm) { vmTable(for: $0) }
    }

    /// The same for an instance lent in place; its fields are read one by one, never copied whole.
    func vmTable(for vm: LentInstance) -> LuaTableRef {
        let id = vm.instance.id
        let operationEnd = vm.instance.lastOperation?.endedAt ?? -1
        if id < vms.count {
            let slot = vms[id]
            if let table = slot.table, slot.version == vm.instance.modelVersion, slot.start == vm.instance.health.startedAt,
               slot.operationEnd == operationEnd {
                return table
            }
        } else {
            vms += Array(repeating: VMSlot(), count: id + 1 - vms.count)
        }
        return refreshTable(for: vm.instance, operationEnd: operationEnd)
    }

    /// Makes instance `vm`'s table, or brings the fields that changed up to date.
    private func refreshTable(for vm: borrowing Instance, operationEnd: Millis) -> LuaTableRef {
        var slot = vms[vm.id]
        defer { vms[vm.id] = slot }
        if let ref = slot.table {
            if slot.version != vm.modelVersion {
                state.setField(ref, "model", reference: modelTable(vm.modelVersion))
                slot.version = vm.modelVersion
            }
            if slot.start != vm.health.startedAt {
                state.setField(ref, "startedAt", Self.seconds(vm.health.startedAt))
                slot.start = vm.health.startedAt
            }
            if slot.operationEnd != operationEnd, let op = vm.lastOperation {
                state.setField(ref, "lastOperation", Self.operationValue(op))
                slot.operationEnd = operationEnd
            }
            return ref
        }
        var fields: [(String, LuaValue)] = [
            ("id", .integer(vm.id)), ("name", .string(vm.name)), ("faultDomain", .integer(vm.faultDomain)),
            ("updateDomain", .integer(vm.updateDomain)), ("state", .table([:])),
            ("startedAt", Self.seconds(vm.health.startedAt)),
        ]
        if let zone = vm.zone { fields.append(("zone", .string(zone))) }
        if let replaces = vm.replaces { fields.append(("replaces", .integer(replaces))) }
        if let op = vm.lastOperation { fields.append(("lastOperation", Self.operationValue(op))) }
        let ref = state.reference(record: fields)
        state.setField(ref, "model", reference: modelTable(vm.modelVersion))
        slot = VMSlot(table: ref, version: vm.modelVersion, start: vm.health.startedAt, operationEnd: operationEnd)
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
        let ref = state.reference(ModelAttributes.luaValue(models[index], version: index + 1,
                                                           healthExtension: index < healthExtensions.count && healthExtensions[index]))
        modelTables[index] = ref
        return ref
    }

    func context(_ what: StaticString, _ vm: borrowing Instance, _ time: Millis) -> ScriptContext {
        .callback(what.description, instance: vm.name, at: time)
    }

    /// Calls `callback` with the instance's table and the time (seconds), handing the first
    /// result to `read`. Script errors carry the instance and the time.
    /// Marks the engine's call of `what` at `time` as running (what it may call, the virtual
    /// clock) and returns the activity to restore when it ends.
    @inline(__always)
    func enter(_ what: StaticString, at time: Millis) -> Activity {
        let outer = activity
        activity = .behaviour(what)
        now = time
        return outer
    }

    func invoke<R>(_ callback: ScriptSession.Callback, _ what: StaticString, _ vm: borrowing Instance, _ time: Millis, extra: String? = nil,
                   read: (LuaStack) throws -> R) throws -> R {
        let table = vmTable(for: vm)
        let outer = enter(what, at: time)
        defer { activity = outer }
        do {
            return try state.call(callback.function, arguments: { stack in
                stack.pushReference(table)
                if let extra { stack.push(extra) }
                if time % 1000 == 0 { stack.push(time / 1000) } else { stack.push(Double(time) / 1000) }
                return extra == nil ? 2 : 3
            }, read: read)
        } catch let error as LuaError {
            throw scriptError(error, callback, what, vm, time)
        }
    }

    /// A script error of `callback`, located where it was registered when the error has no
    /// place of its own (a result the host could not read), with the instance and the time.
    func scriptError(_ error: LuaError, _ callback: ScriptSession.Callback, _ what: StaticString, _ vm: borrowing Instance, _ time: Millis) -> ScenarioError {
        var error = error
        if error.function == nil {
            error.function = what.description
            error.location = error.location ?? callback.location
        }
        return ScenarioError.script(error, context: context(what, vm, time))
    }

    /// A result of the wrong kind: a script error located where the function was registered.
    func badResult(_ callback: ScriptSession.Callback, _ message: String, _ what: StaticString, _ vm: borrowing Instance, _ time: Millis,
                   refusal: HostRefusal? = nil) -> ScenarioError {
        var error = LuaError(kind: .runtime, message: message, location: callback.location, function: what.description)
        error.refusal = refusal
        return .script(error, context: context(what, vm, time))
    }
}
