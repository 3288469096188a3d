import Formats
import LuaHost
import UpgradeEngine

/// `on_hook(function(event, now) … end)`: the team's approval automation, asked once per
/// lifecycle hook event as it is raised (SPEC §6b). `event` is a table: `name`, `type`,
/// `batch` (nil for a scheduling event), `targets` (instance ids; empty: the scale set),
/// `names` (their VM names), `time_created`, `wait_until`, `max_wait_until` (seconds on the
/// virtual clock) and `default_action`. It returns:
/// - nil or false: no answer (the event waits for `answer_hook` or its `waitUntil`);
/// - "approve" or "reject": every target, at once;
/// - a table: `reject` and `approve` ("*" or a list of ids; rejections first), `wait_until`
///   (a duration after `time_created`: the new `waitUntil`), `after` (a duration: the answer
///   arrives that much later, as a team's automation would).
final class LuaHookAnswerSource: ScriptBehavior, HookAnswerSource {
    func answer(_ event: LifecycleHookEvent, at time: Millis) throws -> HookResponse? {
        let outer = runtime.enter("on_hook", at: time)
        defer { runtime.activity = outer }
        let context = ScriptContext.hook(event: event.name, at: time)
        let results: [LuaValue]
        do {
            results = try state.call(callback.function, [Self.table(event), ScriptRuntime.seconds(time)])
        } catch let error as LuaError {
            var error = error
            if error.function == nil {
                error.function = "on_hook"
                error.location = error.location ?? callback.location
            }
            throw ScenarioError.script(error, context: context)
        }
        switch Self.response(results.first ?? .nil, allowAfter: true) {
        case .success(let response): return response
        case .failure(let problem):
            throw ScenarioError.script(LuaError(kind: .runtime, message: "on_hook returned \(problem.text)", location: callback.location,
                                                function: "on_hook"), context: context)
        }
    }

    /// The event as the callback sees it.
    static func table(_ event: LifecycleHookEvent) -> LuaValue {
        var fields: [String: LuaValue] = [
            "name": .string(event.name), "type": .string(event.type.rawValue),
            "targets": .array(event.targets.compactMap(\.instance).map(LuaValue.integer)),
            "names": .array(event.targets.map { .string($0.name) }),
            "time_created": ScriptRuntime.seconds(event.timeCreated), "wait_until": ScriptRuntime.seconds(event.waitUntil),
            "max_wait_until": ScriptRuntime.seconds(event.maxWaitUntil), "default_action": .string(event.defaultAction.rawValue),
        ]
        if let batch = event.batch { fields["batch"] = .integer(batch) }
        return .table(fields)
    }

    /// A problem with a returned or given answer, said as text.
    struct Problem: Error { let text: String }

    /// Reads an answer: nil/false (none), "approve"/"reject", or the table `on_hook` documents.
    static func response(_ value: LuaValue, allowAfter: Bool) -> Result<HookResponse?, Problem> {
        let keys = ["approve", "reject", "wait_until"] + (allowAfter ? ["after"] : [])
        switch value {
        case .nil, .bool(false): return .success(nil)
        case .string(let text) where text.lowercased() == "approve": return .success(HookResponse(approve: .all))
        case .string(let text) where text.lowercased() == "reject": return .success(HookResponse(reject: .all))
        default: break
        }
        guard let fields = value.fields else {
            return .failure(Problem(text: "\(value.typeName) \(value.plainText); allowed nil (wait), \"approve\", \"reject\" or a table with \(keys.joined(separator: ", "))"))
        }
        var response = HookResponse()
        for key in fields.keys.sorted() {
            let item = fields[key]!
            switch key {
            case "approve", "reject":
                let selection: HookSelection
                if item.stringValue == "*" { selection = .all }
                else if case .array(let ids) = item, !ids.isEmpty, ids.allSatisfy({ $0.intValue != nil }) { selection = .instances(ids.compactMap(\.intValue)) }
                else { return .failure(Problem(text: "\(key) = \(item.typeName); allowed \"*\" (every target still Waiting) or a list of instance ids such as { 3 }")) }
                if key == "approve" { response.approve = selection } else { response.reject = selection }
            case "wait_until", "after":
                switch DefinitionReader.duration(item) {
                case .success(let ms) where ms >= 0: if key == "after" { response.after = ms } else { response.waitFor = ms }
                case .success: return .failure(Problem(text: "\(key) is negative; allowed a duration such as \"PT12M\""))
                case .failure(let message): return .failure(Problem(text: "\(key): \(message.text)"))
                }
            default:
                return .failure(Problem(text: "a table with unknown field \(key); allowed \(keys.joined(separator: ", "))"))
            }
        }
        guard !response.isEmpty else { return .failure(Problem(text: "a table that decides nothing; give approve, reject or wait_until, or return nil to wait")) }
        return .success(response)
    }

    /// `answer_hook { approve = …, reject = …, wait_until = …, event = "name" }` (or "approve" /
    /// "reject"): the typed action it performs.
    static func action(_ args: LuaArguments) throws -> SessionAction {
        var value: LuaValue = .nil
        if args.count >= 1 { value = try args.value(1) }
        var event: String?
        if var fields = value.fields, let name = fields.removeValue(forKey: "event") {
            guard let text = name.stringValue else { throw LuaArgumentError(position: 1, problem: "event must be the event's name, a string") }
            event = text
            value = .table(fields)
        }
        switch response(value, allowAfter: false) {
        case .success(let response?): return .answerHook(event: event, response)
        case .success(nil):
            throw LuaArgumentError(position: 1, problem: "expected an answer: \"approve\", \"reject\" or { approve = \"*\" | { ids }, reject = …, wait_until = \"PT1H\", event = \"name\" }")
        case .failure(let problem): throw LuaArgumentError(position: 1, problem: problem.text)
        }
    }

    /// The `answer_hook { … }` call that performs `.answerHook(event, response)`, every value a literal.
    static func call(event: String?, _ response: HookResponse) -> String {
        func selection(_ chosen: HookSelection) -> String {
            switch chosen {
            case .all: return "\"*\""
            case .instances(let ids): return "{ " + ids.map(String.init).joined(separator: ", ") + " }"
            }
        }
        var fields: [String] = []
        if let reject = response.reject { fields.append("reject = " + selection(reject)) }
        if let approve = response.approve { fields.append("approve = " + selection(approve)) }
        if let wait = response.waitFor { fields.append("wait_until = " + LuaWriter.string(ISODuration.format(wait))) }
        if let event { fields.append("event = " + LuaWriter.string(event)) }
        return "answer_hook { " + fields.joined(separator: ", ") + " }"
    }
}
