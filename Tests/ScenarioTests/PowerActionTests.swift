import Formats
import Foundation
import Scenario
import UpgradeEngine
import XCTest

/// Restart, power off, deallocate and start (issue 39): the engine's power actions on Swift
/// definitions, through typed timelines and `RehearsalSession.perform`, with times worked out by
/// hand; one test checks that a script's functions give the typed timeline's events.
final class PowerActionTests: XCTestCase {
    /// Four instances probed every 5 s (one probe decides, 600 s of grace), Manual unless
    /// `configure` says otherwise.
    static func fleet(_ configure: (inout UpgradePolicy) -> Void = { $0.mode = .manual }) -> ScaleSetDefinition {
        var scaleSet = ScaleSetDefinition(name: "web", capacity: 4)
        scaleSet.model = ["image": "v1"]
        configure(&scaleSet.policy)
        scaleSet.healthExtension = HealthExtensionSettings(protocol: .http, port: 8000, requestPath: "/health", intervalInSeconds: 5,
                                                           numberOfProbes: 1, gracePeriod: 600)
        return scaleSet
    }

    /// The application refuses connections until 120 s after each (re)start, then answers Healthy.
    static let application = SwiftBehaviours { _ in
        Behaviours(health: ClosureHealthSource { vm, now in now - vm.health.startedAt < 120_000 ? .noAnswer : .named(.healthy) })
    }

    /// The fleet with the application and `timeline`: each action at its time in milliseconds.
    static func definition(_ scaleSet: ScaleSetDefinition = fleet(), at timeline: [(Millis, SessionAction)] = []) -> ScenarioDefinition {
        ScenarioDefinition(path: "power (Swift)", scaleSet: scaleSet, behaviour: .swift(application),
                           timeline: timeline.map { .init(time: $0.0, action: .perform($0.1)) })
    }

    /// The same fleet as a script, for the script functions' test.
    static func script(_ timeline: String) -> String {
        """
        scaleset {
          name = "web", capacity = 4, model = { image = "v1" },
          upgradePolicy = { mode = "Manual" },
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

    private func run(_ definition: ScenarioDefinition) throws -> (RunRecord, [Event]) {
        let record = try Rehearsal.run(definition, RunInputs(seed: 0))
        return (record, record.events)
    }

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

    private func session(_ scaleSet: ScaleSetDefinition = fleet()) throws -> RehearsalSession {
        try RehearsalSession(Self.definition(scaleSet), seed: 1)
    }

    // MARK: Restart

    func testARestartAtTenMinutesIsInitializingAt600sAndHealthyAt720s() throws {
        // Every instance boots at 0 and answers at 120 s. Instance 1 restarts at 600 s: Initializing
        // at once, probed from 600 s every 5 s; its first Healthy answer is at 600 + 120 = 720 s.
        let (record, events) = try run(Self.definition(at: [(600_000, .restart(ids: [1]))]))
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
        XCTAssertEqual(record.summary.endTime, 720_000)
    }

    // MARK: Stop, deallocate, start

    func testADeallocatedInstanceIsOutOfServiceUntilAStartBootsIt() throws {
        // Deallocated at 600 s: Unknown (it reports nothing), out of service (3 serving); started
        // at 1,200 s: Initializing, Healthy 120 s later at 1,320 s.
        let (_, events) = try run(Self.definition(at: [(600_000, .stop(ids: [2], deallocate: true)), (1_200_000, .start(ids: [2]))]))
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
        let rolling = Self.fleet {
            $0.mode = .rolling
            $0.rolling.maxBatchInstancePercent = 25
            $0.rolling.maxUnhealthyInstancePercent = 20
            $0.rolling.pauseTimeBetweenBatches = 0
        }
        let (record, events) = try run(Self.definition(rolling, at: [(600_000, .updateModel(["image": "v2"])), (660_000, .stop(ids: [2, 3], deallocate: true))]))
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
        let session = try session(Self.fleet {
            $0.mode = .rolling
            $0.rolling.maxBatchInstancePercent = 25
            $0.rolling.maxUnhealthyInstancePercent = 50
        })
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

    /// The script's functions are the typed actions: the same timeline written in Lua gives the
    /// same events as the Swift definition's.
    func testTheScriptFunctionsGiveTheTypedTimelinesEvents() throws {
        let (_, lua, _) = try runScript(Self.script("""
            at("PT5M", function() restart_instances { 1 } end)
            at("PT10M", function() stop_instances({ 2 }, { deallocate = true }) end)
            at("PT12M", function() stop_instances("*") end)
            at("PT20M", function() start_instances("*") end)
            """))
        let (_, typed) = try run(Self.definition(at: [(300_000, .restart(ids: [1])), (600_000, .stop(ids: [2], deallocate: true)),
                                                  (720_000, .stop(ids: nil, deallocate: false)), (1_200_000, .start(ids: nil))]))
        XCTAssertEqual(lua, typed)
        // Every instance stopped at 720 s and started at 1,200 s answers at 1,320 s.
        XCTAssertEqual(typed.last?.time, 1_320_000)
    }

    func testStopInstancesReadsItsOptionsStrictly() throws {
        let (_, _, printed) = try runScript(Self.script("""
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
