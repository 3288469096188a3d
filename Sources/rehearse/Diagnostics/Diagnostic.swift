import Formats
import LuaHost
import Plugins
import Reports
import Scenario
import Serve
import UpgradeEngine

/// Tier two: one thing the user must know, made from a typed error (or a warning) just before it
/// is rendered, as swift-argument-parser's `MessageInfo` is made from a `ParserError`: what is
/// wrong, where (typed), what was running, and the exit status it leads to.
struct Diagnostic: Equatable {
    /// How serious: an error stops the command, a warning or a note does not.
    enum Severity: String {
        case error, warning, note
    }

    /// Error or warning.
    var severity: Severity
    /// What is wrong, with the value found and what is allowed where there is a rule.
    var message: String
    /// Where, rendered by `Diagnostics.text(of:)`.
    var location: Location?
    /// What was running (`health of web_3 at PT10S`), or the definition's `file:line` for a
    /// problem located by field.
    var context: String?
    /// The exit status: 2 for bad input, 1 for an expectation that failed, 0 for a warning.
    var exitCode: Int32
    /// An expectation's result: its call is written `expect at file:line` before the message.
    var isExpectation = false
    /// The script line of the call whose fields the problem is in (`scaleset { … }` for a field
    /// of the scale set), typed for `--output json`; the text shows it as `context`.
    var definedAt: ScriptLine?

    /// A diagnostic saying `message`, at `location`, in `context`.
    init(_ message: String, severity: Severity = .error, location: Location? = nil, context: String? = nil, exitCode: Int32? = nil) {
        self.severity = severity
        self.message = message
        self.location = location
        self.context = context
        self.exitCode = exitCode ?? (severity == .error ? 2 : 0)
    }
}

extension Diagnostic {
    /// The diagnostic with its message and context on one line each: every control character
    /// (a line break included) shown escaped, as `ScriptText.escaped` shows it.
    var oneLine: Diagnostic {
        var d = self
        d.message = ScriptText.escaped(message)
        d.context = context.map { ScriptText.escaped($0) }
        return d
    }

    /// The diagnostics an error stands for (a definition with three problems gives three).
    static func of(_ error: any Error) -> [Diagnostic] {
        switch error {
        case let failure as CommandFailure:
            return failure.diagnostics
        case let error as ScenarioError:
            switch error {
            case .file(let path, let problem): return [Diagnostic("cannot load: \(problem)", location: .file(path))]
            case .host(let what): return [Diagnostic(what)]
            case .runLimit(let limit): return [Diagnostic(Diagnostics.message(limit))]
            case .script(let lua, let context):
                return [Diagnostic(Diagnostics.message(lua), location: lua.place ?? lua.location.map(Location.file), context: context?.description)]
            case .definition(let problems, let location):
                return problems.map { problem in
                    // A problem of an expect, phase or deferral call is located at that call,
                    // not at the scaleset the definition's location names.
                    if case .call = problem.location { return Diagnostic(Diagnostics.message(problem), location: problem.location) }
                    var d = Diagnostic(Diagnostics.message(problem), location: problem.location, context: location)
                    // The location is the `chunk:line` Lua gave for the scaleset call (or a path).
                    d.definedAt = location.flatMap(ScriptLine.init(lua:))
                    return d
                }
            }
        case let failure as ValidationFailure:
            return failure.problems.map { Diagnostic(Diagnostics.message($0), location: $0.location) }
        case let result as ExpectationResult:
            var d = Diagnostic(ExpectationText.failure(result),
                               location: result.place ?? .file(result.location), exitCode: result.exitCode)
            d.isExpectation = true
            return [d]
        case let failure as RunFailure:
            // One run among many: each diagnostic names the run's seed first.
            return of(failure.error).map { d in
                var d = d
                d.message = "seed \(failure.seed): " + d.message
                return d
            }
        case let input as InputError:
            // A whole file refused (not regular, unreadable, too large, not JSON) has the file as
            // its place too, and an option its option, so `--output json` gives them as fields;
            // the message keeps naming them, so the text is unchanged.
            switch input.place {
            case .file? where input.value == nil, .option?:
                return [Diagnostic(Diagnostics.message(input), location: input.place, exitCode: input.exitCode)]
            default: break
            }
            return [Diagnostic(Diagnostics.message(input), exitCode: input.exitCode)]
        case let limit as RunLimitExceeded:
            return [Diagnostic(Diagnostics.message(limit))]
        case let lua as LuaError:
            return [Diagnostic(Diagnostics.message(lua), location: lua.place)]
        case let failure as SweepThreadFailure:
            return [Diagnostic(Diagnostics.message(failure))]
        case let failure as SweepPart.Failure:
            // The place always heads the line, even when the message happens to name it.
            return [Diagnostic("\(failure.place.map { Diagnostics.text(of: $0) } ?? "merge"): \(failure.problem)")]
        case let error as ServeError:
            switch error {
            case .input(let setting, let value, let problem):
                return [Diagnostic("\(Diagnostics.text(of: .setting(setting, value: value))): \(problem)")]
            case .run(let run): return of(run)
            case .events(let problem): return [Diagnostic(problem)]
            }
        case let problem as PluginProblem:
            return [Diagnostic(Diagnostics.message(problem))]
        case let error as any UserFacingError:
            return [Diagnostic("\(error)", exitCode: error.exitCode)]
        default:
            return [Diagnostic("\(error)")]
        }
    }
}
