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
            BEFORE and AFTER are two versions of one scale set: az vmss show output, ARM templates or \
            compiled Bicep, REST resources, or Terraform plans (terraform show -json). One Terraform plan \
            alone is read as its resource_changes[].change.before and .after. With --template, BEFORE and \
            AFTER are two parameters files of that template. The change is rehearsed over --seeds with \
            the behaviours of --scenario (its health, phases and faults; its own at() actions do not run), \
            else with every probe Healthy. Prints Markdown for a pull request comment (default) or JSON. \
            With --require it is a gate: exit 1 when a requirement failed or is undecided.
            """
    )

    @Argument(help: "The scale set before the change (or a Terraform plan holding both).") var before: String
    @Argument(help: "The scale set after the change.") var after: String?
    @Option(help: "A scenario whose behaviours (health, phases, faults) the rehearsal uses.") var scenario: String?
    @Option(help: "With BEFORE and AFTER as parameters files: the ARM template (or compiled Bicep) they are for.") var template: String?
    @Option(help: "With a template or plan holding several scale sets: which one (name, symbolic name or Terraform address).") var resource: String?
    @Option(help: "The seeds of the rehearsal: A..B, both included.") var seeds = "0..199"
    @Option(help: "Runs at once (default: the machine's cores).") var jobs = ProcessInfo.processInfo.activeProcessorCount
    @Option(help: "The deadline the share of runs is reported against (ISO 8601; default PT60M, Terraform's default timeout).") var deadline = "PT60M"
    @OptionGroup var risk: RiskArguments
    @OptionGroup var format: JSONOutputOptions
    @OptionGroup var plugins: PluginPathOption

    func run() throws {
        let (old, new, replaced, label) = try versions()
        let diff = ScaleSetDiff(before: old.definition, after: new.definition, replaced: replaced)
        let (range, jobs, limit) = try SweepArguments.checked(seeds: seeds, jobs: jobs, deadline: deadline)
        var team: ScenarioDefinition?
        var inputs = DiffRehearsal.inputs()
        if let scenario {
            let loader = try ScenarioLoader(seed: range.first, pluginPath: plugins.pluginPath, lock: nil, print: { printError("print: \($0)") })
            let (definition, loaded) = try loader.load(scenario)
            team = definition
            inputs = DiffRehearsal.inputs(loaded)
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
        if !diff.consequences.contains(.replacement) && !diff.consequences.contains(.none) {
            report.runs = try runSweep(definition, inputs, seeds: range.seeds(), jobs: jobs)
            report.seeds = range
        }
        let judged = question?.judge(report.runs, keys: [])
        if format.json {
            var json = report.json
            if case .ordered(var fields) = json, let judged, let question {
                fields.append(JSONField("requirements", .array(judged.map { r in
                    .ordered([JSONField("requirement", .string(r.requirement.description)), JSONField("count", .int(r.share.count)),
                              JSONField("total", .int(r.share.total)), JSONField("verdict", .string(r.verdict.rawValue))])
                })))
                fields.append(JSONField("passed", .bool(RiskVerdict(judged).passed)))
                fields.append(JSONField("confidence", .double(question.confidence)))
                json = .ordered(fields)
            }
            print(json.serialized(pretty: false))
        } else {
            for line in report.markdown { printText(line) }
            if let judged, let question {
                printText("")
                printText("```")
                for line in RiskText.requirements(judged, confidence: question.confidence) { printText(line) }
                printText("```")
            }
        }
        if let judged, !RiskVerdict(judged).passed { throw CommandFailure.shown(exitCode: 1) }
    }

    /// The two versions, whether the tool replaces the scale set, and what to call the change.
    func versions() throws -> (ImportedScaleSet, ImportedScaleSet, Bool, String) {
        if let template {
            guard let after else { throw ValidationError("with --template, give two parameters files: rehearse diff --template T.json old.parameters.json new.parameters.json") }
            let old = try importScaleSet(template, resource: resource, parameters: before)
            let new = try importScaleSet(template, resource: resource, parameters: after)
            return (old, new, false, "\(template) (\(before) → \(after))")
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
                return (old, new, change.actions.contains("delete") && change.actions.contains("create"), change.address)
            } catch let failure as ValidationFailure {
                throw CommandFailure(failure.problems.map { Diagnostic(Diagnostics.message($0), location: inDocument(before, $0)) }, exitCode: 2)
            }
        }
        let old = try importScaleSet(before, resource: resource, parameters: nil)
        let new = try importScaleSet(after, resource: resource, parameters: nil)
        return (old, new, false, "\(before) → \(after)")
    }
}
