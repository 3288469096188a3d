import AzureWire
import Formats
import LuaHost
import UpgradeEngine

/// The functions scenario scripts call (the public API: keep the names).
extension ScriptSession {
    func registerAPI() {
        state.register("scaleset") { [unowned self] args in
            try requireTopLevel("scaleset")
            let location = args.callerLocation ?? path
            if let first = scalesetLocation {
                throw LuaError(kind: .runtime, message: "scaleset is already described at \(first); a scenario describes one scale set")
            }
            scaleset = (try args.table(1), location)
            return []
        }
        registerCallback("health", \.health)
        state.register("health_model") { [unowned self] args in
            try requireTopLevel("health_model")
            let location = args.callerLocation ?? path
            if let first = healthModel {
                throw LuaError(kind: .runtime, message: "health_model is already described at \(first.location); a scenario has one")
            }
            healthModel = (HealthModelReader.read(try args.value(1)), location)
            return []
        }
        registerCallback("phase", \.phase)
        registerCallback("fault", \.fault)
        registerCallback("deferral", \.deferral)
        registerCallback("on_hook", \.onHook)
        state.register("at") { [unowned self] args in
            let when = try args.value(1)
            let time: Millis
            switch DefinitionReader.duration(when) {
            case .success(let ms): time = ms
            case .failure(let message): throw LuaArgumentError(position: 1, problem: message.text)
            }
            switch activity {
            case .loading: break
            case .atCallback:
                guard let sim = simulation, time >= sim.now else {
                    let now = simulation?.now ?? 0
                    throw LuaError(kind: .runtime, message: "at(\(ISODuration.format(time))) is in the past: the virtual clock reads \(ISODuration.format(now))",
                                   refusal: .past(time: time, now: now))
                }
            case .idle, .behaviour:
                throw LuaError(kind: .runtime, message: "at(...) schedules on the timeline: call it at the top level of the script or inside another at(...) callback\(activityText)",
                               refusal: misplaced("at"))
            }
            let function = try args.function(2, name: "at(\(ISODuration.format(time)))")
            let callback = Callback(function: function, location: args.callerLocation ?? path)
            if let sim = simulation, activity == .atCallback {
                schedule(callback, at: time, on: sim)
            } else {
                timeline.append((time, callback))
            }
            return []
        }
        state.register("duration") { args in
            switch DefinitionReader.duration(try args.value(1)) {
            case .success(let ms): return [ms % 1000 == 0 ? .integer(ms / 1000) : .double(Double(ms) / 1000)]
            case .failure(let message): throw LuaArgumentError(position: 1, problem: message.text)
            }
        }
        state.register("fleet") { [unowned self] _ in
            guard let sim = simulation, activity != .loading else {
                throw LuaError(kind: .runtime, message: "fleet() reads the running scale set: call it inside an at(...) callback or a behaviour\(activityText)",
                               refusal: misplaced("fleet"))
            }
            let serving = sim.servingCount, capacity = sim.capacity
            var fields: [String: LuaValue] = [
                "now": .double(Double(sim.now) / 1000), "capacity": .integer(capacity), "serving": .integer(serving),
                "share": .double(capacity == 0 ? 1 : Double(serving) / Double(capacity)), "gate": .bool(runtime.gateActs),
            ]
            if let code = sim.status?.code { fields["code"] = .string(code.rawValue) }
            return [.table(fields)]
        }
        state.register("param") { [unowned self] args in
            let name = try args.string(1)
            guard !name.isEmpty, name.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" || $0 == "-" }) else {
                throw LuaArgumentError(position: 1, problem: "a parameter name is letters, digits, '_' and '-', such as \"bootFailure\"")
            }
            let fallback = try args.value(2)
            let kind: ScenarioParameter.Kind
            switch fallback {
            case .integer: kind = .integer
            case .double: kind = .number
            case .bool: kind = .boolean
            case .string(let text): kind = ISODuration.parse(text).isSuccess ? .duration : .string
            default:
                throw LuaArgumentError(position: 2, problem: "the default of a parameter is a number, an integer, a string, a boolean or an ISO 8601 duration string; got \(fallback.typeName)")
            }
            let location = args.callerLocation ?? path
            if let earlier = parameters[name], earlier.kind != kind {
                throw LuaError(kind: .runtime, message: "param \(name) is declared at \(earlier.location) as \(earlier.kind.rawValue); here it is \(kind.rawValue)")
            }
            parameters[name] = parameters[name] ?? ScenarioParameter(name: name, kind: kind, defaultValue: fallback.plainText, location: location)
            guard let given = parameterValues[name] else { return [fallback] }
            guard let value = kind.value(given) else {
                parameterProblems.append(Problem(at: .setting(.parameter(name), value: given),
                                                 "is not \(kind.article) \(kind == .number ? "finite number" : kind.rawValue) like the default \(fallback.plainText) at \(location)"))
                return [fallback]
            }
            return [value]
        }
        state.register("expect") { [unowned self] args in
            try requireTopLevel("expect")
            asked.expectations.append((try args.table(1), args.callerLocation ?? path))
            return []
        }
        state.register("risk") { [unowned self] args in
            try requireTopLevel("risk")
            asked.risk.append((try args.table(1), args.callerLocation ?? path))
            return []
        }
        for name in SessionAction.Name.allCases { registerAction(name) }
    }

    /// `{ 1, 2 }` (the ids) or `"*"` (nil: every instance concerned).
    static func instanceIDs(_ args: LuaArguments) throws -> [Int]? {
        if args.type(1) == .string, try args.string(1) == "*" { return nil }
        let ids = args.type(1) == .table ? try args.value(1) : .nil
        guard case .array(let items) = ids, items.allSatisfy({ $0.intValue != nil }) else {
            throw LuaArgumentError(position: 1, problem: "expected a list of instance ids such as { 1, 2 }, or \"*\"")
        }
        return items.compactMap(\.intValue)
    }

    /// `healthExtension = { … }` of `update_model` (the extension's settings, or the ARM shapes
    /// the definition accepts), or `false` to remove it.
    static func healthExtensionChange(_ value: LuaValue) throws -> HealthExtensionChange {
        if case .bool(false) = value { return .remove }
        guard case .table = value else {
            throw LuaArgumentError(position: 1, problem: "healthExtension is \(value.typeName); expected its settings such as { protocol = \"http\", port = 8000, requestPath = \"/health\" }, or false to remove it")
        }
        do {
            return .set(try HealthExtensionSettings.parse(json(value)).0)
        } catch {
            throw LuaArgumentError(position: 1, problem: error.problems.map(\.description).joined(separator: "; "))
        }
    }

    /// `{ image = "..." }` or nothing: the one optional string field of an action's table.
    static func optionalField(_ args: LuaArguments, _ key: String) throws -> String? {
        guard args.count >= 1, args.type(1) != .nil else { return nil }
        guard let fields = try args.table(1).fields else { throw LuaArgumentError(position: 1, problem: "expected { \(key) = \"...\" }") }
        for other in fields.keys where other != key {
            throw LuaArgumentError(position: 1, problem: "unknown field \(other); allowed \(key)")
        }
        guard let value = fields[key] else { return nil }
        guard let s = value.stringValue else { throw LuaArgumentError(position: 1, problem: "\(key) must be a string") }
        return s
    }

    /// What the script is inside of: its name in a refusal ("health", "at", "loading") and the
    /// clause a message adds (", not inside health"; nothing at the top level or when idle).
    private var inside: (during: String, text: String) {
        switch activity {
        case .loading: ("loading", "")
        case .idle: ("idle", "")
        case .atCallback: ("at", ", not inside an at(...) callback")
        case .behaviour(let name): (name.description, ", not inside \(name)")
        }
    }

    /// What the script is inside of, for messages (", not inside health").
    var activityText: String { inside.text }

    /// The instructions a refused action costs the script: about what recording it costs the host.
    static let refusalCost = 1_000

    /// `function` refused where the script is now.
    func misplaced(_ function: String) -> HostRefusal { .misplaced(function: function, during: inside.during) }

    /// Definitions describe the scenario before it runs: only the script's top level may make them.
    func requireTopLevel(_ name: String) throws {
        guard activity == .loading else {
            throw LuaError(kind: .runtime, message: "\(name)(...) describes the scenario: call it at the top level of the script\(activityText)",
                           refusal: misplaced(name))
        }
    }

    private func registerCallback(_ name: String, _ slot: ReferenceWritableKeyPath<ScriptSession, Callback?>) {
        state.register(name) { [unowned self] args in
            try requireTopLevel(name)
            let location = args.callerLocation ?? path
            if let existing = self[keyPath: slot] {
                throw LuaError(kind: .runtime, message: "\(name) is already set at \(existing.location); a scenario has one \(name) function (compose them in Lua)")
            }
            self[keyPath: slot] = Callback(function: try args.function(1, name: name), location: location)
            return []
        }
    }

    /// An action acts on the running simulation, so only inside an `at` callback: its arguments
    /// are read into a `SessionAction`, applied as a typed timeline's or a REST call's is. An
    /// engine refusal is recorded as theirs is (an `actionFailed` event), then becomes a Lua
    /// error the script may catch with pcall.
    private func registerAction(_ name: SessionAction.Name) {
        state.register(name.rawValue) { [unowned self] args in
            guard let sim = simulation, activity == .atCallback else {
                throw LuaError(kind: .runtime, message: "\(name.rawValue) acts on the running scale set: call it inside an at(...) callback\(activityText)",
                               refusal: misplaced(name.rawValue))
            }
            let action = try SessionAction(name, lua: args)
            do {
                try action.apply(to: sim)
            } catch let error as EngineError {
                sim.recordRefusal(of: name.rawValue, error)
                // A refusal is cheap to ask for and costs an event to record: a loop of caught
                // refusals stops at the script's budget, as any loop does.
                args.charge(Self.refusalCost)
                // The engine's text names the action when it says what refused it; once is enough.
                let message = error.message.hasPrefix(name.rawValue) ? error.message : "\(name.rawValue): \(error.message)"
                var problems: [Problem]?
                if case .invalid(let found)? = error.refusal { problems = found }
                throw LuaError(kind: .runtime, message: message, refusal: problems.map(HostRefusal.invalid))
            } catch {
                // A health, phase or fault call made for this action failed: the engine is midway
                // through the action, so the run ends here, whatever the script does with errors.
                fatal = fatal ?? error
                state.abortCurrentCall()
                throw error
            }
            return []
        }
    }
}

extension SessionAction {
    /// Reads the arguments of the Lua function `name` into its action; a `LuaArgumentError`
    /// names the bad argument and what is allowed.
    init(_ name: Name, lua args: LuaArguments) throws {
        switch name {
        case .updateModel:
            var changes: [String: String] = [:]
            var health: HealthExtensionChange?
            if args.count >= 1 && args.type(1) != .nil {
                guard var fields = try args.table(1).fields else {
                    throw LuaArgumentError(position: 1, problem: "expected a table of model attributes such as { image = \"v2\" }")
                }
                if let value = fields.removeValue(forKey: "healthExtension") { health = try ScriptSession.healthExtensionChange(value) }
                let (read, problems) = ModelAttributes.read(fields)
                if let (field, message) = problems.first {
                    throw LuaArgumentError(position: 1, problem: "attribute \(field): \(message)")
                }
                changes = read
            }
            self = .updateModel(changes, healthExtension: health)
        case .updatePolicy:
            guard args.count >= 1, args.type(1) == .table else {
                throw LuaArgumentError(position: 1, problem: "expected the fields of ARM's upgradePolicy to change, such as { mode = \"Rolling\", rollingUpgradePolicy = { maxUnhealthyInstancePercent = 10 } }")
            }
            let (patch, problems) = PolicyPatch.read(json(try args.value(1)))
            guard problems.isEmpty else {
                throw LuaArgumentError(position: 1, problem: problems.map(\.description).joined(separator: "; "), refusal: .invalid(problems))
            }
            self = .updatePolicy(patch)
        case .reimage: self = .reimage(ids: try ScriptSession.instanceIDs(args))
        case .cancel: self = .cancel
        case .manualUpgrade: self = .manualUpgrade(ids: try ScriptSession.instanceIDs(args))
        case .startOSUpgrade: self = .startOSUpgrade(image: try ScriptSession.optionalField(args, "image"))
        case .releaseImage:
            guard let version = try ScriptSession.optionalField(args, "version") else {
                throw LuaArgumentError(position: 1, problem: "expected { version = \"...\" }: the platform image version released")
            }
            self = .releaseImage(version: version)
        case .approveOSUpgrade: self = .approveOSUpgrade(ids: try ScriptSession.instanceIDs(args))
        case .startExtensionUpgrade: self = .startExtensionUpgrade(version: try ScriptSession.optionalField(args, "version"))
        case .scale: self = .scale(to: try args.integer(1))
        case .deleteInstances:
            guard let ids = try ScriptSession.instanceIDs(args) else {
                throw LuaArgumentError(position: 1, problem: "expected the ids of the instances to delete, such as { 1, 2 }; \"*\" is scale(0)")
            }
            self = .deleteInstances(ids: ids)
        case .protect: self = try Self.protection(args)
        case .answerHook: self = try LuaHookAnswerSource.action(args)
        case .setLifecycleHooks:
            let allowed = "expected a list of { type = \"UpgradeAutoOSRollingBatchStarting\", waitDuration = \"PT30M\", defaultAction = \"Approve\" }; {} removes every hook"
            var hooks: [LifecycleHook] = []
            switch args.count >= 1 ? try args.value(1) : .nil {
            case .array(let items) where !items.isEmpty:
                let (read, problems) = LifecycleHooksWire.profile(.object(["lifecycleHooks": .array(items.map(json))]), prefix: "set_lifecycle_hooks")
                guard problems.isEmpty else {
                    throw LuaArgumentError(position: 1, problem: problems.map { "\($0.field): \($0.message)" }.joined(separator: "; "),
                                           refusal: .invalid(problems))
                }
                hooks = read
            case .array, .table([:]): break
            default: throw LuaArgumentError(position: 1, problem: allowed)
            }
            self = .setLifecycleHooks(hooks)
        case .restart: self = .restart(ids: try ScriptSession.instanceIDs(args))
        case .stop: self = .stop(ids: try ScriptSession.instanceIDs(args), deallocate: try Self.deallocateFlag(args))
        case .start: self = .start(ids: try ScriptSession.instanceIDs(args))
        }
    }

    /// The optional second argument of `stop_instances(ids, { deallocate = true })`: false
    /// (power off, still allocated) when absent.
    private static func deallocateFlag(_ args: LuaArguments) throws -> Bool {
        guard args.count >= 2, args.type(2) != .nil else { return false }
        let allowed = "expected { deallocate = true } or { deallocate = false }"
        guard args.type(2) == .table, let fields = try args.table(2).fields else { throw LuaArgumentError(position: 2, problem: allowed) }
        for key in fields.keys where key != "deallocate" {
            throw LuaArgumentError(position: 2, problem: "unknown field \(key); allowed deallocate")
        }
        switch fields["deallocate"] {
        case nil: return false
        case .bool(let flag)?: return flag
        case let other?: throw LuaArgumentError(position: 2, problem: "deallocate is \(other.typeName); \(allowed)")
        }
    }

    /// `protect { id = 3, protectFromScaleIn = true, protectFromScaleSetActions = false }`: the
    /// protection policy Azure's VM PUT sets (a flag left out is false).
    private static func protection(_ args: LuaArguments) throws -> SessionAction {
        let allowed = "{ id = 3, protectFromScaleIn = true, protectFromScaleSetActions = false }"
        guard args.count >= 1, args.type(1) == .table, let fields = try args.table(1).fields else {
            throw LuaArgumentError(position: 1, problem: "expected \(allowed)")
        }
        for key in fields.keys where !["id", "protectFromScaleIn", "protectFromScaleSetActions"].contains(key) {
            throw LuaArgumentError(position: 1, problem: "unknown field \(key); allowed id, protectFromScaleIn, protectFromScaleSetActions")
        }
        guard let id = fields["id"]?.intValue else { throw LuaArgumentError(position: 1, problem: "id must be an instance id; expected \(allowed)") }
        var flags: [Bool] = []
        for key in ["protectFromScaleIn", "protectFromScaleSetActions"] {
            switch fields[key] {
            case nil: flags.append(false)
            case .bool(let flag)?: flags.append(flag)
            case let other?: throw LuaArgumentError(position: 1, problem: "\(key) is \(other.typeName); expected true or false")
            }
        }
        return .protect(id: id, fromScaleIn: flags[0], fromScaleSetActions: flags[1])
    }
}
