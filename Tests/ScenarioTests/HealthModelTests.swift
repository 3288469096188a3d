import Formats
import Foundation
import Scenario
import UpgradeEngine
import XCTest

/// `health_model { … }`: the application as a value. Every figure below follows from the model
/// and the probe rules (interval 5 s, one probe to change state, grace 600 s).
final class HealthModelTests: XCTestCase {
    func scenario(capacity: Int = 6, _ model: String, expect: String = "Completed") -> String {
        """
        scaleset {
          name = "m", capacity = \(capacity), model = { image = "v1" },
          upgradePolicy = { mode = "Rolling", rollingUpgradePolicy = { maxBatchInstancePercent = 50, maxUnhealthyUpgradedInstancePercent = 100,
                                                                        maxUnhealthyInstancePercent = 100 } },
          healthExtension = { protocol = "http", port = 8080, requestPath = "/health", intervalInSeconds = 5, gracePeriod = 600 },
        }
        \(model)
        at("PT1M", function() update_model { image = "v2" } end)
        expect { code = "\(expect)" }
        """
    }

    /// Per upgraded instance: seconds from its upgrade's end (its restart) to its first Healthy.
    func bootSeconds(_ events: [Event]) -> [Int: Double] {
        var restarted: [Int: Millis] = [:], boots: [Int: Double] = [:]
        for event in events {
            guard let id = event.instance else { continue }
            switch event.payload {
            case .operationFinished(.upgrade, _, true): restarted[id] = event.time
            case .healthChanged(_, .healthy, _):
                if let at = restarted[id], boots[id] == nil { boots[id] = Double(event.time - at) / 1000 }
            default: continue
            }
        }
        return boots
    }

    /// A fixed boot of PT2M: every upgraded instance is Healthy at the probe exactly 120 s after
    /// its restart (120 is a multiple of the 5 s interval, and the first probe is at the restart).
    func testFixedBootIsHealthyAtTheProbeAfterIt() throws {
        let (record, events, _) = try runScript(scenario(#"health_model { boot = "PT0S", versions = { v2 = { boot = "PT2M" } } }"#))
        XCTAssertEqual(record.summary.status?.code, .completed)
        let boots = bootSeconds(events)
        XCTAssertEqual(boots.count, 6)
        XCTAssertEqual(Set(boots.values), [120])
    }

    /// Every v2 boot silent: each upgraded instance leaves Initializing only when grace ends
    /// (600 s, to Unknown), and the upgrade faults on the upgraded threshold... here 100%, so it
    /// is the run's expectation that says Faulted would need a budget; the instances stay Unknown.
    func testNeverHealthyBootsStayUnknownAfterGrace() throws {
        let text = scenario(#"health_model { boot = "PT0S", versions = { v2 = { neverHealthy = 1 } } }"#, expect: "Faulted")
            .replacingOccurrences(of: "maxUnhealthyUpgradedInstancePercent = 100", with: "maxUnhealthyUpgradedInstancePercent = 20")
        let (record, events, _) = try runScript(text)
        XCTAssertEqual(record.summary.status?.code, .faulted)
        XCTAssertEqual(record.summary.status?.error?.code, .unhealthyUpgraded)
        var restarted: [Int: Millis] = [:]
        var unknownAfter: [Double] = []
        for event in events {
            guard let id = event.instance else { continue }
            if case .operationFinished(.upgrade, _, true) = event.payload { restarted[id] = event.time }
            if case .healthChanged(.initializing, .unknown, .gracePeriodEnded) = event.payload, let at = restarted[id] {
                unknownAfter.append(Double(event.time - at) / 1000)
            }
        }
        XCTAssertEqual(Set(unknownAfter), [600], "grace ends at the probe 600 s after the restart")
        XCTAssertEqual(bootSeconds(events).count, 0)
    }

    /// Log-normal boots by median PT3M and p95 PT6M over 400 instances: the measured median and
    /// 95th percentile are within 5% of the model's (plus at most one 5 s probe interval).
    func testLogNormalBootsHaveTheirMedianAndP95() throws {
        let (_, events, _) = try runScript(scenario(capacity: 400, #"health_model { boot = "PT0S", versions = { v2 = { boot = { median = "PT3M", p95 = "PT6M" } } } }"#))
        // A boot past the 600 s grace (about 1 in 500 here) is Unknown first: counted as the longest.
        var boots = bootSeconds(events).values.sorted()
        XCTAssertGreaterThanOrEqual(boots.count, 396)
        boots += Array(repeating: Double.infinity, count: 400 - boots.count)
        let median = boots[199], p95 = boots[379]
        XCTAssertEqual(median, 182.5, accuracy: 0.05 * 180 + 2.5, "median \(median)")
        XCTAssertEqual(p95, 362.5, accuracy: 0.08 * 360 + 2.5, "p95 \(p95)")
    }

    /// An empirical list draws only its values; uniform stays within its bounds; a model's runs
    /// are the same for a seed and differ between seeds.
    func testEmpiricalAndUniformDrawsAndDeterminism() throws {
        let empirical = try runScript(scenario(capacity: 60, #"health_model { boot = "PT0S", versions = { v2 = { boot = { "PT1M", "PT3M", "PT7M" } } } }"#)).1
        XCTAssertEqual(Set(bootSeconds(empirical).values), [60, 180, 420])
        let text = scenario(capacity: 60, #"health_model { boot = "PT0S", versions = { v2 = { boot = { min = "PT2M", max = "PT6M" } } } }"#)
        let path = try writeScenario(text)
        let a = try runScenario(path, seed: 1).1, b = try runScenario(path, seed: 1).1, c = try runScenario(path, seed: 2).1
        let boots = bootSeconds(a).values
        XCTAssertTrue(boots.allSatisfy { (120...365).contains($0) }, "\(boots.sorted())")
        XCTAssertEqual(a, b, "the same seed, the same events")
        XCTAssertNotEqual(bootSeconds(a), bootSeconds(c), "another seed, other boots")
    }

    /// Transient episodes: once healthy, each instance is Unhealthy for PT1M in every PT10M.
    func testEpisodesMakeHealthyInstancesUnhealthyForAWhile() throws {
        let text = scenario(#"health_model { boot = "PT0S", episodes = { every = "PT10M", lasting = "PT1M" } }"#)
            .replacingOccurrences(of: "at(\"PT1M\", function() update_model { image = \"v2\" } end)", with: "at(\"PT1H\", function() end)")
            .replacingOccurrences(of: "expect { code = \"Completed\" }", with: "")
        let path = try writeScenario(text)
        let loaded = try load(path: path, options: options()) { $0.timeLimit = 3_600_000 }
        var down: [Int: [Millis]] = [:], up: [Int: [Millis]] = [:]
        _ = try loaded.run { event in
            guard let id = event.instance, case .healthChanged(let from, let to, _) = event.payload else { return }
            if from == .healthy && to == .unhealthy { down[id, default: []].append(event.time) }
            if from == .unhealthy && to == .healthy { up[id, default: []].append(event.time) }
        }
        XCTAssertEqual(down.count, 6)
        for id in 0..<6 {
            let d = try XCTUnwrap(down[id]), u = try XCTUnwrap(up[id])
            XCTAssertEqual(d.count, 6, "one episode in each of the hour's six windows")
            for (start, end) in zip(d, u) { XCTAssertEqual(Double(end - start) / 1000, 60, accuracy: 5) }
        }
    }

    /// Problems are named by field, all at once; a health function beside a model is refused.
    func testAModelIsCheckedWhole() throws {
        let bad = scenario(#"health_model { boot = { median = "PT3M" }, before = "maybe", neverHealthy = 2, colour = "red", versions = { next = {} } }"#)
        XCTAssertThrowsError(try load(path: try writeScenario(bad), options: options())) { error in
            let text = "\(error)"
            for field in ["health_model.boot", "health_model.before", "health_model.neverHealthy", "health_model.colour", "health_model.versions.next"] {
                XCTAssertTrue(text.contains(field), "\(field) in \(text)")
            }
        }
        let both = scenario(#"health_model { boot = "PT1M" } health(function() return nil end)"#)
        XCTAssertThrowsError(try load(path: try writeScenario(both), options: options())) { error in
            XCTAssertTrue("\(error)".contains("one way"), "\(error)")
        }
        XCTAssertThrowsError(try load(path: try writeScenario(scenario("health_model { }")), options: options()))
    }
}
