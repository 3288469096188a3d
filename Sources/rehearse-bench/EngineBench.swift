import ArgumentParser
import Formats
import UpgradeEngine

/// `rehearse-bench engine`: planning and a full rolling upgrade with Swift-closure health.
struct EngineCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "engine",
        abstract: "Plan 100,000 instances; run 1,000- and 10,000-instance rolling upgrades (health from Swift closures, probed every 5 s)."
    )

    @Option(help: "Repetitions of each measurement; the median is printed.") var repeats = 5
    @Flag(help: "Also run 100,000 instances three times, for scale100x (a few seconds).") var large = false

    /// The calibration `plan_vs_sort` divides by: sorting the same 100,000 inputs by (zone,
    /// phase, fault domain, update domain, id) tuples, in milliseconds.
    static func sortInputs(_ inputs: [PlanInput]) -> Double {
        var keyed = inputs.map { (zone: $0.zone ?? "", phase: $0.phase ?? Int.max, fd: $0.faultDomain, ud: $0.updateDomain, id: $0.id) }
        keyed.reverse()
        let start = nowNanoseconds()
        keyed.sort { ($0.zone, $0.phase, $0.fd, $0.ud, $0.id) < ($1.zone, $1.phase, $1.fd, $1.ud, $1.id) }
        let millis = Double(nowNanoseconds() - start) / 1e6
        // The result is used, so the sort cannot be optimised away.
        precondition(keyed.count == inputs.count)
        return millis
    }

    /// 100,000 instances in 3 zones with 5 update domains, reporting 5 phases.
    static func planInputs() -> [PlanInput] {
        (0..<100_000).map { id in
            PlanInput(id: id, zone: String(id % 3 + 1), faultDomain: (id / 3) % 5, updateDomain: (id / 3) % 5,
                      unhealthy: id % 997 == 0, phase: id % 5, skip: id % 1009 == 0)
        }
    }

    /// `plan`'s arithmetic (batch groups, the shortest duration, fragilities) for 10,000
    /// instances in 10,000 phases, one a batch, in milliseconds: once quadratic in the phases.
    static func planPhases() -> (millis: Double, groups: Int) {
        var definition = ScaleSetDefinition(name: "bench", capacity: 10_000)
        definition.policy.mode = .rolling
        let inputs = (0..<10_000).map { PlanInput(id: $0, zone: nil, faultDomain: $0 % 5, updateDomain: $0 % 5, unhealthy: false, phase: $0, skip: false) }
        let plan = Planner.plan(inputs, capacity: inputs.count, zonal: false, orchestration: .uniform, faultDomains: 5, policy: definition.policy.rolling)
        let start = nowNanoseconds()
        let arithmetic = PolicyArithmetic(definition: definition, plan: plan)
        return (Double(nowNanoseconds() - start) / 1e6, arithmetic.batchesByGroup.count)
    }

    /// A 3-zone Rolling scale set whose instances answer from a Swift closure with a phase.
    static func runUpgrade(instances: Int) throws -> (millis: Double, events: Int, status: RollingUpgradeStatus?, probes: Int) {
        var definition = ScaleSetDefinition(name: "bench", capacity: instances)
        definition.zones = ["1", "2", "3"]
        definition.policy.mode = .rolling
        definition.policy.rolling.maxBatchInstancePercent = 20
        definition.healthExtension = HealthExtensionSettings(protocol: .http, port: 8000, requestPath: "/health")
        let health = BenchHealthSource()
        let start = nowNanoseconds()
        let sim = try Simulation(definition, health: health)
        var events = 0
        sim.onEvent = { _ in events += 1 }
        sim.schedule(at: 30_000, name: "update") { try $0.updateModel(["image": "v2"]) }
        let summary = try sim.run()
        return (Double(nowNanoseconds() - start) / 1e6, events, summary.status, summary.probes)
    }

    func run() throws {
        let inputs = Self.planInputs()
        var planTimes: [Double] = [], run1k: [Double] = [], run10k: [Double] = [], ratios: [Double] = [], perProbe: [Double] = []
        var sortTimes: [Double] = [], perProbe1k: [Double] = [], phaseTimes: [Double] = []
        var phaseGroups = 0
        var probes10k = 0
        var batches = 0
        var status1k: RollingUpgradeStatus?
        for _ in 0..<max(1, repeats) {
            let start = nowNanoseconds()
            let plan = Planner.plan(inputs, capacity: inputs.count, zonal: true, orchestration: .uniform, faultDomains: 5,
                                    policy: RollingUpgradePolicy())
            planTimes.append(Double(nowNanoseconds() - start) / 1e6)
            sortTimes.append(Self.sortInputs(inputs))
            batches = plan.batches.count
            let phases = Self.planPhases()
            phaseTimes.append(phases.millis)
            phaseGroups = phases.groups
            let small = try Self.runUpgrade(instances: 1_000)
            let large = try Self.runUpgrade(instances: 10_000)
            status1k = small.status
            run1k.append(small.millis)
            run10k.append(large.millis)
            probes10k = large.probes
            perProbe.append(large.millis * 1e6 / Double(max(1, large.probes)))
            perProbe1k.append(small.millis * 1e6 / Double(max(1, small.probes)))
            ratios.append(large.millis / small.millis)
        }
        print("plan100k_batches=\(batches)")
        report("plan100k_ms", median(planTimes))
        print("plan10k_phases_groups=\(phaseGroups)")
        report("plan10k_phases_arithmetic_ms", median(phaseTimes))
        print("run1k_status=\(status1k?.code.rawValue ?? "none") successful=\(status1k?.progress.successfulInstanceCount ?? 0)")
        report("run1k_ms", median(run1k))
        report("run10k_ms", median(run10k))
        report("scale10x", median(ratios), decimals: 2)
        // The run's length follows the behaviour (how many batches, how long each waits); the
        // cost of one probe of the 10,000-instance run, all work included, compares across versions.
        print("run10k_probes=\(probes10k)")
        report("run10k_ns_per_probe", median(perProbe))
        // Calibrations measured in this run, so the figures mean something on another machine.
        report("sort100k_ms", median(sortTimes))
        report("plan_vs_sort", median(planTimes) / median(sortTimes), decimals: 2)
        if large {
            // Three runs and their median: one run of a fleet that does not fit the caches moves
            // with whatever else the machine does.
            var perProbe100k: [Double] = []
            for _ in 0..<3 {
                let huge = try Self.runUpgrade(instances: 100_000)
                perProbe100k.append(huge.millis * 1e6 / Double(max(1, huge.probes)))
            }
            report("run100k_ns_per_probe", median(perProbe100k))
            report("scale100x", median(perProbe100k) / median(perProbe1k), decimals: 2)
            // The process's peak so far: the 100,000-instance run is the largest thing it did.
            report("peak_rss_mb_100k", peakRSSMegabytes())
        }
    }
}

/// The health source of the run benchmarks, on the path a Lua scenario's takes: probes due at one
/// instant asked as a run, the instance lent by address, the state named, the metrics kept until
/// an upgrade reads them.
final class BenchHealthSource: HealthSource {
    func probe(_ instance: borrowing Instance, at time: Millis) throws -> ProbeReply {
        try LentInstance.lending(instance) { try probe(lent: $0, at: time) }
    }

    func probe(lent instance: LentInstance, at time: Millis) throws -> ProbeReply {
        let unhealthy = (instance.instance.id + time / 5000) % 211 == 0 && instance.instance.modelVersion == 1
        return .named(unhealthy ? .unhealthy : .healthy)
    }

    func latestMetrics(of instance: borrowing Instance) throws -> MetricsPayload? { .parsed(CustomMetrics(phase: instance.id % 3)) }

    /// Runs of probes, as the Lua health source answers them.
    var answersRuns: Bool { true }

    func probe(run: inout ProbeRun) { probeOneByOne(&run) }
}
