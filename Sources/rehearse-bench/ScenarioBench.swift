import ArgumentParser
import CLuaBench
import Foundation
import Scenario
import UpgradeEngine

/// The scenario's health function, also called directly from C for the per-call reference.
let scenarioHealth = """
    function bench_health(vm, now)
      return { applicationHealthState = ((vm.id + now // 5) % 211 == 0 and vm.model.version == 1) and "Unhealthy" or "Healthy",
               customMetrics = { rollingUpgrade = { PhaseOrderingNumber = vm.id % 3 } } }
    end
    """

/// A 1,000-instance, 3-zone, 3-phase rolling upgrade whose health comes from Lua every 5 s.
let benchScenario = scenarioHealth + """

    scaleset {
      name = "bench", capacity = 1000, zones = { "1", "2", "3" }, model = { image = "v1" },
      upgradePolicy = { mode = "Rolling", rollingUpgradePolicy = { maxBatchInstancePercent = 20 } },
      healthExtension = { protocol = "http", port = 8000, requestPath = "/health", intervalInSeconds = 5 },
    }
    health(bench_health)
    at("PT30S", function() update_model { image = "v2" } end)
    expect { code = "Completed", successful = 1000 }
    """

/// `rehearse-bench scenario`.
struct ScenarioCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "scenario",
        abstract: "A 1,000-instance, 3-zone, 3-phase Lua scenario; overhead_ratio = wall / (calls × C per-call cost); setup_ms = one run's set-up."
    )

    @Option(help: "Repetitions; medians are printed.") var repeats = 5

    func run() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("rehearse-bench-\(getpid()).lua").path
        try benchScenario.write(toFile: path, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: path) }
        var walls: [Double] = [], cCosts: [Double] = [], ratios: [Double] = [], setups: [Double] = []
        var calls = 0
        for _ in 0..<max(1, repeats) {
            var options = ScenarioOptions()
            options.environment = [:]
            let start = nowNanoseconds()
            let definition = try ScenarioDefinition(path: path, options: options)
            let result = try Rehearsal.run(definition, seed: 0)
            let wall = Double(nowNanoseconds() - start) / 1e9
            // One run's set-up: a fresh Lua state, the sandbox, the script's top level, the
            // simulation of 1,000 instances; the median of 20.
            var setup: [Double] = []
            for seed in 0..<20 {
                let begin = nowNanoseconds()
                try Rehearsal.setUp(definition, seed: UInt64(seed))
                setup.append(Double(nowNanoseconds() - begin) / 1e6)
            }
            setups.append(median(setup))
            guard result.failedExpectations.isEmpty else {
                throw ValidationError("the benchmark scenario did not complete: \(result.failedExpectations)")
            }
            calls = result.summary.probes
            let c = clb_c_vm_loop(scenarioHealth, "bench_health", Int64(calls), 1000)
            guard c.ns_per_call > 0 else { throw ValidationError("the C reference loop failed") }
            walls.append(wall)
            cCosts.append(c.ns_per_call)
            ratios.append(wall * 1e9 / (Double(calls) * c.ns_per_call))
        }
        print("calls=\(calls)")
        report("wall_s", median(walls), decimals: 3)
        report("c_ns_per_call", median(cCosts))
        report("ns_per_call", median(walls) * 1e9 / Double(calls))
        report("overhead_ratio", median(ratios), decimals: 3)
        report("setup_ms", median(setups), decimals: 3)
    }
}
