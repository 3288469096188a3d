import Formats
import UpgradeEngine
import XCTest

/// What SPEC promises that a realistic scenario caught the engine not doing: the automatic OS
/// upgrade's five minutes, default fault domains, grace looked at only at probe ticks, and
/// instances down from any upgrade counted before every batch.
final class SpecPromisesTests: XCTestCase {
    /// A deterministic draw in [0, 1) for (seed, instance, boot): SplitMix64's finaliser.
    static func draw(_ seed: UInt64, _ id: Int, _ startedAt: Millis, salt: UInt64) -> Double {
        var z = seed &* 0x9E37_79B9_7F4A_7C15 &+ UInt64(id) &* 0xBF58_476D_1CE4_E5B9 &+ UInt64(startedAt) &+ salt
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        z ^= z >> 31
        return Double(z >> 11) / Double(1 << 53)
    }

    /// 30 instances in three zones with automatic OS upgrades and a grace period of 600 s. After
    /// every (re)start the application answers after 240–360 s; 5% of boots never answer.
    static func slowBootingFleet() -> ScaleSetDefinition {
        scaleSet(30, zones: ["1", "2", "3"], mode: .manual) { d in
            d.model = ["image": "2024.01.01"]
            d.policy.automaticOS.enableAutomaticOSUpgrade = true
            d.healthExtension = HealthExtensionSettings(protocol: .http, port: 8000, requestPath: "/health", gracePeriod: 600)
        }
    }

    static func slowBoots(seed: UInt64, boot: ClosedRange<Millis> = 240_000...360_000) -> (Instance, Millis) -> ProbeReply {
        { vm, now in
            let started = vm.health.startedAt
            if draw(seed, vm.id, started, salt: 1) < 0.05 { return .noAnswer }
            let ready = started + boot.lowerBound + Millis(draw(seed, vm.id, started, salt: 2) * Double(boot.upperBound - boot.lowerBound))
            return now < ready ? .noAnswer : .http(status: 200, body: wireBody())
        }
    }

    /// SPEC §6: when an instance's five minutes end, it is failed in its own batch unless it is
    /// Healthy (Initializing included), and restored to its previous image; nothing is counted
    /// against a later batch; the status, the checks, the history and the events agree. Checked
    /// over 40 seeds of the slow-booting fleet, at every batch, against the live scale set: even
    /// seeds boot in 240–360 s (half miss the five minutes: these upgrades fault), odd seeds in
    /// 120–320 s (a few miss them: most complete).
    func testAutomaticOSUpgradeFailsWhatIsNotHealthyAfterFiveMinutesInItsOwnBatch() throws {
        var restoredInAll = 0, faultedRuns = 0, completedRuns = 0
        for seed in UInt64(0)..<40 {
            let boot: ClosedRange<Millis> = seed % 2 == 0 ? 240_000...360_000 : 120_000...320_000
            let sim = try Simulation(Self.slowBootingFleet(), health: ClosureHealthSource(Self.slowBoots(seed: seed, boot: boot)))
            var events: [Event] = []
            var batch: [Int] = []
            var failedPerBatch: [[Int]] = []
            var operationEnds: [Int: Millis] = [:]
            sim.onEvent = { [unowned sim] event in
                events.append(event)
                switch event.payload {
                case .batchStarted(let ids, _):
                    batch = ids
                case .operationFinished(let kind, _, _) where kind == .upgrade:
                    operationEnds[event.instance!] = event.time
                case .batchFinished(let healthy, let count):
                    // Judged against the scale set as it is at that moment.
                    let notHealthy = batch.filter { sim.instances[$0].health.state != .healthy }
                    XCTAssertEqual(count - healthy, notHealthy.count, "seed \(seed) batch \(event.batch!)")
                    failedPerBatch.append(notHealthy)
                    // The batch ends when every instance is Healthy or, at the latest, five
                    // minutes after the last upgrade of the batch ended.
                    let lastEnd = batch.compactMap { operationEnds[$0] }.max()!
                    XCTAssertLessThanOrEqual(event.time, lastEnd + automaticOSUpgradeHealthWait, "seed \(seed)")
                    if !notHealthy.isEmpty {
                        XCTAssertEqual(event.time, notHealthy.compactMap { operationEnds[$0] }.max()! + automaticOSUpgradeHealthWait,
                                       "seed \(seed): an instance not Healthy is judged when its five minutes end")
                    }
                default: break
                }
            }
            sim.schedule(at: 60_000, name: "release") { try $0.releasePlatformImage(version: "2024.02.01") }
            let summary = try sim.run()
            let status = try XCTUnwrap(summary.status)
            let history = try XCTUnwrap(summary.osUpgradeHistory.first)
            let failed = failedPerBatch.flatMap { $0 }
            XCTAssertEqual(status.progress.failedInstanceCount, failed.count, "seed \(seed)")
            XCTAssertEqual(history.progress, status.progress, "seed \(seed)")
            // Every failed instance was restored, and only those.
            let restored = events.filter { $0.kind == .imageRestoreStarted }.compactMap(\.instance)
            XCTAssertEqual(restored.sorted(), failed.sorted(), "seed \(seed)")
            XCTAssertEqual(history.rolledBack + history.rollbackFailed, failed.count, "seed \(seed)")
            restoredInAll += restored.count
            // Each post-batch check counts exactly the failures of its batch and those before.
            let checks = events.compactMap { event -> ThresholdCheck? in
                if case .postBatchCheck(let check) = event.payload { return check }
                return nil
            }
            XCTAssertEqual(checks.count, failedPerBatch.count, "seed \(seed)")
            for (i, check) in checks.enumerated() {
                XCTAssertEqual(check.counted.sorted(), failedPerBatch[...i].flatMap { $0 }.sorted(), "seed \(seed) check \(i + 1)")
            }
            switch status.code {
            case .faulted:
                faultedRuns += 1
                if status.error?.code.rawValue == "MaxUnhealthyUpgradedInstancePercentExceededInRollingUpgrade" {
                    let first = try XCTUnwrap(failedPerBatch.last?.min(), "seed \(seed): the breaching batch has a failure")
                    XCTAssertEqual(status.error?.firstFailedInstance, "\(first)", "seed \(seed)")
                }
            case .completed:
                completedRuns += 1
                XCTAssertEqual(status.progress.successfulInstanceCount + status.progress.failedInstanceCount, 30, "seed \(seed)")
            default:
                XCTFail("seed \(seed): ended \(status.code)")
            }
        }
        // The scenario really exercises both ends.
        XCTAssertGreaterThan(restoredInAll, 40)
        XCTAssertGreaterThan(faultedRuns, 0)
        XCTAssertGreaterThan(completedRuns, 0)
    }

    /// A grace period longer than the five minutes does not lengthen them: with gracePeriod 600
    /// an instance that never answers is still Initializing at 300 s, and fails then.
    func testGraceLongerThanFiveMinutesDoesNotLengthenThem() throws {
        let sim = try Simulation(Self.slowBootingFleet(), health: ClosureHealthSource { vm, _ in
            vm.modelVersion == 2 && vm.id == 0 ? .noAnswer : .http(status: 200, body: wireBody())
        })
        var finished: [(Millis, Int, Int)] = []
        sim.onEvent = { event in
            if case .batchFinished(let healthy, let count) = event.payload { finished.append((event.time, healthy, count)) }
        }
        sim.schedule(at: 60_000, name: "release") { try $0.releasePlatformImage(version: "2024.02.01") }
        let summary = try sim.run()
        // Batch 1 (6 instances, 0 among them) upgrades from 60 s to 180 s; 0 is judged at 480 s.
        XCTAssertEqual(finished.first?.0, 480_000)
        XCTAssertEqual(finished.first?.1, 5)
        XCTAssertEqual(summary.status?.progress.failedInstanceCount, 1)
        XCTAssertEqual(summary.osUpgradeHistory.first?.rolledBack, 1)
        XCTAssertEqual(sim.instances[0].modelVersion, 1)
    }

    /// SPEC §1 and Azure's fault-domain article: Uniform regional 5, Uniform zonal 1 per zone,
    /// Flexible 1; an explicit count wins within the values Azure allows for the layout.
    func testDefaultFaultDomainsFollowTheOrchestrationAndZoning() throws {
        let regional = try Simulation(scaleSet(10))
        XCTAssertEqual(regional.instances.map(\.faultDomain), [0, 1, 2, 3, 4, 0, 1, 2, 3, 4])
        let zonal = try Simulation(scaleSet(9, zones: ["1", "2", "3"]))
        XCTAssertEqual(Set(zonal.instances.map(\.faultDomain)), [0])
        let flexible = try Simulation(scaleSet(6) { $0.orchestration = .flexible })
        XCTAssertEqual(Set(flexible.instances.map(\.faultDomain)), [0])
        let zonalFive = try Simulation(scaleSet(6, zones: ["1", "2", "3"]) { $0.faultDomainCount = 5 })
        XCTAssertEqual(zonalFive.instances.map(\.faultDomain), [0, 0, 0, 1, 1, 1])

        let refused: [(ScaleSetDefinition, [Int])] = [
            (scaleSet(6, zones: ["1", "2"]) { $0.faultDomainCount = 3 }, [1, 5]),
            (scaleSet(6) { $0.faultDomainCount = 6 }, [1, 2, 3, 4, 5]),
            (scaleSet(6) { $0.orchestration = .flexible; $0.faultDomainCount = 5 }, [1, 2, 3]),
            (scaleSet(6, zones: ["1"]) { $0.orchestration = .flexible; $0.faultDomainCount = 2 }, [1]),
        ]
        for (definition, allowed) in refused {
            XCTAssertEqual(ScaleSetDefinition.allowedFaultDomains(definition.orchestration, zonal: !definition.zones.isEmpty), allowed)
            XCTAssertEqual(definition.validate().map(\.field), ["faultDomains"])
        }
    }

    /// A zonal Uniform scale set's batches: one fault domain per zone, so each zone's instances
    /// go by id; with 5 domains they go by domain first (SPEC §4.4).
    func testZonalUniformBatchesOrderByIdWithOneFaultDomain() throws {
        func batches(_ faultDomains: Int?) throws -> [[Int]] {
            let definition = scaleSet(24, zones: ["1", "2", "3"]) { d in
                d.policy.rolling.maxBatchInstancePercent = 25
                d.faultDomainCount = faultDomains
            }
            return try Simulation(definition).planNow(assumingModelChange: true).batches.map { $0.instances.map(\.id) }
        }
        // 25% of 24 is 6, within a 20% unhealthy budget of 4: batches of 4.
        XCTAssertEqual(try batches(nil).prefix(2), [[0, 3, 6, 9], [12, 15, 18, 21]])
        XCTAssertEqual(try batches(5).prefix(2), [[0, 15, 3, 18], [6, 21, 9, 12]])
    }

    /// SPEC §3: grace is looked at only when a probe's result arrives. Interval 5 s, grace 12 s:
    /// nothing happens at 12 s; the probe at 15 s finds grace spent and commits Unknown even
    /// though its answer is Healthy; the next probe commits Healthy.
    func testGraceIsLookedAtOnlyAtProbeTicks() throws {
        let definition = scaleSet(1) { d in
            d.healthExtension = HealthExtensionSettings(protocol: .http, port: 8000, requestPath: "/health", intervalInSeconds: 5, gracePeriod: 12)
        }
        let outcome = try simulate(definition, health: { _, now in now < 15_000 ? .noAnswer : .http(status: 200, body: wireBody()) },
                                   actions: [(30_000, { _ in })])
        let changes = outcome.events.compactMap { event -> (Millis, HealthState, HealthChangeReason)? in
            if case .healthChanged(_, let to, let reason) = event.payload { return (event.time, to, reason) }
            return nil
        }
        XCTAssertEqual(changes.map(\.0), [15_000, 20_000])
        XCTAssertEqual(changes.map(\.1), [.unknown, .healthy])
        XCTAssertEqual(changes.map(\.2), [.gracePeriodEnded, .probes])
    }

    /// SPEC §4.5: an instance a manual upgrade took down during a rolling upgrade's pause counts
    /// as unhealthy at the next pre-batch check. 3 of 10 down is 30%, over 20%: Faulted.
    func testInstancesDownFromAManualUpgradeCountBeforeTheNextBatch() throws {
        let definition = scaleSet(10) { d in
            d.updateDomainCount = 1
            d.policy.rolling.pauseTimeBetweenBatches = 300_000
            d.timings.disruptiveUpgrade = 400_000
        }
        let outcome = try simulate(definition, actions: [
            (60_000, { try $0.updateModel(["image": "v2"]) }),
            // Batch 1 (0, 1) upgrades until 460 s, then the pause runs to 760 s.
            (500_000, { try $0.manualUpgrade(ids: [5, 6, 7]) }),
        ])
        let checks = outcome.events.compactMap { event -> ThresholdCheck? in
            if case .preBatchCheck(let check) = event.payload { return check }
            return nil
        }
        XCTAssertEqual(checks.map(\.counted), [[], [5, 6, 7]])
        XCTAssertEqual(checks.map(\.passed), [true, false])
        XCTAssertEqual(outcome.status.code, .faulted)
        XCTAssertEqual(outcome.status.error?.code.rawValue, "MaxUnhealthyInstancePercentExceededInRollingUpgrade")
        XCTAssertEqual(outcome.status.error?.details.map(\.target), ["web/virtualMachines/5", "web/virtualMachines/6", "web/virtualMachines/7"])
    }

    /// The same, with the manual upgrade's instances back up but still booting (Initializing
    /// after their restart): they are still down from an upgrade.
    func testInstancesBootingAfterAManualUpgradeCountBeforeTheNextBatch() throws {
        let definition = scaleSet(10) { d in
            d.updateDomainCount = 1
            d.policy.rolling.pauseTimeBetweenBatches = 600_000
            d.healthExtension = HealthExtensionSettings(protocol: .http, port: 8000, requestPath: "/health", gracePeriod: 900)
        }
        // Instances 5, 6, 7 answer only 10 minutes after a restart.
        let outcome = try simulate(definition, health: { vm, now in
            [5, 6, 7].contains(vm.id) && vm.health.startedAt > 0 && now < vm.health.startedAt + 600_000
                ? .noAnswer : .http(status: 200, body: wireBody())
        }, actions: [
            (60_000, { try $0.updateModel(["image": "v2"]) }),
            (200_000, { try $0.manualUpgrade(ids: [5, 6, 7]) }),
        ])
        let second = outcome.events.compactMap { event -> ThresholdCheck? in
            if case .preBatchCheck(let check) = event.payload { return check }
            return nil
        }.dropFirst().first
        XCTAssertEqual(second?.counted, [5, 6, 7])
        XCTAssertEqual(second?.passed, false)
    }
}
