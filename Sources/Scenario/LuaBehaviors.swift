import LuaHost
import UpgradeEngine

/// The states a script's health table may name, matched without allocating.
private let healthStates = LuaStringChoices(["Healthy", "Unhealthy"])

extension Scenario {
    /// The `vm` table handed to scripts for instance `vm`: made once per instance and kept, so
    /// `vm.state` persists; `vm.model` is replaced when the instance's model changes.
    func vmTable(for vm: borrowing Instance) -> LuaTableRef {
        if vm.id >= vmTables.count {
            vmTables += Array(repeating: nil, count: vm.id + 1 - vmTables.count)
            vmVersions += Array(repeating: 0, count: vm.id + 1 - vmVersions.count)
        }
        if let ref = vmTables[vm.id] {
            if vmVersions[vm.id] != vm.modelVersion {
                state.setField(ref, "model", modelValue(vm.modelVersion))
                vmVersions[vm.id] = vm.modelVersion
            }
            return ref
        }
        var fields: [String: LuaValue] = [
            "id": .integer(vm.id), "name": .string(vm.name), "faultDomain": .integer(vm.faultDomain),
            "updateDomain": .integer(vm.updateDomain), "model": modelValue(vm.modelVersion), "state": .table([:]),
        ]
        if let zone = vm.zone { fields["zone"] = .string(zone) }
        let ref = state.reference(.table(fields))
        vmTables[vm.id] = ref
        vmVersions[vm.id] = vm.modelVersion
        return ref
    }

    private func modelValue(_ version: Int) -> LuaValue {
        var model = (simulation?.models[version - 1] ?? definition.model).mapValues(LuaValue.string)
        model["version"] = .integer(version)
        return .table(model)
    }

    func context(_ what: String, _ vm: borrowing Instance, _ time: Millis) -> String {
        "\(what) of \(vm.name) at \(ISODuration.format(time))"
    }

    /// Calls `callback` with the instance's table and the time (seconds), handing the first
    /// result to `read`. Script errors carry the instance and the time.
    func invoke<R>(_ callback: Callback, _ what: String, _ vm: borrowing Instance, _ time: Millis, extra: String? = nil,
                   read: (LuaStack) throws -> R) throws -> R {
        let table = vmTable(for: vm)
        let outer = activity
        activity = .behaviour(what)
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
                error.function = what
                error.location = error.location ?? callback.location
            }
            throw ScenarioError.script(error, context: context(what, vm, time))
        }
    }

    /// A result of the wrong kind: a script error located where the function was registered.
    func badResult(_ callback: Callback, _ message: String, _ what: String, _ vm: borrowing Instance, _ time: Millis) -> ScenarioError {
        .script(LuaError(kind: .runtime, message: message, location: callback.location, function: what), context: context(what, vm, time))
    }
}

/// `health(function(vm, now) ... end)` as the engine's health source. With rich states, the
/// custom metrics of each answer are kept in a Lua table (one slot per instance) and read only
/// when a rolling upgrade starts: the per-probe cost is the state string alone.
final class LuaHealthSource: ScriptBehavior, HealthSource {
    let latest: LuaTableRef
    let deferMetrics: Bool

    override init(_ scenario: Scenario, _ callback: Scenario.Callback) {
        latest = scenario.state.referenceNewTable(arraySize: scenario.definition.capacity)
        deferMetrics = scenario.definition.healthExtension?.richStates ?? false
        super.init(scenario, callback)
    }

    deinit { state.release(latest) }

    func probe(_ instance: borrowing Instance, at time: Millis) throws -> ProbeReply {
        var problem: String?
        let slot = instance.id + 1
        let reply = try scenario.invoke(callback, "health", instance, time) { stack -> ProbeReply in
            switch stack.type(at: -1) {
            case .nil, .none: return .noAnswer
            case .string: return .http(status: 200, body: stack.string(at: -1)!)
            case .table:
                let table = stack.table(at: -1)!
                let state = Self.state(table)
                if state == nil, table.type("status") != .nil {
                    guard let status = table.integer("status"), (100...599).contains(status) else {
                        problem = "health returned a status that is not an HTTP status code (100–599)"
                        return .noAnswer
                    }
                    let body = table.type("body") == .nil ? "" : table.string("body")
                    guard let body else {
                        problem = "health returned a body that is not a string"
                        return .noAnswer
                    }
                    return .http(status: status, body: body)
                }
                guard deferMetrics else {
                    do {
                        return .structured(state: state, metrics: try Self.metrics(table))
                    } catch {
                        problem = "health returned customMetrics that cannot be read: \((error as? LuaError)?.message ?? "\(error)")"
                        return .noAnswer
                    }
                }
                if table.copy("customMetrics", into: latest, slot: slot) == .nil {
                    _ = table.copy("CustomMetrics", into: latest, slot: slot)
                }
                return .structured(state: state, metrics: .deferred)
            default:
                problem = "health returned a \(stack.type(at: -1).name); return a table ({ applicationHealthState = \"Healthy\" }), a body string, { status = 503, body = \"...\" } or nil (no answer)"
                return .noAnswer
            }
        }
        if let problem { throw scenario.badResult(callback, problem, "health", instance, time) }
        return reply
    }

    func latestMetrics(of instance: borrowing Instance) throws -> MetricsPayload? {
        do {
            return try scenario.state.withSlot(latest, instance.id + 1) { stack throws(LuaError) in try Self.payload(stack) }
        } catch {
            let now = scenario.simulation?.now ?? 0
            throw scenario.badResult(callback, "health returned customMetrics that cannot be read: \((error as? LuaError)?.message ?? "\(error)")", "health", instance, now)
        }
    }

    /// The state string, without allocating for the two usual values.
    static func state(_ table: LuaTableView) -> String? {
        switch table.string("applicationHealthState", oneOf: healthStates) {
        case 0?: return "Healthy"
        case 1?: return "Unhealthy"
        default:
            if let other = table.string("applicationHealthState") { return other }
            return table.string("ApplicationHealthState")
        }
    }

    /// Custom metrics of an answer table, read now.
    static func metrics(_ table: LuaTableView) throws(LuaError) -> MetricsPayload? {
        let key: StaticString = table.type("customMetrics") == .nil ? "CustomMetrics" : "customMetrics"
        guard table.type(key) != .nil else { return nil }
        if let text = table.string(key) { return .string(text) }
        if let fast = table.table(key, readFast) ?? nil { return fast }
        return .object(json(try table.value(forKey: key.description)))
    }

    /// Custom metrics at the top of the stack: a string stays the wire form; a table whose
    /// `rollingUpgrade` holds only well-typed `PhaseOrderingNumber`/`SkipUpgrade` is read field by
    /// field; anything else is converted whole so the engine can say what is wrong with it.
    static func payload(_ stack: LuaStack) throws(LuaError) -> MetricsPayload? {
        switch stack.type(at: -1) {
        case .nil, .none: return nil
        case .string: return .string(stack.string(at: -1)!)
        case .table:
            if let fast = readFast(stack.table(at: -1)!) { return fast }
            return .object(json(try stack.value(at: -1)))
        default:
            return .object(json(try stack.value(at: -1)))
        }
    }

    /// The common case read field by field: `{ rollingUpgrade = { PhaseOrderingNumber = n, SkipUpgrade = b } }`.
    private static func readFast(_ metrics: LuaTableView) -> MetricsPayload? {
        let parsed = metrics.table("rollingUpgrade") { rolling -> CustomMetrics? in
            var result = CustomMetrics()
            var known = 0
            if let n = rolling.integer("PhaseOrderingNumber") {
                guard n >= 0 else { return nil }
                result.phase = n
                known += 1
            }
            if let skip = rolling.bool("SkipUpgrade") {
                result.skipUpgrade = skip
                known += 1
            }
            return rolling.entryCount == known ? result : nil
        }
        return parsed.flatMap { $0.map(MetricsPayload.parsed) }
    }
}

/// A script function the engine calls, with the scenario that holds its Lua state.
class ScriptBehavior {
    /// Unretained: the engine calls a behaviour only while the scenario runs its simulation, so
    /// the scenario is alive then; `unowned(unsafe)` spares a reference-count round trip on every
    /// call. Nothing else (deinit included) may use it.
    unowned(unsafe) let scenario: Scenario
    /// The Lua state, kept alive for cleanup whatever outlives what.
    let state: LuaState
    let callback: Scenario.Callback

    init(_ scenario: Scenario, _ callback: Scenario.Callback) {
        self.scenario = scenario
        self.state = scenario.state
        self.callback = callback
    }
}

/// `phase(function(vm) ... end)`: the phase each instance reports when an upgrade starts.
final class LuaPhaseSource: ScriptBehavior, PhaseSource {
    func phase(of instance: Instance) throws -> Int? {
        let time = scenario.simulation?.now ?? 0
        let result = try scenario.invoke(callback, "phase", instance, time) { stack -> Int?? in
            switch stack.type(at: -1) {
            case .nil, .none: return .some(nil)
            case .number: return stack.integer(at: -1).flatMap { $0 >= 0 ? .some($0) : nil }
            default: return nil
            }
        }
        guard let result else {
            throw scenario.badResult(callback, "phase must return a non-negative integer (PhaseOrderingNumber) or nil", "phase", instance, time)
        }
        return result
    }
}

/// `fault(function(vm, op, now) ... end)`: nil, { fail = true } or { duration = "PT5M" }.
final class LuaFaultInjector: ScriptBehavior, FaultInjector {
    func outcome(of operation: OperationKind, on instance: Instance, at time: Millis) throws -> OperationOutcome? {
        let value = try scenario.invoke(callback, "fault", instance, time, extra: operation.rawValue) { stack in
            try stack.value(at: -1)
        }
        switch value {
        case .nil: return nil
        default:
            guard let fields = value.fields else {
                throw scenario.badResult(callback, "fault returned a \(value.typeName); return nil, { fail = true } or { duration = \"PT5M\" }", "fault", instance, time)
            }
            var outcome = OperationOutcome()
            for key in fields.keys.sorted() {
                switch (key, fields[key]!) {
                case ("fail", .bool(let b)): outcome.fail = b
                case ("duration", let d):
                    switch DefinitionReader.duration(d) {
                    case .success(let ms): outcome.duration = ms
                    case .failure(let m): throw scenario.badResult(callback, "fault's duration: \(m.text)", "fault", instance, time)
                    }
                default:
                    throw scenario.badResult(callback, "fault returned \(key) = \(fields[key]!.typeName); allowed fail = true/false, duration = \"PT5M\" or seconds", "fault", instance, time)
                }
            }
            return outcome
        }
    }
}
