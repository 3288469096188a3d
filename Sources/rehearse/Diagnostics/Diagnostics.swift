import ArgumentParser
import Formats
import Foundation
import Reports
import Scenario
import UpgradeEngine

/// Writes to standard error, with control characters shown rather than interpreted (messages
/// carry text from scripts and manifests).
func printError(_ text: String) {
    FileHandle.standardError.write(Data((ScriptText.escaped(text, keepingNewlines: true) + "\n").utf8))
}

/// Prints what `error` stands for and returns its exit status (2 for bad input).
func fail(_ error: any Error) -> ExitCode {
    // Already reported: an exit status made by an inner `fail`.
    if let code = error as? ExitCode { return code }
    let diagnostics = Diagnostic.of(error)
    report(diagnostics, header: (error as? ScenarioError).flatMap(definitionHeader))
    return ExitCode(diagnostics.map(\.exitCode).max() ?? 2)
}

/// The one renderer of diagnostics on standard error. One diagnostic is one line,
/// `rehearse: error: message (context)`, with its location first when the message does not
/// carry it; several problems of one definition are listed under `header`.
func report(_ diagnostics: [Diagnostic], header: String? = nil) {
    if let header, diagnostics.count > 1 {
        printError("rehearse: error: \(header)\(diagnostics.count) problems in the scenario:")
        for d in diagnostics { printError("  - \(d.location.map { "\($0): " } ?? "")\(d.message)") }
        return
    }
    for d in diagnostics {
        var line = "rehearse: \(d.severity.rawValue): "
        // The definition's location heads only the problems located by field, not those that
        // carry their own file:line (an expect, phase or deferral call).
        let header = d.context == nil ? nil : header
        if let header { line += header }
        if let location = d.location, !d.message.contains(location) { line += "\(location): " }
        line += d.message
        if let context = d.context, header == nil { line += " (\(context))" }
        printError(line)
    }
}

/// `file:line: ` before a definition's problems.
func definitionHeader(_ error: ScenarioError) -> String? {
    if case .definition(_, let location) = error { return location.map { "\($0): " } ?? "" }
    return nil
}

/// Every `--plugin-path` must be a folder: a path that does not exist is bad input, not an empty
/// plugin path.
func checkPluginPaths(_ paths: [String]) throws {
    for path in paths {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw fail(InputError("--plugin-path", path, problem: "no such folder", allowed: "a folder that holds plugin bundles"))
        }
    }
}

/// A warning on standard error, through the same renderer.
func warn(_ message: String, location: String? = nil) {
    report([Diagnostic(.warning, message, location: location)])
}

/// A warning on standard error for an event that is one (a wire oddity, instances without metrics).
func warnIfWire(_ event: Event) {
    switch event.payload {
    case .wireWarning(let name, let message): warn(message, location: name)
    case .metricsMissing: warn(event.detail)
    default: break
    }
}

/// Bad input named on the command line: where (an option, a file, a command), what was given,
/// what is wrong and what is allowed, as data; `fail` renders it once.
struct InputError: Error, CustomStringConvertible {
    /// An option (`--seeds`), a file, or a command (`merge`).
    var place: String
    /// The value given, when there is one.
    var value: String?
    /// What is wrong; nil when `allowed` says it all.
    var problem: String?
    /// What is allowed instead.
    var allowed: String?

    init(_ place: String, _ value: String? = nil, problem: String? = nil, allowed: String? = nil) {
        self.place = place
        self.value = value
        self.problem = problem
        self.allowed = allowed
    }

    /// `--seeds 9..3: allowed a range A..B …`, `part2.json: not a part …`.
    var description: String {
        let what = [problem, allowed.map { "allowed \($0)" }].compactMap { $0 }.joined(separator: "; ")
        return "\(place)\(value.map { " \($0)" } ?? ""): \(what)"
    }
}
