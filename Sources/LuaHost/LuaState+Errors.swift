import CLua
import CLuaSupport
import Foundation

/// How a failed call becomes a `LuaError`: the message, the place and the traceback; the
/// limit that stopped it; and what the host or the sandbox refused, when that reached the
/// call unchanged.
extension LuaState {
    /// The first `file:line` of a traceback that is a Lua line (not `[C]`).
    static func firstLuaLine(_ traceback: String) -> String? {
        for line in traceback.split(separator: "\n") {
            let text = line.drop(while: { $0 == "\t" || $0 == " " })
            guard !text.hasPrefix("[C]"), !text.hasPrefix("(...") else { continue }
            if let location = LuaError.splitLocation(String(text)).location { return location }
        }
        return nil
    }

    /// Turns a failed call's status and message into a `LuaError`, popping the message.
    @usableFromInline
    func callError(_ status: Int32, function: String) -> LuaError {
        let raw = stack.string(at: -1) ?? "(error object is not a string)"
        clua_pop(L, 1)
        let traceMarker = "\nstack traceback:\n"
        let message: String
        let traceback: String?
        if let range = raw.range(of: traceMarker) {
            message = String(raw[..<range.lowerBound])
            traceback = String(raw[range.upperBound...])
        } else {
            message = raw
            traceback = nil
        }
        let (location, text) = LuaError.splitLocation(message)
        let where_ = String(cString: rh_last_where(host))
        // A limit names itself; its place is where the host saw it spent, else the message's.
        let limit: (kind: LuaError.Kind, message: String)?
        switch rh_last_stop(host) {
        case RH_STOP_BUDGET: limit = (.budget(limits.instructions), "instruction budget exceeded")
        case RH_STOP_RUN_BUDGET: limit = (.runBudget(limits.runInstructions), "run instruction budget exceeded")
        case RH_STOP_MEMORY: limit = (.memory(limits.memoryBytes), "memory limit exceeded")
        case RH_STOP_CPU: limit = (.cpuTime(limits.wallClockMilliseconds), "CPU-time backstop of the call passed")
        case RH_STOP_RUN_CPU: limit = (.runCPUTime(limits.runWallClockMilliseconds), "CPU-time backstop of the run passed")
        case RH_STOP_HOST: limit = (.aborted, "call ended by the host")
        default: limit = nil
        }
        if let limit {
            return LuaError(kind: limit.kind, message: limit.message, location: where_.isEmpty ? location : where_, traceback: traceback,
                            function: function)
        }
        if status == LUA_ERRMEM {
            return LuaError(kind: .memory(limits.memoryBytes), message: "not enough memory", function: function)
        }
        // An error raised by a C function (coroutine.yield outside a coroutine) has no
        // position of its own: the innermost Lua line of the traceback stands for it.
        let place = location ?? traceback.flatMap(Self.firstLuaLine)
        let noted = raised.take(ifEnding: message)
        // A nested call's failure (a limit it reached, its script's error) that reached this
        // call as the very string the host function raised keeps its kind, message and place.
        // One the script caught and raised again, in words of its own or at its own line, is
        // the script's.
        let unchanged = rh_take_raised_unchanged(host) != 0
        if var inner = noted?.error, unchanged {
            rh_clear_refusal(host)
            inner.location = inner.location ?? place
            inner.traceback = traceback
            inner.function = function
            return inner
        }
        var error = LuaError(kind: .runtime, message: text, location: place, traceback: traceback, function: function)
        // A host function's refusal, or the sandbox's, that reached the call unchanged keeps its data.
        error.refusal = noted?.refusal ?? sandboxRefusal(ending: message)
        return error
    }
}

extension LuaState {
    /// The sandbox rule the failed call broke, when its message ends with the text the sandbox
    /// raised for it (a refusal the script caught and replaced is not this call's); forgotten
    /// either way.
    func sandboxRefusal(ending message: String) -> HostRefusal? {
        defer { rh_clear_refusal(host) }
        let rule: HostRefusal.SandboxRule
        switch rh_last_refusal(host) {
        case RH_REFUSAL_FINALIZER: rule = .finalizers
        case RH_REFUSAL_WEAK_KEYS: rule = .weakKeys
        case RH_REFUSAL_FORMAT_POINTER: rule = .formatPointer
        case RH_REFUSAL_TEXT_CHUNKS: rule = .textChunksOnly
        case RH_REFUSAL_COROUTINE_DEPTH: rule = .coroutineDepth
        default: return nil
        }
        let text = String(cString: rh_last_refusal_text(host))
        guard !text.isEmpty, message.hasSuffix(text) else { return nil }
        return .sandbox(rule)
    }
}

/// What the last Swift function to fail raised into Lua, with the text it raised: Lua carries
/// only the text, so a call that fails with that text gets the data back.
final class RaisedError {
    /// What a Swift function raised, as data.
    struct Raised {
        /// The text the function raised (Lua adds the place before it).
        var text: String
        /// What the host refused (nil: not a refusal).
        var refusal: HostRefusal?
        /// The failure of a call into Lua that the function passed on (a nested call).
        var error: LuaError?
    }
    private var last: Raised?

    /// A Swift function raised `text`; `refusal`, what the host refused (nil: not a refusal);
    /// `error`, the nested call's failure it passed on.
    func note(_ text: String, _ refusal: HostRefusal?, error: LuaError? = nil) {
        last = refusal == nil && error == nil ? nil : Raised(text: text, refusal: refusal, error: error)
    }

    /// What was raised as the end of `message` (Lua adds the place before it); nil when the
    /// failure is another. Either way it is forgotten.
    func take(ifEnding message: String) -> Raised? {
        defer { last = nil }
        guard let last, !last.text.isEmpty, message.hasSuffix(last.text) else { return nil }
        return last
    }
}
