import Formats
import LuaHost
import UpgradeEngine

/// One thing the user must know, whatever produced it: what is wrong, where (a `file:line`, a
/// field path, a file), what was running, and the exit status it leads to. Every error and
/// warning of a scenario, a policy, a bundle or an option becomes diagnostics; the command line
/// renders them in one place.
public struct Diagnostic: Equatable, Sendable {
    /// How serious: an error stops the command, a warning does not.
    public enum Severity: String, Sendable {
        case error, warning
    }

    /// Error or warning.
    public var severity: Severity
    /// What is wrong, with the value found and what is allowed where there is a rule.
    public var message: String
    /// Where: `file:line`, a field path such as `scaleset.healthExtension.port`, or a file.
    public var location: String?
    /// What was running, e.g. `health of web_3 at PT10S`.
    public var context: String?
    /// The exit status: 2 for bad input of any kind, 1 for an expectation that failed, 0 for a warning.
    public var exitCode: Int32

    /// A diagnostic saying `message`, at `location`, in `context`.
    public init(_ severity: Severity = .error, _ message: String, location: String? = nil, context: String? = nil, exitCode: Int32? = nil) {
        self.severity = severity
        self.message = message
        self.location = location
        self.context = context
        self.exitCode = exitCode ?? (severity == .error ? 2 : 0)
    }

    /// The diagnostics an error stands for (a definition with three problems gives three).
    public static func of(_ error: any Error) -> [Diagnostic] {
        switch error {
        case let error as ScenarioError:
            switch error {
            case .file(let path, let problem): return [Diagnostic(.error, "cannot load: \(problem)", location: path)]
            case .host(let what): return [Diagnostic(.error, what)]
            case .runLimit(let limit): return [Diagnostic(.error, limit.description)]
            case .script(let lua, let context):
                return [Diagnostic(.error, lua.description, location: lua.location, context: context)]
            case .definition(let problems, let location):
                return problems.map { problem in
                    // A problem of an expect, phase or deferral call is located at that call,
                    // not at the scaleset the definition's location names.
                    for call in ["expect", "phase", "deferral"] where problem.field.hasPrefix("\(call) at ") {
                        let at = problem.field.dropFirst(call.count + 4)
                        return Diagnostic(.error, problem.message, location: "\(at): \(call)")
                    }
                    return Diagnostic(.error, problem.message, location: problem.field, context: location)
                }
            }
        case let failure as ValidationFailure:
            return failure.problems.map { Diagnostic(.error, $0.message, location: $0.field) }
        case let result as ExpectationResult:
            return [Diagnostic(.error, "\(result.key) is \(result.actual), expected \(result.expected)",
                               location: "expect at \(result.location)", exitCode: 1)]
        case let failure as RunFailure:
            // One run among many: each diagnostic names the run's seed first.
            return of(failure.error).map { d in
                var d = d
                d.message = "seed \(failure.seed): " + d.message
                return d
            }
        default:
            return [Diagnostic(.error, "\(error)")]
        }
    }
}
