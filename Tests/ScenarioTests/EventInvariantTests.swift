import Formats
import Foundation
import Scenario
import UpgradeEngine
import XCTest

/// The event stream records every change: over every shipped scenario and many seeds, each
/// instance's `healthChanged.from` is the state its previous `healthChanged` went to (a restart's
/// reset to Initializing included), and each `servingChanged.count` is the enters minus the
/// leaves so far. `REHEARSE_INVARIANT_SEEDS` sets how many seeds (CI's `.ci/event-invariants`
/// runs 200; the unit test 12, to keep its time small).
final class EventInvariantTests: XCTestCase {
    static var seeds: UInt64 { UInt64(ProcessInfo.processInfo.environment["REHEARSE_INVARIANT_SEEDS"] ?? "") ?? 12 }

    /// Every shipped scenario: scripts/*.lua and each bundle's example.
    static func shipped() throws -> [String] {
        let files = FileManager.default
        let scripts = try files.contentsOfDirectory(atPath: repositoryRoot + "/scripts").filter { $0.hasSuffix(".lua") }.map { "scripts/" + $0 }
        let bundles = try files.contentsOfDirectory(atPath: repositoryRoot + "/plugins").map { "plugins/\($0)/example.lua" }
            .filter { files.fileExists(atPath: repositoryRoot + "/" + $0) }
        return (scripts + bundles).sorted()
    }

    /// The invariants' breaches in `events`, each said with its time and instance.
    static func breaches(_ events: [Event]) -> [String] {
        var health: [Int: HealthState] = [:]
        // Instances made with the scale set, before the stream begins, are not in it: the first
        // servingChanged gives the count before it.
        var serving: Int?
        var found: [String] = []
        for event in events {
            switch event.payload {
            case .healthChanged(let from, let to, _):
                guard let id = event.instance else { found.append("healthChanged at \(event.time) names no instance"); continue }
                if let previous = health[id], previous != from {
                    found.append("instance \(id) at \(event.time): from \(from.rawValue), but its previous state was \(previous.rawValue)")
                }
                if from == to { found.append("instance \(id) at \(event.time): \(from.rawValue) to itself") }
                health[id] = to
            case .servingChanged(let enters, let count, _):
                let now = (serving ?? (count - (enters ? 1 : -1))) + (enters ? 1 : -1)
                if count != now { found.append("servingChanged at \(event.time): count \(count), enters minus leaves \(now)") }
                serving = now
            default:
                continue
            }
        }
        return found
    }

    func testEveryShippedScenarioRecordsEveryHealthChangeAndServingCount() throws {
        let scenarios = try Self.shipped()
        XCTAssertGreaterThanOrEqual(scenarios.count, 19)
        var resets = 0
        for scenario in scenarios {
            let loaded = try load(path: repositoryRoot + "/" + scenario, options: options())
            for seed in 0..<Self.seeds {
                var inputs = loaded.inputs
                inputs.seed = seed
                let record = try Rehearsal.run(loaded.definition, inputs)
                let breaches = Self.breaches(record.events)
                XCTAssertEqual(breaches, [], "\(scenario) seed \(seed)")
                resets += record.events.count {
                    if case .healthChanged(_, .initializing, .restarted) = $0.payload { return true }
                    return false
                }
            }
        }
        // Upgrades restart instances: the shipped scenarios record their resets.
        XCTAssertGreaterThan(resets, 0)
    }

    /// The case: `reimage { 1 }` at PT10M of 4 instances whose app answers Healthy 120 s
    /// after a start (grace 900 s). Instance 1 goes Healthy (120 s) and is reset to Initializing,
    /// from Healthy, when the reimage starts (600 s), leaving service then.
    func testAReimageResetIsAHealthChangeFromHealthy() throws {
        var scaleSet = ScaleSetDefinition(name: "web", capacity: 4)
        scaleSet.model = ["image": "v1"]
        scaleSet.healthExtension = HealthExtensionSettings(protocol: .http, port: 8000, requestPath: "/health", gracePeriod: 900)
        let apps = SwiftBehaviours { _ in
            Behaviours(health: ClosureHealthSource { vm, now in now - vm.health.startedAt >= 120_000 ? .named(.healthy) : .named(.initializing) })
        }
        let definition = ScenarioDefinition(path: "reimage (Swift)", scaleSet: scaleSet, behaviour: .swift(apps),
                                            timeline: [.init(time: 600_000, action: .perform(.reimage(ids: [1])))])
        let events = try Rehearsal.run(definition, RunInputs(seed: 0)).events
        let one = events.filter { $0.instance == 1 }
        let health = one.compactMap { event -> (time: Millis, from: HealthState, to: HealthState, reason: HealthChangeReason)? in
            if case .healthChanged(let from, let to, let reason) = event.payload { return (event.time, from, to, reason) }
            return nil
        }
        // The run ends when the reimage does (no work is left), before the app answers again.
        XCTAssertEqual(health.map { $0.from }, [.initializing, .healthy])
        XCTAssertEqual(health.map { $0.to }, [.healthy, .initializing])
        XCTAssertEqual(health.map { $0.reason }, [.probes, .restarted])
        XCTAssertEqual(health.map { $0.time }, [120_000, 600_000])
        let serving = one.compactMap { event -> Bool? in
            if case .servingChanged(let serving, _, _) = event.payload { return serving }
            return nil
        }
        XCTAssertEqual(serving, [true, false])
        XCTAssertEqual(Self.breaches(events), [])
    }
}
