import Formats
import ArgumentParser
import AzureWire
import Scenario
import UpgradeEngine

/// A space of policies for `compare` and `tune`: each axis a field
/// (`rollingUpgradePolicy.maxBatchInstancePercent`, or a script parameter `param.NAME`) with its
/// values, given as `PATH=V1,V2,…` or, for whole numbers, `PATH=A..B:STEP`. Combinations are
/// counted before any is made.
struct PolicyGrid {
    /// The most combinations one command runs.
    static let mostCombinations = 1_000
    /// The most values a range may expand to.
    static let mostRangeValues = 1_000

    /// Each axis: its path and values, in the order given.
    var axes: [(path: String, values: [String])] = []
    /// How many combinations (at most `mostCombinations`).
    private(set) var count = 1
    /// The option the axes were given with (`--set`, `--vary`), as errors name it.
    let option: String

    /// One combination, checked and ready to run.
    struct Candidate {
        /// Every `PATH=VALUE` of the combination, as given.
        var combination: [PolicyOverride]
        /// The scenario as the combination's script parameters describe it (its risk question,
        /// expectations and scale set); its runs run the loaded scenario with `inputs`.
        var definition: ScenarioDefinition
        /// The inputs of the combination's runs: its policy fields and script parameters.
        var inputs: RunInputs
    }

    /// Reads `texts` (each from `option`). Exit 2 naming the option for anything malformed, and
    /// when the combinations would be more than `mostCombinations` or, with `seeds` of each, more
    /// than `SeedRange.mostSeeds` runs.
    init(_ texts: [String], option: String, seedsEach: Int) throws {
        self.option = option
        for text in texts {
            guard let change = PolicyOverride(parsing: text) else {
                throw InputError(option: option, ScriptText.escaped(text),
                                 allowed: "PATH=V1,V2,… or PATH=A..B:STEP, such as rollingUpgradePolicy.maxBatchInstancePercent=10,20")
            }
            if axes.contains(where: { $0.path == change.path }) {
                throw InputError(option: option, ScriptText.escaped(text), problem: "\(change.path) is given twice", allowed: "each field once, with all its values")
            }
            let values = try Self.values(change.value, option: option, text: text)
            if let repeated = values.first(where: { value in values.count { $0 == value } > 1 }) {
                throw InputError(option: option, ScriptText.escaped(text), problem: "the value \(ScriptText.escaped(repeated)) is listed twice", allowed: "each value once")
            }
            axes.append((change.path, values))
        }
        for axis in axes {
            let (product, overflow) = count.multipliedReportingOverflow(by: axis.values.count)
            guard !overflow, product <= Self.mostCombinations, product.multipliedReportingOverflow(by: seedsEach).partialValue <= SeedRange.mostSeeds,
                  !product.multipliedReportingOverflow(by: seedsEach).overflow else {
                throw InputError(option: option, problem: "lists of \(axes.map { String($0.values.count) }.joined(separator: " × ")) values make more than \(Self.mostCombinations) combinations or more than \(SeedRange.mostSeeds) runs with \(seedsEach) seeds each",
                                      allowed: "at most \(Self.mostCombinations) combinations (the product of the lists' lengths) and \(SeedRange.mostSeeds) runs (combinations × seeds)")
            }
            count = product
        }
    }

    /// The `index`-th combination (the last axis varies fastest).
    func combination(_ index: Int) -> [PolicyOverride] {
        var rest = index
        var changes: [PolicyOverride] = []
        for axis in axes.reversed() {
            changes.append(PolicyOverride(path: axis.path, value: axis.values[rest % axis.values.count]))
            rest /= axis.values.count
        }
        return changes.reversed()
    }

    /// The scenario, loaded once (with the first combination's script parameters), and every
    /// combination as inputs of its runs, each with the scenario its parameter values describe
    /// (the top level run once per distinct set of values, not the script read again) and its
    /// policy fields checked: every problem of every combination is reported before anything
    /// runs (exit 2).
    func candidates(_ scenario: ScenarioArguments, seed: UInt64) throws -> (ScenarioDefinition, [Candidate]) {
        let given = try parameterValues(scenario.loading.parameters)
        let printer: (String) -> Void = { printError("print: \($0)") }
        let base: ScenarioDefinition, inputs: RunInputs
        do {
            (base, inputs) = try scenario.load(seed: seed, parameters: Self.parameters(of: combination(0)), print: printer)
        } catch let error as ScenarioError {
            throw CommandFailure(relocated(Diagnostic.of(error)), header: Diagnostics.definitionHeader(error), exitCode: 2)
        }
        var definitions: [[String: String]: ScenarioDefinition] = [base.parameterValues: base]
        var problems: [Diagnostic] = []
        var candidates: [Candidate] = []
        for index in 0..<count {
            let combination = self.combination(index)
            let parameters = given.merging(Self.parameters(of: combination)) { _, varied in varied }
            var runInputs = inputs
            runInputs.overrides = combination.filter { !$0.path.hasPrefix("param.") }
            runInputs.parameterValues = parameters
            if definitions[parameters] == nil {
                do {
                    definitions[parameters] = try Rehearsal.definition(base, for: runInputs, print: printer)
                } catch {
                    problems += relocated(Diagnostic.of(error.error))
                    continue
                }
            }
            let definition = definitions[parameters]!
            do {
                _ = try Rehearsal.scaleSet(definition, overrides: runInputs.overrides)
            } catch {
                // The fields came from this option, not from --set.
                problems += Diagnostic.of(error).map { d in
                    var d = d
                    if case .setting(.policyOverride(let path), let value)? = d.location {
                        d.location = .option("\(option) \(path)" + (value.map { " \($0)" } ?? ""))
                    }
                    return d
                }
            }
            candidates.append(Candidate(combination: combination, definition: definition, inputs: runInputs))
        }
        var seen = Set<String>()
        problems = problems.filter { seen.insert("\($0.location.map { Diagnostics.text(of: $0) } ?? "") \($0.message)").inserted }
        guard problems.isEmpty else { throw CommandFailure(problems, exitCode: 2) }
        return (base, candidates)
    }

    /// `diagnostics` with each parameter this option varies named as the option gives it
    /// (`--set param.NAME=VALUE`), not as `--param`, which gave it no value.
    func relocated(_ diagnostics: [Diagnostic]) -> [Diagnostic] {
        let varied = Set((0..<count).flatMap { Self.parameters(of: combination($0)).keys })
        return diagnostics.map { d in
            guard case .setting(.parameter(let name), let value)? = d.location, varied.contains(name) else { return d }
            var d = d
            d.location = .option("\(option) param.\(name)" + (value.map { "=\($0)" } ?? ""))
            return d
        }
    }

    /// The script parameters a combination sets (`param.NAME=VALUE`), by name.
    static func parameters(of combination: [PolicyOverride]) -> [String: String] {
        var values: [String: String] = [:]
        for change in combination where change.path.hasPrefix("param.") { values[String(change.path.dropFirst(6))] = change.value }
        return values
    }

    /// `V1,V2,…`, or `A..B:STEP` for whole numbers A ≤ B with STEP ≥ 1.
    static func values(_ text: String, option: String, text whole: String) throws -> [String] {
        let range = text.split(separator: ":", omittingEmptySubsequences: false)
        let ends = range[0].split(separator: ".", omittingEmptySubsequences: false)
        if range.count == 2 || (ends.count == 3 && ends[1].isEmpty) {
            guard range.count <= 2, ends.count == 3, ends[1].isEmpty, let a = Int(ends[0]), let b = Int(ends[2]), a <= b,
                  let step = range.count == 2 ? Int(range[1]) : 1, step >= 1 else {
                throw InputError(option: option, ScriptText.escaped(whole), allowed: "a range A..B:STEP of whole numbers with A ≤ B and STEP ≥ 1")
            }
            let (span, overflow) = b.subtractingReportingOverflow(a)
            guard !overflow, span / step < mostRangeValues else {
                throw InputError(option: option, ScriptText.escaped(whole), allowed: "a range of at most \(mostRangeValues) values")
            }
            return stride(from: a, through: b, by: step).map(String.init)
        }
        return text.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
    }
}
