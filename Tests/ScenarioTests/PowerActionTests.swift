import Foundation
import Scenario
import UpgradeEngine
import XCTest

/// Restart, power off, deallocate and start (issue 39): the engine's power actions through a
/// script's functions and through `RehearsalSession.perform`, with times worked out by hand.
final class PowerActionTests: XCTestCase {
    /// Four instances probed every 5 s (one probe decides, 600 s of grace); the application
    /// answers Healthy from 120 s after each (re)start and refuses before.
    static func script(policy: String = #"mode = "Manual""#, _ timeline: String) -> String {
        """
        scaleset {
          name = "web", capacity = 4, model = { image = "v1" },
          upgradePolicy = { \(policy) },
          healthExtension = { protocol = "http", port = 8000, requestPath = "/health",
                              intervalInSeconds = 5, numberOfProbes = 1, gracePeriod = 600 },
        }
        health(function(vm, now)
          if now - vm.startedAt < 120 then return nil end
          return { applicationHealthState = "Healthy" }
        end)
        \(timeline)
        """
    }

    private func run(_ text: String) throws -> (RunRecord, [Event], [String]) { try runScript(text) }

    /// (time, state, reason) of instance `id`'s health changes.
    private func health(_ events: [Event], _ id: Int) -> [String] {
        events.compactMap { event in
            guard event.instance == id, case .healthChanged(_, let state, let reason) = event.payload else { return nil }
            return "\(event.time) \(state.rawValue) \(reason.rawValue)"
        }
    }

    /// (time, serving, count) of instance `id`'s service changes.
    private func serving(_ events: [Event], _ id: Int) -> [String] {
        events.compactMap { event in
            guard event.instance == id, case .servingChanged(let serving, let count, _) = event.payload else { return nil }
            return "\(event.time) \(serving) \(count)"
        }
    }

    private func session(_ timeline: String = "", policy: String = #"mode = "Manual""#) throws -> RehearsalSession {
        let definition = try ScenarioDefinition(luaScript: try writeScenario(Self.script(policy: policy, timeline)), options: options())
        return try RehearsalSession(definition, seed: 1)
    }

    // MARK: Restart

    func testARestartAtTenMinutesIsInitializingAt600sAndHealthyAt720s() throws {
        // Every instance boots at 0 and answers at 120 s. Instance 1 restarts at 600 s: Initializing
        // at once, probed from 600 s every 5 s; its first Healthy answer is at 600 + 120 = 720 s.
        let (record, events, _) = try run(Self.script(#"at("PT10M", function() restart_instances { 1 } end)"#))
        XCTAssertEqual(health(events, 1), ["120000 Healthy probes", "600000 Initializing restarted", "720000 Healthy probes"])
        for other in [0, 2, 3] { XCTAssertEqual(health(events, other), ["120000 Healthy probes"]) }
        XCTAssertEqual(serving(events, 1), ["120000 true 2", "600000 false 3", "720000 true 4"])
        let restarts = events.compactMap { event -> String? in
            guard case .restart(let ids, let restarting) = event.payload else { return nil }
            return "\(event.time) \(ids ?? []) \(restarting)"
        }
        XCTAssertEqual(restarts, ["600000 [1] 1"])
        // No operation and no model change: the instance keeps model 1.
        XCTAssertFalse(events.contains { $0.kind == .operationStarted || $0.kind == .modelUpdated })
        XCTAssertEqual(events.last?.time, 720_000)
        XCTAssertEqual(record.events.count, events.count)
    }

    // MARK: Stop, deallocate, start

    func testADeallocatedInstanceIsOutOfServiceUntilAStartBootsIt() throws {
        // Deallocated at 600 s: Unknown (it reports nothing), out of service (3 serving); started
        // at 1,200 s: Initializing, Healthy 120 s later at 1,320 s.
        let (_, events, _) = try run(Self.script("""
            at("PT10M", function() stop_instances({ 2 }, { deallocate = true }) end)
            at("PT20M", function() start_instances { 2 } end)
            """))
        XCTAssertEqual(health(events, 2), ["120000 Healthy probes", "600000 Unknown poweredOff", "1200000 Initializing restarted",
                                           "1320000 Healthy probes"])
        XCTAssertEqual(serving(events, 2), ["120000 true 3", "600000 false 3", "1320000 true 4"])
        let power = events.compactMap { event -> String? in
            switch event.payload {
            case .stop(let ids, let deallocate, let stopping): return "\(event.time) stop \(ids ?? []) \(deallocate) \(stopping)"
            case .start(let ids, let starting): return "\(event.time) start \(ids ?? []) \(starting)"
            default: return nil
            }
        }
        XCTAssertEqual(power, ["600000 stop [2] true 1", "1200000 start [2] 1"])
    }

    func testPowerStatesThroughASession() throws {
        let session = try session()
        try session.advance(to: 300_000)
        XCTAssertNil(try session.perform(.stop(ids: [1, 1, 2], deallocate: false)))
        XCTAssertEqual(session.instances.map(\.lifecycle), [.running, .stopped, .stopped, .running])
        XCTAssertEqual(session.instances.map(\.health), [.healthy, .unknown, .unknown, .healthy])
        // A stopped instance may be deallocated; a power off of a deallocated one changes nothing.
        XCTAssertNil(try session.perform(.stop(ids: [1], deallocate: true)))
        XCTAssertNil(try session.perform(.stop(ids: [1], deallocate: false)))
        XCTAssertEqual(session.instances.map(\.lifecycle), [.running, .deallocated, .stopped, .running])
        // A restart passes over stopped instances; a start of "*" boots the two, not the running ones.
        XCTAssertNil(try session.perform(.restart(ids: [1])))
        XCTAssertEqual(session.instances[1].lifecycle, .deallocated)
        XCTAssertNil(try session.perform(.start(ids: nil)))
        XCTAssertEqual(session.instances.map(\.health), [.healthy, .initializing, .initializing, .healthy])
        let counts = session.events.compactMap { event -> Int? in
            switch event.payload {
            case .stop(_, _, let n), .restart(_, let n), .start(_, let n): return n
            default: return nil
            }
        }
        // stop {1, 1, 2}: 2; deallocate {1}: 1; power off {1}: 0; restart {1}: 0; start *: 2.
        XCTAssertEqual(counts, [2, 1, 0, 0, 2])
        // Started at 300 s: the probe at 420 s is the first answered (the clock stands just past it).
        try session.advance(to: 419_999)
        XCTAssertEqual(session.instances.map(\.health), [.healthy, .initializing, .initializing, .healthy])
        try session.advance(to: 420_001)
        XCTAssertEqual(session.instances.map(\.health), [.healthy, .healthy, .healthy, .healthy])
    }

    func testMissingAndProtectedIdsAreRefusedWholeAndStarSparesProtected() throws {
        let session = try session()
        try session.advance(to: 300_000)
        XCTAssertNotNil(try session.perform(.restart(ids: [1, 9])))
        XCTAssertNotNil(try session.perform(.stop(ids: [-1], deallocate: true)))
        XCTAssertNil(try session.perform(.protect(id: 3, fromScaleIn: false, fromScaleSetActions: true)))
        XCTAssertNotNil(try session.perform(.stop(ids: [2, 3], deallocate: false)))
        // Nothing of a refused action happened.
        XCTAssertEqual(session.instances.map(\.lifecycle), [.running, .running, .running, .running])
        XCTAssertEqual(session.events.filter { $0.kind == .actionFailed }.count, 3)
        XCTAssertNil(try session.perform(.stop(ids: nil, deallocate: true)))
        XCTAssertEqual(session.instances.map(\.lifecycle), [.deallocated, .deallocated, .deallocated, .running])
        // A deleted instance does not exist for a power action.
        XCTAssertNil(try session.perform(.deleteInstances(ids: [0])))
        try session.advance(to: 400_000)
        XCTAssertNotNil(try session.perform(.start(ids: [0])))
    }

    // MARK: A rolling upgrade meets deallocated instances

    func testTwoInstancesDeallocatedDuringARollingUpgradeFaultItAtTheNextPreBatchCheck() throws {
        // One instance a batch (25% of 4), 20% unhealthy allowed, no pause; the image change is a
        // 2-minute restart upgrade. At 600 s batch 1 takes instance 0: upgraded 600–720 s,
        // Healthy at 720 + 120 = 840 s, when the batch ends. Instances 2 and 3 are deallocated at
        // 660 s: Unknown, which counts as unhealthy (SPEC §3; Azure's maxUnhealthyInstancePercent
        // counts instances found unhealthy "for any reason"). Batch 2's pre-batch check at 840 s
        // counts 2 of 4 (50%) against 20%: the upgrade faults, with nothing more upgraded.
        let (record, events, _) = try run(Self.script(
            policy: #"mode = "Rolling", rollingUpgradePolicy = { maxBatchInstancePercent = 25, maxUnhealthyInstancePercent = 20, pauseTimeBetweenBatches = "PT0S" }"#,
            """
            at("PT10M", function() update_model { image = "v2" } end)
            at("PT11M", function() stop_instances({ 2, 3 }, { deallocate = true }) end)
            """))
        XCTAssertEqual(batches(events), ["0"])
        let checks = events.compactMap { event -> String? in
            guard case .preBatchCheck(let check) = event.payload else { return nil }
            return "\(event.time) \(check.passed) \(check.counted.sorted())"
        }
        XCTAssertEqual(checks, ["600000 true []", "840000 false [2, 3]"])
        let faulted = events.first { $0.kind == .upgradeFaulted }
        XCTAssertEqual(faulted?.time, 840_000)
        XCTAssertEqual(record.upgrades, 1)
        // Initializing from the upgrade's start; its restart at 720 s keeps it so (no new event).
        XCTAssertEqual(health(events, 0), ["120000 Healthy probes", "600000 Initializing restarted", "840000 Healthy probes"])
    }

    func testAStoppedInstanceIsPassedOverByBatchesReimagesAndManualUpgrades() throws {
        // Instance 1 is powered off before the upgrade: batches take 0, 2 and 3 only (it is
        // neither upgraded nor started), and a reimage of every instance leaves it stopped.
        let session = try session(policy: #"mode = "Rolling", rollingUpgradePolicy = { maxBatchInstancePercent = 25, maxUnhealthyInstancePercent = 50 }"#)
        try session.advance(to: 300_000)
        XCTAssertNil(try session.perform(.stop(ids: [1], deallocate: false)))
        XCTAssertNil(try session.perform(.updateModel(["image": "v2"])))
        _ = try session.finish()
        XCTAssertEqual(batches(session.events).filter { $0.contains("1") }, [])
        XCTAssertEqual(session.instances[1].lifecycle, .stopped)
        XCTAssertEqual(session.instances.map(\.modelVersion), [2, 1, 2, 2])

        // Manual mode: a reimage or manual upgrade of every instance reaches the 3 running ones.
        let manual = try self.session()
        try manual.advance(to: 300_000)
        XCTAssertNil(try manual.perform([.stop(ids: [1], deallocate: true), .reimage(ids: nil)]))
        try manual.advance(to: 600_000)
        XCTAssertNil(try manual.perform([.updateModel(["image": "v2"]), .manualUpgrade(ids: nil)]))
        let counts = manual.events.compactMap { event -> String? in
            switch event.payload {
            case .reimage(_, let n): return "reimage \(n)"
            case .manualUpgrade(_, let n, _): return "manual \(n)"
            default: return nil
            }
        }
        XCTAssertEqual(counts, ["reimage 3", "manual 3"])
        _ = try manual.finish()
        XCTAssertEqual(manual.instances[1].lifecycle, .deallocated)
        XCTAssertEqual(manual.instances.map(\.modelVersion), [2, 1, 2, 2])
    }

    func testStopInstancesReadsItsOptionsStrictly() throws {
        let (_, _, printed) = try run(Self.script("""
            at("PT1M", function()
              print(tostring(pcall(stop_instances, { 1 }, { deallocate = "yes" })))
              print(tostring(pcall(stop_instances, { 1 }, { hibernate = true })))
              print(tostring(pcall(restart_instances, "all")))
              print(tostring(pcall(start_instances, { 1 })))
            end)
            """))
        XCTAssertEqual(printed, ["false", "false", "false", "true"])
    }
}
