import Scenario
import UpgradeEngine
import XCTest

/// The capacity curve is data: every entry into and exit from service is an event of its own,
/// and its counts agree with the availability figures and the fleet at the end, on every seed.
final class ServingEventsTests: XCTestCase {
    func testServingEventsStepByOneAgreeWithTheLowestPointAndEndWithTheServingFleet() throws {
        let definition = RealisticFleet.definition
        var lowestSeen = Set<Int>()
        var restarts = 0
        for seed in UInt64(0)..<24 {
            let record = try Rehearsal.run(definition, seed: seed)
            var count: Int?
            var servingNow: [Int: Bool] = [:]
            var healthNow: [Int: HealthState] = [:]
            for (index, event) in record.events.enumerated() {
                if case .healthChanged(_, let to, _) = event.payload, let id = event.instance { healthNow[id] = to }
                guard case .servingChanged(let serving, let n, let reason) = event.payload, let id = event.instance else { continue }
                XCTAssertEqual(n, (count ?? (serving ? n - 1 : n + 1)) + (serving ? 1 : -1), "seed \(seed) event \(index)")
                XCTAssertNotEqual(servingNow[id], serving, "seed \(seed): instance \(id) \(serving ? "entered" : "left") twice")
                if reason == .health(.initializing) {
                    // An upgrade's restart starts the instance over: out of service until it boots.
                    XCTAssertFalse(serving)
                    restarts += 1
                } else {
                    XCTAssertEqual(healthNow[id].map(ServingReason.health), reason, "seed \(seed): the health change comes first")
                }
                XCTAssertEqual(serving, reason == .health(.healthy) && serving, "seed \(seed): only Healthy enters service")
                servingNow[id] = serving
                count = n
            }
            let servingAtEnd = record.instances.filter { $0.exists && $0.health == .healthy }.count
            XCTAssertEqual(count, servingAtEnd, "seed \(seed)")
            // The lowest point: the count when the upgrade started, then every count after it.
            let start = try XCTUnwrap(record.summary.upgradeStarted)
            var lowest = Int.max
            var before = 0
            for event in record.events {
                guard case .servingChanged(_, let n, _) = event.payload else { continue }
                if event.time < start { before = n } else { lowest = min(lowest, n) }
            }
            let expected = min(before, lowest)
            XCTAssertEqual(record.summary.availability?.lowestHealthy, expected, "seed \(seed)")
            lowestSeen.insert(expected)
        }
        // A batch of 6 restarting takes the 30 down to 24 at least, on every seed.
        XCTAssertLessThanOrEqual(lowestSeen.max() ?? .max, 24)
        // Every run upgraded (and restarted) one batch of 6 at least; faulted runs stopped early.
        XCTAssertGreaterThanOrEqual(restarts, 24 * 6)
        XCTAssertLessThan(restarts, 24 * 30)
    }
}
