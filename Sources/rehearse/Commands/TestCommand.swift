import ArgumentParser
import Formats
import Foundation
import Reports
import Scenario
import UpgradeEngine

/// `rehearse test`: every scenario under the paths, one line each, JUnit XML for CI.
struct TestCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "test",
        abstract: "Run every scenario (*.lua with an expect) under the paths and report each; exit 1 if an expectation failed, 2 if a scenario could not run.",
        discussion: "Folders are searched recursively; LuaLS definition files (---@meta) are skipped. --junit writes one testsuite per scenario and one testcase per expectation key."
    )

    @Argument(help: "Scenario files or folders (default: scripts).") var paths: [String] = ["scripts"]
    @Option(help: "Seed of every run.") var seed: UInt64 = 0
    @Option(name: .customLong("plugin-path"), help: "A folder of plugin bundles, searched before REHEARSE_PLUGIN_PATH and ./plugins (repeatable).")
    var pluginPath: [String] = []
    @Option(help: "Write JUnit XML to this file.") var junit: String?
    @OptionGroup var format: OutputOption

    func run() throws {
        try checkPluginPaths(pluginPath)
        let junitFile = try junit.map { try openOutput($0, option: "--junit", role: "the JUnit file") }
        let files = try paths.flatMap { try scenarios(under: $0) }
        guard !files.isEmpty else { throw fail(InputError(paths.joined(separator: " "), problem: "holds no scenario (*.lua with an expect)")) }
        var outcomes: [JUnit.Scenario] = []
        for file in files {
            var options = ScenarioOptions()
            options.seed = seed
            options.pluginPath = pluginPath
            options.print = { _ in }
            options.recordEvents = false
            let started = Date()
            var results: [ExpectationResult] = []
            var error: String?
            do {
                let definition = try ScenarioDefinition(path: file, options: options)
                results = try Rehearsal.run(definition, seed: seed).expectations
            } catch let failure as RunFailure {
                error = Diagnostic.of(failure.error).map(\.message).joined(separator: "; ")
            } catch let problem {
                error = Diagnostic.of(problem).map { ($0.location.map { "\($0): " } ?? "") + $0.message }.joined(separator: "; ")
            }
            let seconds = Date().timeIntervalSince(started)
            outcomes.append(JUnit.Scenario(path: file, results: results, error: error, seconds: seconds))
            if format.output != .text {
                continue
            } else if let error {
                printText("ERROR \(file): \(error)")
            } else if let failed = results.first(where: { !$0.held }) {
                let count = results.count { !$0.held }
                printText("FAIL  \(file): \(failed.key) is \(failed.actual), expected \(failed.expected) (expect at \(failed.location))"
                    + (count > 1 ? " and \(count - 1) more" : ""))
            } else {
                printText("ok    \(file) (\(results.count) expectation key\(results.count == 1 ? "" : "s"))")
            }
        }
        let errors = outcomes.count { $0.error != nil }
        let failures = outcomes.count { $0.results.contains { !$0.held } }
        if format.output == .json {
            print(JSON.ordered([
                JSONField("passed", .int(outcomes.count - errors - failures)), JSONField("failed", .int(failures)), JSONField("errors", .int(errors)),
                JSONField("scenarios", .array(outcomes.map { o in
                    .ordered([JSONField("path", .string(o.path)),
                              JSONField("result", .string(o.error != nil ? "error" : o.results.contains { !$0.held } ? "failed" : "passed")),
                              JSONField("error", o.error.map(JSON.string) ?? .null),
                              JSONField("expectations", .array(o.results.map(\.json)))])
                })),
            ]).serialized())
        } else if format.output == .table {
            for line in Tables.scenarios(outcomes) { printText(line) }
        } else {
            printText("\(outcomes.count) scenario\(outcomes.count == 1 ? "" : "s"): \(outcomes.count - errors - failures) passed, \(failures) failed, \(errors) could not run")
        }
        if let junitFile {
            let xml: String
            do { xml = try JUnit.xml(outcomes) } catch { throw fail(InputError("--junit", junitFile.path, problem: "cannot be made: \(error)")) }
            try finishOutput(junitFile, option: "--junit", writing: xml)
        }
        if errors > 0 { throw ExitCode(2) }
        if failures > 0 { throw ExitCode(1) }
    }

    /// `path` itself, or every scenario under the folder, in path order.
    func scenarios(under path: String) throws -> [String] {
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder) else {
            throw fail(InputError(path, problem: "no such file or folder"))
        }
        guard isFolder.boolValue else { return [path] }
        let found = (FileManager.default.enumerator(atPath: path)?.allObjects as? [String] ?? []).filter { $0.hasSuffix(".lua") }.sorted()
        return found.map { "\(path)/\($0)" }.filter { file in
            guard let text = try? String(contentsOfFile: file, encoding: .utf8) else { return false }
            return !text.hasPrefix("---@meta") && text.contains("expect")
                && text.range(of: #"(^|\n)\s*expect\s*[\{\(]"#, options: .regularExpression) != nil
        }
    }
}
