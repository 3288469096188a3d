import ArgumentParser
import Formats
import Foundation
import LuaHost
import Plugins
import Scenario
import UpgradeEngine

/// The one renderer of errors and warnings: typed errors and their locations become text here
/// and nowhere else. `Rehearse.main` renders the error a command ends with; `warn` renders a
/// warning as it happens.
enum Diagnostics {
    /// Writes what `error` stands for on standard error and returns the exit status it leads to
    /// (2 for bad input, 1 for an expectation that failed).
    static func render(_ error: any Error) -> Int32 {
        let diagnostics = Diagnostic.of(error)
        let header = (error as? CommandFailure)?.header ?? (error as? ScenarioError).flatMap(definitionHeader)
        write(diagnostics, header: header)
        if let failure = error as? CommandFailure { return failure.exitCode }
        return diagnostics.map(\.exitCode).max() ?? 2
    }

    /// One diagnostic is one line, `rehearse: error: message (context)`, with its location first
    /// when the message does not carry it; several problems of one definition are listed under
    /// `header`.
    /// Every piece is made one line first (`oneLine`): a name or value from a document or a
    /// script that holds a line break cannot start a line of its own that reads like rehearse's.
    static func write(_ raw: [Diagnostic], header rawHeader: String? = nil) {
        let diagnostics = raw.map(\.oneLine)
        let header = rawHeader.map { ScriptText.escaped($0) }
        if let header, diagnostics.count > 1 {
            printError("rehearse: error: \(header)\(diagnostics.count) problems:")
            for d in diagnostics { printError("  - \(d.location.map { "\(ScriptText.escaped(text(of: $0, expectation: d.isExpectation))): " } ?? "")\(d.message)") }
            return
        }
        for d in diagnostics {
            var line = d.severity == .note ? "rehearse: " : "rehearse: \(d.severity.rawValue): "
            // The definition's location heads only the problems located by field, not those that
            // carry their own file:line (an expect, phase or deferral call).
            let header = d.context == nil ? nil : header
            if let header { line += header }
            if let location = d.location.map({ ScriptText.escaped(text(of: $0, expectation: d.isExpectation)) }), !d.message.contains(location) { line += "\(location): " }
            line += d.message
            if let context = d.context, header == nil { line += " (\(context))" }
            printError(line)
        }
    }

    /// A diagnostic as one phrase, its location first unless its message already carries it
    /// (a Lua error's own `file:line: `): what `test` prints after a scenario that could not run.
    static func located(_ given: Diagnostic) -> String {
        let d = given.oneLine
        guard let location = d.location.map({ ScriptText.escaped(text(of: $0, expectation: d.isExpectation)) }), !d.message.contains(location) else { return d.message }
        return "\(location): \(d.message)"
    }

    /// `file:line: ` before a definition's problems.
    static func definitionHeader(_ error: ScenarioError) -> String? {
        if case .definition(_, let location) = error { return location.map { "\($0): " } ?? "" }
        return nil
    }

    /// A location as the user reads it: `file:line`, `file:line: expect` (or `expect at
    /// file:line` for an expectation's result), `file: field`, an option with its value.
    static func text(of location: Location, expectation: Bool = false) -> String {
        switch location {
        case .script(let line): return line.description
        case .call(let name, let line): return expectation ? "\(name) at \(line)" : "\(line): \(name)"
        case .document(let path, let field): return (path.map { "\($0): " } ?? "") + field
        case .option(let option): return option
        case .setting(let setting, let value): return option(for: setting) + (value.map { separator(for: setting) + $0 } ?? "")
        case .file(let path): return path
        case .command(let command): return expectation ? "expect at \(command)" : command
        }
    }

    /// The command-line option that gives `setting`.
    static func option(for setting: Setting) -> String {
        switch setting {
        case .parameter(let name): return "--param \(name)"
        case .policyOverride(let path): return "--set \(path)"
        case .resource: return "--resource"
        case .templateParameters: return "--parameters"
        case .jobs: return "--jobs"
        case .repositoryURL: return "--url"
        case .repository: return "--repo"
        case .eventsFile: return "--events"
        case .caCertificate: return "--ca-cert"
        case .port: return "--port"
        case .report: return "--report"
        case .deploymentContext: return "--context"
        }
    }

    /// Between an option and its value: `--param name=value`, `--jobs 4`.
    static func separator(for setting: Setting) -> String {
        if case .parameter = setting { return "=" }
        return " "
    }

    /// The command-line option that raises `limit`.
    static func option(for limit: RunLimit) -> String {
        switch limit {
        case .actions: return "--max-actions"
        case .events: return "--max-events"
        case .instances: return "--max-instances"
        case .modelVersions: return "--max-model-versions"
        case .probes: return "--max-probes"
        }
    }

    /// The command-line option that raises a run-wide script limit.
    static func option(for limit: LuaRunLimit) -> String {
        switch limit {
        case .instructions: return "--max-script-instructions"
        case .cpuTime: return "--max-script-seconds"
        }
    }

    /// `run limit reached: …; raise it with --max-probes if the scenario really needs more`.
    static func message(_ limit: RunLimitExceeded) -> String {
        "\(limit); raise it with \(option(for: limit.limit)) if the scenario really needs more"
    }

    /// A Lua error's line, with the option that raises a run-wide limit it reached.
    static func message(_ lua: LuaError) -> String {
        guard let limit = lua.runLimit else { return lua.description }
        var plain = lua
        plain.location = nil
        let at = lua.location.map { " at \(ScriptText.escaped($0))" } ?? ""
        return plain.description + " (raise it with \(option(for: limit)))" + at
    }

    /// A problem's message, with the option that resolves it (`; choose one with --resource NAME
    /// (or resource = "NAME")`).
    static func message(_ problem: Problem) -> String {
        guard let remedy = problem.remedy else { return problem.message }
        return problem.message + " with \(option(for: remedy.setting)) \(remedy.placeholder)" + (remedy.scriptForm.map { " (or \($0))" } ?? "")
    }

    /// `--jobs: the system could not start …; allowed fewer jobs, such as --jobs 3`.
    static func message(_ failure: SweepThreadFailure) -> String {
        "\(option(for: .jobs)): \(failure); allowed fewer jobs, such as \(option(for: .jobs)) \(max(1, failure.started))"
    }

    /// A bundle's problem; one about a repository option names the option.
    static func message(_ problem: PluginProblem) -> String {
        guard case .setting(let setting, let value)? = problem.place else { return problem.message }
        let what = [problem.problem, problem.allowed.map { "allowed \($0)" }].compactMap { $0 }.joined(separator: "; ")
        let note = setting == .repositoryURL ? " (without \(option(for: setting)), archive names are relative to the index)" : ""
        return "\(text(of: .setting(setting, value: value))): \(what)\(note)"
    }

    /// `--seeds 9..3: allowed a range A..B …`, `part2.json: not a part …`.
    static func message(_ input: InputError) -> String {
        let what = [input.problem, input.allowed.map { "allowed \($0)" }].compactMap { $0 }.joined(separator: "; ")
        return "\(input.place.map { text(of: $0) } ?? "")\(input.value.map { " \($0)" } ?? ""): \(what)"
    }
}

/// Writes to standard error, with control characters shown rather than interpreted (messages
/// carry text from scripts and manifests).
func printError(_ text: String) {
    StandardStream.error.write(ScriptText.escaped(text, keepingNewlines: true) + "\n")
}

/// A note on standard error (`rehearse: …`): something the output cannot show, not a problem.
func note(_ message: String) {
    Diagnostics.write([Diagnostic(message, severity: .note)])
}

/// A warning on standard error, through the same renderer.
func warn(_ message: String, location: Location? = nil) {
    Diagnostics.write([Diagnostic(message, severity: .warning, location: location)])
}
