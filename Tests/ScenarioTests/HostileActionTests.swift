import Formats
import Foundation
import Scenario
import UpgradeEngine
import XCTest

/// Issue 37's attacks on actions and the clock, at the engine's action level (what a script's
/// `at` and serve's routes both reach): an instance named twice, a scale-out the quota refuses,
/// a clock moved on until its arithmetic would overflow.
final class HostileActionTests: XCTestCase {
    /// Four healthy instances, Manual mode, a quota of 10, version 2 of the model published at PT1M.
    static let script = """
        scaleset { name = "web", capacity = 4, quota = 10, model = { image = "v1" },
                   upgradePolicy = { mode = "Manual" } }
        at("PT1M", function() update_model { image = "v2" } end)
        """

    func session() throws -> RehearsalSession {
        let definition = try ScenarioDefinition(luaScript: try writeScenario(Self.script), options: options())
        let session = try RehearsalSession(definition, seed: 1)
        try session.advance(to: 90_000)
        return session
    }

    /// Operations started on each instance, by kind.
    func started(_ events: [Event], _ kind: OperationKind) -> [Int] {
        events.compactMap { event in
            guard case .operationStarted(let facts) = event.payload, facts.kind == kind else { return nil }
            return event.instance
        }
    }

    func testAnInstanceNamedTwiceIsActedOnOnce() throws {
        let session = try session()
        XCTAssertNil(try session.perform(.reimage(ids: [1, 1, 1])))
        XCTAssertNil(try session.perform(.manualUpgrade(ids: [2, 2])))
        try session.advance(to: 95_000)
        XCTAssertEqual(started(session.events, .reimage), [1])
        XCTAssertEqual(started(session.events, .upgrade), [2])
        let reimages = session.events.compactMap { event -> [Int]? in
            if case .reimage(let ids, let reimaging) = event.payload { XCTAssertEqual(reimaging, 1); return ids }
            return nil
        }
        XCTAssertEqual(reimages, [[1]])
        let upgrades = session.events.compactMap { event -> [Int]? in
            if case .manualUpgrade(let ids, let upgrading, _) = event.payload { XCTAssertEqual(upgrading, 1); return ids }
            return nil
        }
        XCTAssertEqual(upgrades, [[2]])
    }

    func testARefusedScaleOutKeepsTheCapacity() throws {
        let session = try session()
        let refusal = try session.perform(.scale(to: 50))
        XCTAssertNotNil(refusal)
        XCTAssertEqual(session.capacity, 4)
        XCTAssertEqual(session.instances.count, 4)
        // Within the quota it scales.
        XCTAssertNil(try session.perform(.scale(to: 6)))
        XCTAssertEqual(session.capacity, 6)
    }

    func testTheClockIsRefusedPastTheLatestInstantNotOverflowed() throws {
        let session = try session()
        let step = try ISODuration.parse("P11574074DT1H46M40S").get()
        // The first advance would pass the latest instant from PT1M30S: refused, the clock kept.
        let refused = try session.advance(by: step)
        XCTAssertNotNil(refused)
        XCTAssertEqual(session.clock, 90_000)
        // Up to it: allowed; then every further advance, 9,224 of them included, is refused.
        XCTAssertNil(try session.advance(to: ISODuration.longest))
        XCTAssertEqual(session.clock, ISODuration.longest)
        for _ in 0..<9_224 { XCTAssertNotNil(try session.advance(by: step)) }
        XCTAssertNotNil(try session.advance(by: Int.max))
        XCTAssertEqual(try session.advance(by: -1)?.refusal, .clockBackwards(-1))
        XCTAssertEqual(try session.advance(by: Int.min)?.refusal, .clockBackwards(Int.min))
        XCTAssertEqual(try session.advance(to: Int.max)?.refusal, .pastLatestInstant)
        XCTAssertEqual(session.clock, ISODuration.longest)
    }
}
