import ArgumentParser
import Formats
import Foundation
import LuaHost
import Reports
import Scenario
import UpgradeEngine

/// `rehearse test`: every scenario under the paths, one line each, JUnit XML for CI.
struct TestCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "test",
        abstract: "Run every scenario (*.lua with an expect) under the paths and report each; exit 1 if an expectation failed, 2 if a scenario could not run.",
        discussion: "Folders are searched recursively; LuaLS definition files (---@meta) are skipped. --junit writes one testsuite per scenario and one testcase per expectation key and per requirement. A scenario with requirements (risk { } or --require) is swept over --seeds until every requirement is decided."
    )

    @Argument(help: "Scenario files or folders (default: scripts).") var paths: [String] = ["scripts"]
    @OptionGroup var seeded: SeedOption
    @OptionGroup var plugins: PluginPathOption
    @Option(help: "Write JUnit XML to this file.") var junit: String?
    @OptionGroup var risk: RiskArguments
    @Option(help: "The seeds a scenario with requirements may use: A..B, both included; it stops as soon as every requirement is decided.")
    var seeds = "0..9999"
    @Option(help: "The deadline a deadline requirement measures (ISO 8601, e.g. PT60M), for every scenario.") var deadline: String?
    @Option(help: "Runs at once for the requirements' sweeps (default: the machine's cores).") var jobs = ProcessInfo.processInfo.activeProcessorCount
    @OptionGroup var format: OutputOption

    func run() throws {
        // Loaded as `run` loads a scenario: the plugin path, then ./rehearse.lock when it exists.
        let loader = try ScenarioLoader(seed: seeded.seed, pluginPath: plugins.pluginPath, lock: nil, print: { _ in })
        let junitFile = try junit.map { try openOutput($0, option: "--junit", role: "the JUnit file") }
        let files = try paths.flatMap { try scenarios(under: $0) }
        guard !files.isEmpty else { throw InputError(.file(paths.joined(separator: " ")), problem: "holds no scenario (*.lua with an expect)") }
        let sweep = try SweepArguments.checked(seeds: seeds, jobs: jobs, deadline: deadline)
        var outcomes: [JUnit.Scenario] = []
        for file in files {
            let started = Date()
            var results: [ExpectationResult] = []
            var requirements: [RequirementResult] = []
            var error: String?
            do {
                let definition = try loader.definition(file)
                results = try Rehearsal.run(definition, loader.inputs).expectations
                if let question = try risk.question(script: definition.risk, deadline: sweep.2, expectations: ExpectationText.keys(of: definition.expectations)) {
                    requirements = try Sweep.runUntilDecided(definition, loader.inputs, seeds: sweep.0, question: question, jobs: sweep.1).results
                }
            } catch let input as InputError {
                // An option the command line got wrong ends the command, not one scenario.
                throw input
            } catch let failure as RunFailure {
                error = Diagnostic.of(failure.error).map(\.message).joined(separator: "; ")
            } catch let problem {
                error = Diagnostic.of(problem).map(Diagnostics.located).joined(separator: "; ")
            }
            let seconds = Date().timeIntervalSince(started)
            outcomes.append(JUnit.Scenario(path: file, results: results, error: error, seconds: seconds, requirements: requirements))
            if format.output != .text {
                continue
            } else if let error {
                printText("ERROR \(file): \(error)")
            } else if let failed = results.first(where: { !$0.held }) {
                let count = results.count { !$0.held } + requirements.count { $0.verdict != .held }
                printText("FAIL  \(file): \(ExpectationText.failure(failed)) (expect at \(failed.location))"
                    + (count > 1 ? " and \(count - 1) more" : ""))
            } else if let missed = requirements.first(where: { $0.verdict != .held }) {
                let count = requirements.count { $0.verdict != .held }
                printText("FAIL  \(file): \(RiskText.summary(missed))" + (count > 1 ? " and \(count - 1) more" : ""))
            } else {
                printText("ok    \(file) (\(results.count) expectation key\(results.count == 1 ? "" : "s")"
                    + (requirements.isEmpty ? ")" : ", \(requirements.count) requirement\(requirements.count == 1 ? "" : "s") held after \(requirements.map(\.share.total).max() ?? 0) runs)"))
            }
        }
        let errors = outcomes.count { $0.error != nil }
        let failures = outcomes.count { $0.error == nil && $0.failed }
        if format.output == .json {
            print(JSON.ordered([
                JSONField("passed", .int(outcomes.count - errors - failures)), JSONField("failed", .int(failures)), JSONField("errors", .int(errors)),
                JSONField("scenarios", .array(outcomes.map { o in
                    .ordered([JSONField("path", .string(o.path)),
                              JSONField("result", .string(o.error != nil ? "error" : o.failed ? "failed" : "passed")),
                              JSONField("error", o.error.map(JSON.string) ?? .null),
                              JSONField("expectations", .array(o.results.map(\.json))),
                              JSONField("requirements", RiskText.json(o.requirements, confidence: o.requirements.first?.confidence ?? 0.95))])
                })),
            ]).serialized())
        } else if format.output == .table {
            for line in Tables.scenarios(outcomes) { printText(line) }
        } else {
            printText("\(outcomes.count) scenario\(outcomes.count == 1 ? "" : "s"): \(outcomes.count - errors - failures) passed, \(failures) failed, \(errors) could not run")
        }
        if let junitFile {
            let xml: String
            do { xml = try JUnit.xml(outcomes) } catch { throw InputError(option: "--junit", junitFile.path, problem: "cannot be made: \(error)") }
            try finishOutput(junitFile, option: "--junit", writing: xml)
        }
        // The lines above said which scenario failed or could not run.
        if errors > 0 { throw CommandFailure.shown(exitCode: 2) }
        if failures > 0 { throw CommandFailure.shown(exitCode: 1) }
    }

    /// `path` itself, or every scenario under the folder, in path order.
    func scenarios(under path: String) throws -> [String] {
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder) else {
            throw InputError(.file(path), problem: "no such file or folder")
        }
        guard isFolder.boolValue else { return [path] }
        let found = (FileManager.default.enumerator(atPath: path)?.allObjects as? [String] ?? []).filter { $0.hasSuffix(".lua") }.sorted()
        // Each file's size is checked before it is read, as `run` checks it: one too large to
        // load is kept, and its run reports the refusal (exit 2), rather than being read whole.
        return found.map { "\(path)/\($0)" }.filter { file in
            let size = (try? FileManager.default.attributesOfItem(atPath: file)[.size] as? Int) ?? 0
            if size > BoundedFile.maxSourceBytes { return true }
            guard let bytes = try? BoundedFile.read(file, maxBytes: BoundedFile.maxSourceBytes) else { return false }
            let text = String(decoding: bytes, as: UTF8.self)
            return !text.hasPrefix("---@meta") && (text.contains("expect") || text.contains("risk"))
                && text.range(of: #"(^|\n)\s*(expect|risk)\s*[\{\(]"#, options: .regularExpression) != nil
        }
    }
}
