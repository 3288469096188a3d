import ArgumentParser
import Foundation
import Scenario
import UpgradeEngine

/// A 1,000-instance, 3-zone rolling upgrade whose application answers 2 to 6 minutes after a
/// restart, written twice: a Lua health function called per probe, and a `health_model` that
/// no script answers. `body` is the health description.
func modelBenchSource(_ body: String) -> String {
    """
    scaleset {
      name = "bench", capacity = 1000, zones = { "1", "2", "3" }, model = { image = "v1" },
      upgradePolicy = { mode = "Rolling", rollingUpgradePolicy = { maxBatchInstancePercent = 20, maxUnhealthyUpgradedInstancePercent = 100 } },
      healthExtension = { protocol = "http", port = 8000, requestPath = "/health", intervalInSeconds = 5, gracePeriod = 600 },
    }
    \(body)
    at("PT1M", function() update_model { image = "v2" } end)
    expect { code = "Completed" }
    """
}

/// The per-probe Lua twin: a boot drawn per restart with math.random.
let luaBootHealth = """
    health(function(vm, now)
      if vm.model.version == 1 then return { applicationHealthState = "Healthy" } end
      vm.state.boot = vm.state.boot or math.random(120, 360)
      if now - vm.startedAt < vm.state.boot then return nil end
      return { applicationHealthState = "Healthy" }
    end)
    """

/// The declarative twin: the same boots as a model.
let modelBootHealth = """
    health_model { boot = "PT0S", versions = { v2 = { boot = { min = "PT2M", max = "PT6M" } } } }
    """

/// `rehearse-bench model`: runs per second of the two twins, paired round by round.
struct ModelBenchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "model",
        abstract: "A 1,000-instance boot scenario with a per-probe Lua health function against the same fleet as a health_model.",
        discussion: """
            Each round runs each twin --runs times as a sweep runs them (no events kept), in \
            alternating order. lua_runs_per_second and model_runs_per_second are the medians; \
            declarative_speedup is the median of the rounds' ratios; probes_per_run is the Lua \
            twin's (the model's is the same schedule).
            """
    )

    @Option(help: "Paired rounds; medians are printed.") var rounds = 5
    @Option(help: "Runs of each twin a round.") var runs = 3

    func run() throws {
        let folder = FileManager.default.temporaryDirectory.path
        var twins: [ScenarioDefinition] = []
        for (name, body) in [("lua", luaBootHealth), ("model", modelBootHealth)] {
            let path = "\(folder)/rehearse-bench-\(name)-\(getpid()).lua"
            try modelBenchSource(body).write(toFile: path, atomically: true, encoding: .utf8)
            defer { try? FileManager.default.removeItem(atPath: path) }
            var options = ScenarioOptions()
            options.environment = [:]
            twins.append(try ScenarioDefinition(luaScript: path, options: options))
        }
        var luaRates: [Double] = [], modelRates: [Double] = [], ratios: [Double] = []
        var probes = 0
        for round in 0..<rounds {
            var rates = [0.0, 0.0]
            for side in (round % 2 == 0 ? [0, 1] : [1, 0]) {
                let start = nowNanoseconds()
                for seed in 0..<runs {
                    let record = try Rehearsal.run(twins[side], RunInputs(seed: UInt64(seed), recordEvents: false))
                    guard record.failedExpectations.isEmpty else { throw ValidationError("the \(side == 0 ? "Lua" : "model") twin did not complete") }
                    if side == 0 { probes = record.summary.probes }
                }
                rates[side] = Double(runs) / (Double(nowNanoseconds() - start) / 1e9)
            }
            luaRates.append(rates[0])
            modelRates.append(rates[1])
            ratios.append(rates[1] / rates[0])
        }
        report("probes_per_run", Double(probes), decimals: 0)
        report("lua_runs_per_second", median(luaRates), decimals: 2)
        report("model_runs_per_second", median(modelRates), decimals: 2)
        report("declarative_speedup", median(ratios), decimals: 2)
    }
}
