import ArgumentParser
import AzureWire
import Formats
import Scenario
import UpgradeEngine

/// `rehearse explain`: why one seed's run failed, and the smallest change of policy that makes
/// the same seed pass.
struct ExplainCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "explain",
        abstract: "Explain one seed's run: what used up which budget at which batch, then the smallest policy change that makes the same seed pass.",
        discussion: """
            The run passes when its upgrade does not fault, it does not stop at its time limit with \
            work left, and every expect { } holds. A failing run is run again with the same seed and \
            one rolling policy field changed at a time, closest value first (maxUnhealthyUpgradedInstancePercent \
            and maxUnhealthyInstancePercent raised by 5, 10, 15, 20, 30, 50 points; maxBatchInstancePercent \
            lowered; pauseTimeBetweenBatches PT1M to PT30M; prioritizeUnhealthyInstances and maxSurge \
            turned on); each field's closest passing value is its smallest change. When none passes, \
            pairs of fields are tried among their three closest values. At most --max-runs runs. \
            Exit status: 0 when the seed passes as given, 1 when it fails (the explanation printed \
            either way), 2 for bad input.
            """
    )

    @OptionGroup var scenario: ScenarioArguments
    @OptionGroup var seeded: SeedOption
    @OptionGroup var policy: PolicySetOption
    @Option(name: .customLong("max-runs"), help: "The most candidate runs, singles and pairs together (1 to 10000).") var maxRuns = 300
    @OptionGroup var format: JSONOutputOptions

    func validate() throws {
        try format.format.refuseTable("explain")
        guard (1...10_000).contains(maxRuns) else { throw ValidationError("--max-runs \(maxRuns) is not allowed; allowed 1 to 10000") }
    }

    func run() throws {
        let overrides = try policy.overrides()
        let (definition, inputs) = try scenario.load(seed: seeded.seed, overrides: overrides, print: { printError("print: \($0)") })
        let scaleSet = try Rehearsal.scaleSet(definition, overrides: overrides)
        let explanation = try explain(definition, inputs, policy: scaleSet.policy.rolling, maxRuns: maxRuns)
        if format.json {
            print(ExplainText.json(explanation, scenario: scenario.scenario).serialized())
        } else {
            for line in ExplainText.lines(explanation, scenario: scenario.scenario) { printText(line) }
        }
        if !explanation.passed { throw CommandFailure.shown(exitCode: 1) }
    }
}

/// `Rehearsal.explain` with the candidates of `policy`; a run that fails (a script error) is exit 2.
func explain(_ definition: ScenarioDefinition, _ inputs: RunInputs, policy: RollingUpgradePolicy, maxRuns: Int) throws -> Explanation {
    do {
        return try Rehearsal.explain(definition, inputs, fields: ExplainCandidates.fields(policy), bounds: ExplainBounds(runs: maxRuns))
    } catch {
        throw error.error
    }
}
