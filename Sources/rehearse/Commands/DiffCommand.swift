import ArgumentParser
import AzureWire
import Formats
import Foundation
import Reports
import Scenario
import UpgradeEngine

/// `rehearse diff`: what a change to a scale set (a pull request's template, parameters or
/// Terraform plan) does to the running fleet, and a rehearsal of exactly that change.
struct DiffCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "diff",
        abstract: "Say what changing a scale set from BEFORE to AFTER does in its upgrade mode, and rehearse that change.",
        discussion: """
            BEFORE and AFTER are two versions of one scale set (same name and location, else exit 2): \
            az vmss show output, ARM templates or compiled Bicep (with --parameters), REST resources, or \
            Terraform plans (terraform show -json). One Terraform plan alone is read as its \
            resource_changes[].change.before and .after, and its actions decide whether the scale set is \
            replaced. With --template, BEFORE and AFTER are two parameters files of that template. Every \
            field that differs is classified (model change, scale-set level, capacity, zones added, \
            policy, tags, replacement) with its reason and source. A change that rolls instances is \
            rehearsed with the behaviours of --scenario (its health, phases and faults, its param()s from \
            --param; its own at() actions do not run), else with every probe Healthy. Prints Markdown for \
            a pull request comment (default) or JSON. With --require it is a gate: it runs seeds until \
            every requirement is decided (--seeds is the budget, default 0..9999), exit 1 when one failed, \
            is undecided, or the scale set is replaced; a change that rolls no instance has its \
            requirements "not applicable" (exit 0).
            """
    )

    @Argument(help: "The scale set before the change (or a Terraform plan holding both).") var before: String
    @Argument(help: "The scale set after the change.") var after: String?
    @Option(help: "A scenario whose behaviours (health, phases, faults) the rehearsal uses.") var scenario: String?
    @Option(help: "With BEFORE and AFTER as parameters files: the ARM template (or compiled Bicep) they are for.") var template: String?
    @Option(help: "With BEFORE and AFTER as ARM templates: the parameters file both are deployed with.") var parameters: String?
    @Option(help: "With a template or plan holding several scale sets: which one (name, symbolic name or Terraform address).") var resource: String?
    @Option(help: "With an ARM template: what resourceGroup(), subscription() and deployment() answer, NAME=VALUE (repeatable).")
    var context: [String] = []
    @Option(name: .customLong("param"), help: "A value for the scenario's param(NAME, default): NAME=VALUE (repeatable).")
    var scenarioParameters: [String] = []
    @Option(help: "The seeds of the rehearsal: A..B, both included (default 0..199; with --require and --until-decided, the budget 0..9999).") var seeds: String?
    @Flag(name: .customLong("until-decided"), inversion: .prefixedNo,
          help: "With --require: stop as soon as every requirement is held or failed (looks every 100 seeds).")
    var untilDecided = true
    @Option(help: "Runs at once (default: the machine's cores).") var jobs = ProcessInfo.processInfo.activeProcessorCount
    @Option(help: "The deadline the share of runs is reported against (ISO 8601; default PT60M, Terraform's default timeout).") var deadline = "PT60M"
    @OptionGroup var risk: RiskArguments
    @OptionGroup var format: JSONOutputOptions
    @OptionGroup var plugins: PluginPathOption

    func run() throws {
        do {
            try compare()
        } catch let error where !format.json && Diagnostic.of(error).contains(where: { $0.exitCode == 2 }) {
            // The pull request comment says why there is no answer.
            for line in DiffReport.refusal(Diagnostic.of(error).map(Diagnostics.located), label: label) { printText(line) }
            throw error
        }
    }

    /// What the comment calls the change before the documents are read.
    var label: String { template.map { "\($0) (\(before) → \(after ?? ""))" } ?? (after.map { "\(before) → \($0)" } ?? before) }

    func compare() throws {
        let (old, new, actions, label) = try versions()
        let diff = ScaleSetDiff(before: old, after: new, actions: actions)
        let budget = seeds ?? (risk.require.isEmpty || !untilDecided ? "0..199" : "0..9999")
        let (range, jobs, limit) = try SweepArguments.checked(seeds: budget, jobs: jobs, deadline: deadline)
        var team: ScenarioDefinition?
        var inputs = DiffRehearsal.inputs()
        if let scenario {
            var loader = try ScenarioLoader(seed: range.first, pluginPath: plugins.pluginPath, lock: nil, print: { printError("print: \($0)") })
            loader.options.parameters = try parameterValues(scenarioParameters)
            let (definition, loaded) = try loader.load(scenario)
            team = definition
            inputs = DiffRehearsal.inputs(loaded)
        } else if !scenarioParameters.isEmpty {
            throw InputError(option: "--param", problem: "there is no scenario to give it to", allowed: "--scenario FILE.lua with param(NAME, default)")
        }
        let question = try risk.question(script: team?.risk, deadline: limit, expectations: [])
        let definition = DiffRehearsal.definition(before: old.definition, after: new.definition, diff: diff, team: team, path: label)
        var report = DiffReport(label: label, mode: new.definition.policy.mode, capacity: old.definition.capacity, diff: diff, deadline: limit ?? 3_600_000)
        report.behaviours = scenario ?? "every probe Healthy, the engine's timings"
        if diff.consequences.contains(.rollingUpgradeNow) {
            // The batches the rolling upgrade will have, from the fleet as it starts.
            if let plan = try? Rehearsal.plan(definition, inputs.with(seed: range.first)) {
                var scaleSet = definition.scaleSet
                if let used = plan.policy { scaleSet.policy.rolling = used }
                report.arithmetic = PolicyArithmetic(definition: scaleSet, plan: plan, disruptive: diff.disruptive)
                report.policy = scaleSet.policy.rolling
            }
        }
        var judged: [RequirementResult]?
        if DiffRehearsal.rehearses(diff) {
            if let question, untilDecided {
                (report.runs, judged) = try Sweep.runUntilDecided(definition, inputs, seeds: range, question: question, jobs: jobs)
            } else {
                report.runs = try runSweep(definition, inputs, seeds: range.seeds(), jobs: jobs)
                judged = question?.judge(report.runs, keys: [])
            }
            report.seeds = report.runs.isEmpty ? range : SeedRange(report.runs.first!.seed, report.runs.last!.seed)
        }
        report.gate = question.map { DiffGate(question: $0, judged: judged, diff: diff) }
        if format.json {
            print(report.json.serialized(pretty: false))
        } else {
            for line in report.markdown { printText(line) }
        }
        if let gate = report.gate, !gate.passed { throw CommandFailure.shown(exitCode: 1) }
    }

    /// The two versions, a Terraform plan's actions (nil for two documents), and what to call the change.
    func versions() throws -> (ImportedScaleSet, ImportedScaleSet, [String]?, String) {
        if let template {
            guard let after else { throw ValidationError("with --template, give two parameters files: rehearse diff --template T.json old.parameters.json new.parameters.json") }
            if parameters != nil { throw InputError(option: "--parameters", problem: "BEFORE and AFTER are the parameters files with --template", allowed: "--template T.json OLD.parameters.json NEW.parameters.json") }
            let old = try importScaleSet(template, resource: resource, parameters: before, context: context)
            let new = try importScaleSet(template, resource: resource, parameters: after, context: context)
            return (old, new, nil, try same(old, new, "\(template) (\(before) → \(after))"))
        }
        guard let after else {
            let document = try readJSONDocument(before)
            guard ScaleSetImport.isTerraformChange(document) else {
                throw InputError(option: "AFTER", "(missing)", problem: "\(before) alone holds one version of the scale set",
                                 allowed: "two documents (BEFORE AFTER), or one Terraform plan with resource_changes (terraform show -json of a saved plan)")
            }
            do {
                let change = try ScaleSetImport.terraformChange(document, resource: resource)
                guard let old = change.before, let new = change.after else {
                    throw CommandFailure([Diagnostic("the plan \(change.before == nil ? "creates" : "deletes") \(change.address) (actions \(change.actions.joined(separator: ", "))): there is no running fleet to change", location: .file(before))], exitCode: 2)
                }
                for warning in old.warnings + new.warnings { warn(warning.message, location: inDocument(before, warning)) }
                return (old, new, change.actions, change.address)
            } catch let failure as ValidationFailure {
                throw CommandFailure(failure.problems.map { Diagnostic(Diagnostics.message($0), location: inDocument(before, $0)) }, exitCode: 2)
            }
        }
        let old = try importScaleSet(before, resource: resource, parameters: parameters, context: context)
        let new = try importScaleSet(after, resource: resource, parameters: parameters, context: context)
        return (old, new, nil, try same(old, new, "\(before) → \(after)"))
    }

    /// `label` when `new` is another version of `old`; exit 2 naming what differs otherwise.
    func same(_ old: ImportedScaleSet, _ new: ImportedScaleSet, _ label: String) throws -> String {
        guard let other = ScaleSetDiff.otherScaleSet(before: old, after: new) else { return label }
        throw CommandFailure([Diagnostic("AFTER is another scale set (\(other)), not a version of BEFORE: a diff compares two versions of one scale set", location: .file(after ?? before))], exitCode: 2)
    }
}
