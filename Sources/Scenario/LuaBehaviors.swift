import Formats
import LuaHost
import UpgradeEngine

/// The states a script's health table may name, matched without allocating.
private let healthStates = LuaStringChoices(["Healthy", "Unhealthy"])

/// What the host copies of a health answer at most, so the host's work per probe is bounded
/// whatever a script returns: a body as the wire's (64 KiB, one byte more to tell it was
/// larger), a state string, and custom metrics converted whole.
private let maxBodyCopy = maxProbeBodyBytes + 1
private let maxStateCopy = 1024
private let maxMetricsValues = 1_000
/// What the host's work on a body it copies costs the run, in instructions a byte: copying it out
/// of Lua and parsing it as JSON (about 60 MB/s) takes about as long as four Lua instructions.
private let instructionsPerBodyByte = 4

/// `health(function(vm, now) ... end)` as the engine's health source. With rich states, the
/// custom metrics of each answer are kept in a Lua table (one slot per instance) and read only
/// when a rolling upgrade starts: the per-probe cost is the state string alone.
final class LuaHealthSource: ScriptBehavior, HealthSource {
    let latest: LuaTableRef
    let deferMetrics: Bool
    /// The state's raw handle: the probe calls through it without retaining the state.
    let lua: LuaHandle
    /// The last body string the script returned, with its copy: the very same string again is
    /// neither copied nor charged, and the engine, handed the same Swift string, judges it at once.
    private var lastBody = LuaStringMemo()

    init(_ runtime: ScriptRuntime, _ callback: ScriptSession.Callback, definition: ScaleSetDefinition) {
        latest = runtime.state.referenceNewTable(arraySize: definition.capacity)
        deferMetrics = definition.healthExtension?.richStates ?? false
        lua = runtime.state.handle
        super.init(runtime, callback)
    }

    deinit {
        state.release(latest)
        state.release(&lastBody)
    }

    /// One probe: the usual answer (a plain table whose state is "Healthy" or "Unhealthy", its
    /// metrics kept for later) is read in one C call; anything else by `read`.
    func probe(_ instance: borrowing Instance, at time: Millis) throws -> ProbeReply {
        try LentInstance.lending(instance) { try probe(lent: $0, at: time) }
    }

    func probe(lent instance: LentInstance, at time: Millis) throws -> ProbeReply {
        let vm = runtime.vmTable(for: instance)
        let outer = runtime.enter("health", at: time)
        defer { runtime.activity = outer }
        let call = lua.callHealth(callback.function, vm: vm, nowMillis: time, latest: deferMetrics ? latest : nil, slot: instance.instance.id + 1)
        return try reply(to: call, from: instance, at: time)
    }

    /// With metrics kept for later, the probes of a run are made one after the other here, and
    /// the engine handles only those whose answers change something.
    var answersRuns: Bool { deferMetrics }

    func probe(run: inout ProbeRun) {
        let outer = runtime.enter("health", at: run.time)
        defer { runtime.activity = outer }
        run.matched = 0
        run.stop = .none
        for index in 0..<run.count {
            let instance = run.instance(at: index)
            // Made or brought up to date in its turn, after the calls before it (as one probe at
            // a time would): a script may keep other instances' tables and read them.
            let vm = runtime.vmTable(for: instance)
            let call = lua.callHealth(callback.function, vm: vm, nowMillis: run.time, latest: latest, slot: instance.instance.id + 1)
            if call.metricsKept, let expected = run.expected(at: index), call.answer == Self.answer(naming: expected) {
                run.matched += 1
                continue
            }
            do {
                run.stop = .answered(try reply(to: call, from: instance, at: run.time))
            } catch {
                run.stop = .failed(error)
            }
            return
        }
    }

    /// The fast path's answer that names `state`, if it has one.
    private static func answer(naming state: HealthState) -> HealthCall.Answer? {
        switch state {
        case .healthy: .healthy
        case .unhealthy: .unhealthy
        default: nil
        }
    }

    /// What one call answered, read as `probe` returns it; a failed call throws its script error.
    private func reply(to call: HealthCall, from instance: LentInstance, at time: Millis) throws -> ProbeReply {
        if call.failed { throw runtime.scriptError(state.failure(of: call, function: callback.function), callback, "health", instance.instance, time) }
        defer { lua.endCall(call) }
        switch call.answer {
        case .noAnswer: return .noAnswer
        case .healthy where call.metricsKept: return .named(.healthy)
        case .unhealthy where call.metricsKept: return .named(.unhealthy)
        default: break
        }
        var problem: String?
        var copied = 0
        let slot = instance.instance.id + 1
        let reply = state.readTop { stack in read(stack, slot: slot, problem: &problem, copied: &copied) }
        if let problem { throw runtime.badResult(callback, problem, "health", instance.instance, time) }
        if state.chargeRun(copied * instructionsPerBodyByte) {
            let error = LuaError(kind: .runBudget(state.limits.runInstructions), message: "run instruction budget exceeded",
                                 location: callback.location, function: "health")
            throw runtime.scriptError(error, callback, "health", instance.instance, time)
        }
        return reply
    }

    /// Any answer, at the top of `stack`: nil (a refused connection: the result at once), a body
    /// string, a table with a state and metrics, { status, body }, or { timeout = true } (the
    /// application accepted the connection and never replied). A result that cannot be read
    /// sets `problem`; `copied` is what the body cost in bytes copied (none when it is the very
    /// string of the last body).
    private func read(_ stack: LuaStack, slot: Int, problem: inout String?, copied: inout Int) -> ProbeReply {
        switch stack.type(at: -1) {
        case .nil, .none: return .noAnswer
        case .string:
            let body = runtime.state.string(at: -1, maxBytes: maxBodyCopy, memo: &lastBody)!
            copied = body.copied
            return .http(status: 200, body: body.text)
        case .table:
            let table = stack.table(at: -1)!
            if table.type("timeout") != .nil {
                guard table.bool("timeout") == true, table.entryCount == 1 else {
                    problem = "health returned timeout with other fields or not true; { timeout = true } alone says the application accepted the connection and never replied"
                    return .noAnswer
                }
                return .timeout
            }
            let state = Self.state(table)
            if state == nil, table.type("status") != .nil {
                guard let status = table.integer("status"), (100...599).contains(status) else {
                    problem = "health returned a status that is not an HTTP status code (100–599)"
                    return .noAnswer
                }
                if table.type("body") == .nil { return .http(status: status, body: "") }
                guard let body = runtime.state.string("body", of: table, maxBytes: maxBodyCopy, memo: &lastBody) else {
                    problem = "health returned a body that is not a string"
                    return .noAnswer
                }
                copied = body.copied
                return .http(status: status, body: body.text)
            }
            guard deferMetrics else {
                do {
                    return .structured(state: state, metrics: try Self.metrics(table))
                } catch {
                    problem = "health returned customMetrics that cannot be read: \(error.message)"
                    return .noAnswer
                }
            }
            // The usual spelling first; any other casing (CustomMetrics included) by a scan.
            if table.copy("customMetrics", into: latest, slot: slot) == .nil,
               let key = table.key(caseInsensitive: "customMetrics") {
                _ = table.copy(key: key, into: latest, slot: slot)
            }
            return .structured(state: state, metrics: .deferred)
        default:
            problem = "health returned a \(stack.type(at: -1).name); return a table ({ applicationHealthState = \"Healthy\" }), a body string, { status = 503, body = \"...\" } or nil (no answer)"
            return .noAnswer
        }
    }

    func latestMetrics(of instance: borrowing Instance) throws -> MetricsPayload? {
        do {
            return try runtime.state.withSlot(latest, instance.id + 1) { stack throws(LuaError) in try Self.payload(stack) }
        } catch {
            throw runtime.badResult(callback, "health returned customMetrics that cannot be read: \((error as? LuaError)?.message ?? "\(error)")", "health", instance, runtime.now,
                                    refusal: (error as? LuaError)?.refusal)
        }
    }

    /// The state string, without allocating for the two usual values.
    static func state(_ table: LuaTableView) -> String? {
        switch table.string("applicationHealthState", oneOf: healthStates) {
        case 0?: return "Healthy"
        case 1?: return "Unhealthy"
        default:
            if let other = table.string("applicationHealthState", maxBytes: maxStateCopy) { return other }
            if let other = table.string("ApplicationHealthState", maxBytes: maxStateCopy) { return other }
            // Keys are case-insensitive on the wire; a table is judged like the same body.
            guard let key = table.key(caseInsensitive: "applicationHealthState") else { return nil }
            return (try? table.value(forKey: key, maxValues: 1, maxStringBytes: maxStateCopy))?.stringValue
        }
    }

    /// Custom metrics of an answer table, read now.
    static func metrics(_ table: LuaTableView) throws(LuaError) -> MetricsPayload? {
        let key: StaticString = table.type("customMetrics") == .nil ? "CustomMetrics" : "customMetrics"
        guard table.type(key) != .nil else {
            guard let other = table.key(caseInsensitive: "customMetrics") else { return nil }
            return try payload(of: table.value(forKey: other, maxValues: maxMetricsValues, maxStringBytes: maxBodyCopy))
        }
        if let text = table.string(key, maxBytes: maxBodyCopy) { return .string(text) }
        if let fast = table.table(key, readFast) ?? nil { return fast }
        return .object(json(try table.value(forKey: key.description, maxValues: maxMetricsValues, maxStringBytes: maxBodyCopy)))
    }

    /// Custom metrics already converted: a string stays the wire form, anything else is judged whole.
    static func payload(of value: LuaValue) -> MetricsPayload? {
        switch value {
        case .nil: return nil
        case .string(let text): return .string(text)
        default: return .object(json(value))
        }
    }

    /// Custom metrics at the top of the stack: a string stays the wire form; a table whose
    /// `rollingUpgrade` holds only well-typed `PhaseOrderingNumber`/`SkipUpgrade` is read field by
    /// field; anything else is converted whole so the engine can say what is wrong with it.
    static func payload(_ stack: LuaStack) throws(LuaError) -> MetricsPayload? {
        switch stack.type(at: -1) {
        case .nil, .none: return nil
        case .string: return .string(stack.string(at: -1, maxBytes: maxBodyCopy)!)
        case .table:
            if let fast = readFast(stack.table(at: -1)!) { return fast }
            return .object(json(try stack.value(at: -1, maxValues: maxMetricsValues, maxStringBytes: maxBodyCopy)))
        default:
            return .object(json(try stack.value(at: -1, maxValues: maxMetricsValues, maxStringBytes: maxBodyCopy)))
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

/// A script function the engine calls, with the runtime that holds its Lua state. The runtime
/// never refers to the simulation, so holding it strongly makes no cycle.
class ScriptBehavior {
    let runtime: ScriptRuntime
    let callback: ScriptSession.Callback
    var state: LuaState { runtime.state }

    init(_ runtime: ScriptRuntime, _ callback: ScriptSession.Callback) {
        self.runtime = runtime
        self.callback = callback
    }
}

/// `phase(function(vm) ... end)`: the phase each instance reports when an upgrade starts.
final class LuaPhaseSource: ScriptBehavior, PhaseSource {
    /// An integer is the PhaseOrderingNumber; a table is the `rollingUpgrade` metric itself
    /// (`{ PhaseOrderingNumber = 1 }`, `{ SkipUpgrade = true }`, keys in any casing), so the
    /// shorthand says all that the wire form can; nil keeps what the metrics say.
    func metrics(of instance: Instance, at time: Millis) throws -> CustomMetrics? {
        let result = try runtime.invoke(callback, "phase", instance, time) { stack -> CustomMetrics?? in
            switch stack.type(at: -1) {
            case .nil, .none: return .some(nil)
            case .number: return stack.integer(at: -1).flatMap { $0 >= 0 ? .some(CustomMetrics(phase: $0)) : nil }
            case .table:
                var diagnostics: [WireDiagnostic] = []
                let value = try stack.value(at: -1)
                let parsed = CustomMetrics.parse(.object(json(.table(["rollingUpgrade": value]))), diagnostics: &diagnostics)
                return diagnostics.isEmpty ? .some(parsed) : nil
            default: return nil
            }
        }
        guard let result else {
            throw runtime.badResult(callback, "phase must return a non-negative integer (PhaseOrderingNumber), a table such as { PhaseOrderingNumber = 1, SkipUpgrade = false }, or nil", "phase", instance, time)
        }
        return result
    }
}

/// `fault(function(vm, op, now) ... end)`: nil, { fail = true } or { duration = "PT5M" }.
final class LuaFaultInjector: ScriptBehavior, FaultInjector {
    func outcome(of operation: OperationKind, on instance: Instance, at time: Millis) throws -> OperationOutcome? {
        let value = try runtime.invoke(callback, "fault", instance, time, extra: operation.rawValue) { stack in
            try stack.value(at: -1)
        }
        switch value {
        case .nil: return nil
        default:
            guard let fields = value.fields else {
                throw runtime.badResult(callback, "fault returned a \(value.typeName); return nil, { fail = true } or { duration = \"PT5M\" }", "fault", instance, time)
            }
            var outcome = OperationOutcome()
            for key in fields.keys.sorted() {
                switch (key, fields[key]!) {
                case ("fail", .bool(let b)): outcome.fail = b
                case ("duration", let d):
                    switch DefinitionReader.duration(d) {
                    case .success(let ms): outcome.duration = ms
                    case .failure(let m): throw runtime.badResult(callback, "fault's duration: \(m.text)", "fault", instance, time)
                    }
                default:
                    throw runtime.badResult(callback, "fault returned \(key) = \(fields[key]!.typeName); allowed fail = true/false, duration = \"PT5M\" or seconds", "fault", instance, time)
                }
            }
            return outcome
        }
    }
}

/// `deferral(function(vm, now) ... end)`: whether an instance defers its automatic OS upgrade.
/// true: until `approve_os_upgrade`; a duration ("PT10M" or seconds): approved by itself after
/// it; false or nil: no deferral.
final class LuaDeferralSource: ScriptBehavior, DeferralSource {
    func deferral(of instance: Instance, at time: Millis) throws -> OSUpgradeDeferral {
        let value = try runtime.invoke(callback, "deferral", instance, time) { stack in try stack.value(at: -1) }
        switch value {
        case .nil, .bool(false): return OSUpgradeDeferral.none
        case .bool(true): return .untilApproved
        default:
            switch DefinitionReader.duration(value) {
            case .success(let ms): return .approveAfter(ms)
            case .failure(let m):
                throw runtime.badResult(callback, "deferral returned \(value.typeName): \(m.text); return true (until approved), a duration such as \"PT10M\", or false", "deferral", instance, time)
            }
        }
    }
}
