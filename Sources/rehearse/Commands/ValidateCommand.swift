import ArgumentParser
import AzureWire
import Formats
import Foundation
import Scenario
import UpgradeEngine

/// `rehearse validate`: check a scenario or an upgrade policy, reporting every problem.
struct ValidateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "validate",
        abstract: "Check a scenario (.lua), a scale set document (az vmss show, ARM template, compiled Bicep, Terraform plan) or an upgradePolicy (.json); report every problem at once; exit 0 or 2."
    )

    @Argument(help: "A Lua scenario script, a scale set document or a JSON upgradePolicy.") var file: String
    @OptionGroup var reading: DocumentArguments
    @OptionGroup var plugins: PluginPathOption

    @OptionGroup var format: OutputOption

    func validate() throws { try format.refuseTable("validate") }

    func run() throws {
        do {
            try check()
        } catch {
            // A program asking for JSON gets the refusal as JSON too, on standard output; the
            // person still reads it on standard error, and the exit status is the error's.
            if format.output == .json {
                let problems = Diagnostic.of(error)
                print(JSON.ordered([JSONField("file", .string(file)), JSONField("ok", .bool(false)),
                                    JSONField("problems", .array(problems.map(\.json)))]).serialized())
            }
            throw error
        }
    }

    func check() throws {
        // A Bicep file is a document too: its reading says to compile it first.
        if file.lowercased().hasSuffix(".json") || file.lowercased().hasSuffix(".bicep") {
            // Sized before it is read, and read once: what it is decides how it is checked.
            let document = try readJSONDocument(file)
            if InstanceList.matches(document), ScaleSetImport.format(of: document) != .azResource {
                try refuseDocumentOptions("an instance list")
                let fleet = try importFleet(file)
                let behind = fleet.count { !$0.latestModelApplied }
                return ok("instance list", nil, "an instance list: \(fleet.count) instances, \(behind) not on the latest model",
                          extra: [JSONField("instances", .int(fleet.count)), JSONField("notOnLatestModel", .int(behind))])
            }
            if let kind = ScaleSetImport.format(of: document) {
                let imported = try reading.read(file)
                let d = imported.definition
                let warnings = imported.warnings.map { Diagnostic(Diagnostics.message($0), severity: .warning, location: inDocument(file, $0)) }
                return ok(kind.rawValue, d, "\(kind.rawValue): \(d.name), \(d.capacity) instances, \(d.orchestration.rawValue), \(d.policy.mode.rawValue) mode"
                          + (d.zones.isEmpty ? "" : ", zones \(d.zones.joined(separator: ","))"), warnings: warnings)
            }
            if case .string(let schema)? = document.member("$schema"), schema.contains("deploymentParameters") {
                throw InputError(.file(file), problem: "is an ARM parameters file", allowed: "the template, with --parameters \(file)")
            }
            try refuseDocumentOptions("an upgradePolicy")
            do {
                let policy = try UpgradePolicy.parse(document)
                return ok("upgradePolicy", nil, "mode \(policy.mode.rawValue), batches of \(policy.rolling.maxBatchInstancePercent)%",
                          extra: [JSONField("policy", policy.json)])
            } catch {
                // Each problem at its field of this file: one line each, one entry each in JSON.
                var failure = error
                for index in failure.problems.indices where failure.problems[index].place == nil {
                    failure.problems[index].place = .document(path: file, field: failure.problems[index].field)
                }
                throw failure
            }
        }
        // A script names its document's options itself (`from`, `resource`, `parameters`, `context`).
        try refuseDocumentOptions("a Lua scenario (give resource, parameters and context beside from = in the script)")
        // Loaded as `run` loads a scenario: the plugin path, then ./rehearse.lock when it exists.
        let loader = try ScenarioLoader(seed: 0, pluginPath: plugins.pluginPath, lock: nil, print: { _ in })
        let scenario: ScenarioDefinition
        scenario = try loader.definition(file)
        for warning in scenario.warnings { warn(warning) }
        let d = scenario.scaleSet
        ok("scenario", d, "\(d.name), \(d.capacity) instances, \(d.policy.mode.rawValue) mode" + (d.zones.isEmpty ? "" : ", zones \(d.zones.joined(separator: ","))"),
           warnings: scenario.warnings.map { Diagnostic($0, severity: .warning) })
    }

    /// Refuses `--resource`, `--parameters` and `--context`, which only a scale set document
    /// reads, when `file` is `what` instead: given, they would be passed over without a word.
    func refuseDocumentOptions(_ what: String) throws {
        let given = [("--resource", reading.resource), ("--parameters", reading.parameters), ("--context", reading.context.first)]
        for case let (option, value?) in given {
            throw InputError(option: option, value, problem: "applies to a scale set document (an ARM template, a Terraform plan, az vmss show); \(file) is \(what)")
        }
    }

    /// `FILE: ok (…)`, or with `--output json` one object: the file, what it is, the scale set it
    /// describes, and the warnings standard error shows (`warnings`, each as a problem is, with
    /// severity `warning`; empty when there are none).
    func ok(_ kind: String, _ d: ScaleSetDefinition?, _ text: String, extra: [JSONField] = [], warnings: [Diagnostic] = []) {
        guard format.output == .json else { return printText("\(file): ok (\(text))") }
        var fields = [JSONField("file", .string(file)), JSONField("ok", .bool(true)), JSONField("kind", .string(kind)),
                      JSONField("warnings", .array(warnings.map(\.json)))]
        if let d {
            fields += [JSONField("name", .string(d.name)), JSONField("capacity", .int(d.capacity)),
                       JSONField("orchestration", .string(d.orchestration.rawValue)), JSONField("zones", .array(d.zones.map(JSON.string))),
                       JSONField("policy", d.policy.json)]
        }
        print(JSON.ordered(fields + extra).serialized())
    }
}
