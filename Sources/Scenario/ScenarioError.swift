public import Formats
public import LuaHost
public import UpgradeEngine

/// Why a scenario could not run: the command line turns every case into exit status 2.
public enum ScenarioError: Error, CustomStringConvertible {
    /// A file could not be read: which, and why (`is not a regular file`, `does not exist`,
    /// `is 5000000 bytes; at most 4194304 are read`).
    case file(path: String, problem: String)
    /// The host could not do its own part (no Lua state could be made): what failed.
    case host(String)
    /// A Lua error, with what the engine was doing (the health script of web_3 at PT1M5S).
    case script(LuaError, context: ScriptContext?)
    /// The scenario's definition is wrong; every problem at once, each naming its field.
    case definition([Problem], location: String?)
    /// The run reached one of its run-level limits (actions, events, instances).
    case runLimit(RunLimitExceeded)

    public var description: String {
        switch self {
        case .file(let path, let problem): return "cannot load \(path): \(problem)"
        case .host(let what): return what
        case .runLimit(let limit): return limit.description
        case .script(let error, let context):
            var text = error.description
            if let context { text += " (\(context))" }
            return text
        case .definition(let problems, let location):
            let prefix = location.map { "\($0): " } ?? ""
            if problems.count == 1 { return prefix + problems[0].description }
            return prefix + "\(problems.count) problems in the scenario:\n" + problems.map { "  - \($0)" }.joined(separator: "\n")
        }
    }
}

/// What the engine was doing when a script failed, said as `health of web_3 at PT1M5S`.
public enum ScriptContext: Equatable, Sendable, CustomStringConvertible {
    /// Planning the run, before the virtual clock starts.
    case planning
    /// The script's `callback` (health, phase, fault, …) for `instance` at `time`.
    case callback(String, instance: String, at: Millis)
    /// `on_hook` answering the lifecycle-hook event `event` at `time`.
    case hook(event: String, at: Millis)

    public var description: String {
        switch self {
        case .planning: return "planning"
        case .callback(let name, let instance, let time): return "\(name) of \(instance) at \(ISODuration.format(time))"
        case .hook(let event, let time): return "on_hook of event \(event) at \(ISODuration.format(time))"
        }
    }
}

extension ScenarioError: UserFacingError {
    /// The file, the script line, or the definition's first problem's place.
    public var place: Location? {
        switch self {
        case .file(let path, _): return .file(path)
        case .host: return nil
        case .script(let lua, _): return lua.place
        case .definition(let problems, _): return problems.first?.location
        case .runLimit(let limit): return limit.place
        }
    }
    /// Every case is bad input: 2.
    public var exitCode: Int32 { 2 }
}
