import ArgumentParser
import CLuaBench
import Foundation
import LuaHost
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
let benchScenario = benchScenarioSource(capacity: 1000)

/// The same scenario with `capacity` instances.
func benchScenarioSource(capacity: Int) -> String {
    scenarioHealth + """

        scaleset {
          name = "bench", capacity = \(capacity), zones = { "1", "2", "3" }, model = { image = "v1" },
          upgradePolicy = { mode = "Rolling", rollingUpgradePolicy = { maxBatchInstancePercent = 20 } },
          healthExtension = { protocol = "http", port = 8000, requestPath = "/health", intervalInSeconds = 5 },
        }
        health(bench_health)
        at("PT30S", function() update_model { image = "v2" } end)
        expect { code = "Completed", successful = \(capacity) }
        """
}

/// `rehearse-bench scenario`.
struct ScenarioCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "scenario",
        abstract: "A 1,000-instance, 3-zone, 3-phase Lua scenario against its fair floor, paired round by round.",
        discussion: """
            Each round runs the scenario once through rehearse (a fresh Lua state, the sandbox, the \
            simulation, every probe) and once through the floor: a C host doing the same health calls \
            with the same allocator, sandbox, exact budget and call funnel, on vm tables built the same \
            way and changed as rehearse changes them when an instance's upgrade ends (model, startedAt, \
            lastOperation, from a reference run's events). overhead_ratio is the median of the rounds' ratios (rehearse wall / floor wall), with \
            overhead_min and overhead_max; the order alternates between rounds. setup_ms is one run's \
            set-up. `rehearse-bench ir` counts the same work in instructions under callgrind.
            """
    )

    /// `sweep`: rehearse as a sweep runs it, keeping no events.
    enum Side: String, ExpressibleByArgument { case rehearse, floor, sweep }

    @Option(help: "Paired rounds; medians are printed.") var rounds = 9
    @Option(help: "Run only one side, this many times, and print calls (for `rehearse-bench ir`).") var only: Side?
    @Option(help: "Runs of --only.") var runs = 1

    func run() throws {
        let bench = try ScenarioUnderTest()
        defer { bench.remove() }
        if let only {
            let (calls, upgraded) = try bench.reference()
            for _ in 1..<max(1, runs) where only == .rehearse { _ = try bench.rehearse() }
            for _ in 1..<max(1, runs) where only == .sweep { _ = try bench.sweepRun() }
            for _ in 0..<max(1, runs) where only == .floor { _ = try bench.floor(calls: calls, upgradedMillis: upgraded) }
            print("calls=\(calls)")
            return
        }
        // One of each first, so neither side pays for first-touch costs in a timed round.
        let (calls, upgraded) = try bench.reference()
        _ = try bench.floor(calls: calls, upgradedMillis: upgraded)
        var walls: [Double] = [], floors: [Double] = [], ratios: [Double] = []
        for round in 0..<max(1, rounds) {
            let wall: Double, floor: Double
            if round % 2 == 0 {
                wall = try bench.rehearse().seconds
                floor = try bench.floor(calls: calls, upgradedMillis: upgraded)
            } else {
                floor = try bench.floor(calls: calls, upgradedMillis: upgraded)
                wall = try bench.rehearse().seconds
            }
            walls.append(wall)
            floors.append(floor)
            ratios.append(wall / floor)
        }
        var setups: [Double] = []
        for seed in 0..<20 {
            let begin = nowNanoseconds()
            try Rehearsal.setUp(bench.definition, seed: UInt64(seed))
            setups.append(Double(nowNanoseconds() - begin) / 1e6)
        }
        print("calls=\(calls)")
        print("rounds=\(ratios.count)")
        report("wall_s", median(walls), decimals: 3)
        report("floor_s", median(floors), decimals: 3)
        report("ns_per_call", median(walls) * 1e9 / Double(calls))
        report("floor_ns_per_call", median(floors) * 1e9 / Double(calls))
        report("setup_ms", median(setups), decimals: 3)
        report("overhead_min", ratios.min()!, decimals: 3)
        report("overhead_max", ratios.max()!, decimals: 3)
        report("overhead_ratio", median(ratios), decimals: 3)
    }
}

/// The benchmark scenario written to a temporary file and loaded, and its two ways to run.
struct ScenarioUnderTest: Sendable {
    let path: String
    let definition: ScenarioDefinition
    let limits = LuaLimits()

    init() throws {
        path = FileManager.default.temporaryDirectory.appendingPathComponent("rehearse-bench-\(getpid()).lua").path
        try benchScenario.write(toFile: path, atomically: true, encoding: .utf8)
        var options = ScenarioOptions()
        options.environment = [:]
        options.limits = limits
        definition = try ScenarioDefinition(luaScript: path, options: options)
    }

    func remove() { try? FileManager.default.removeItem(atPath: path) }

    /// One whole run (set-up included): its wall time and its probes.
    func rehearse() throws -> (seconds: Double, calls: Int) {
        let run = try rehearse(onEvent: { _ in })
        return (run.seconds, run.record.summary.probes)
    }

    /// One whole run, its events handed to `onEvent`.
    func rehearse(onEvent: (Event) -> Void) throws -> (seconds: Double, record: RunRecord) {
        let start = nowNanoseconds()
        let result = try Rehearsal.run(definition, seed: 0, onEvent: onEvent)
        let seconds = Double(nowNanoseconds() - start) / 1e9
        guard result.failedExpectations.isEmpty else {
            throw ValidationError("the benchmark scenario did not complete: \(result.failedExpectations)")
        }
        return (seconds, result)
    }

    /// One whole run as `sweep` makes it: no event kept, the digest its only product.
    func sweepRun() throws -> RunDigest {
        let result = try Rehearsal.run(definition, RunInputs(seed: 0, recordEvents: false))
        guard result.failedExpectations.isEmpty else {
            throw ValidationError("the benchmark scenario did not complete: \(result.failedExpectations)")
        }
        return RunDigest(result)
    }

    /// What the floor needs of a rehearse run: its probes, and when each instance's upgrade
    /// ended (its vm table changes then).
    func reference() throws -> (calls: Int, upgradedMillis: [Int64]) {
        var upgraded = [Int64](repeating: -1, count: 1000)
        let run = try rehearse { event in
            if case .operationFinished(.upgrade, _, true) = event.payload, let id = event.instance, id < upgraded.count {
                upgraded[id] = Int64(event.time)
            }
        }
        return (run.record.summary.probes, upgraded)
    }

    // `floor(calls:upgradedMillis:)`, which hands the C floor a buffer, is in ScenarioBench+Unsafe.swift.
}
