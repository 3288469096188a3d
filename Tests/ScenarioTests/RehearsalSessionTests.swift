import Formats
import Foundation
import Reports
import Scenario
import UpgradeEngine
import XCTest

/// A run you can step: the session stepped from outside gives the events `Rehearsal.run` gives,
/// takes actions between steps and answers snapshots.
final class RehearsalSessionTests: XCTestCase {
    /// Every shipped scenario in scripts/.
    func shippedScripts() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: repositoryRoot + "/scripts").filter { $0.hasSuffix(".lua") }.sorted()
            .map { repositoryRoot + "/scripts/" + $0 }
    }

    func events(of record: RunRecord) -> [String] { record.events.map(\.jsonLine) }

    /// Stepping a session event by event, or by odd slices of time, then finishing it, gives
    /// byte for byte the events of `Rehearsal.run` for every shipped scenario (seed 7).
    func testSteppedSessionGivesTheEventsOfRunForEveryShippedScenario() throws {
        let scripts = try shippedScripts()
        XCTAssertGreaterThanOrEqual(scripts.count, 10)
        for path in scripts {
            let definition = try ScenarioDefinition(luaScript: path, options: options(seed: 7))
            let run = try Rehearsal.run(definition, seed: 7)

            let stepped = try RehearsalSession(definition, seed: 7)
            var steps = 0
            while let time = try stepped.step() {
                XCTAssertEqual(stepped.now, time, path)
                steps += 1
            }
            XCTAssertGreaterThan(steps, 0, path)
            XCTAssertEqual(events(of: try stepped.finish()), events(of: run), "stepped event by event: \(path)")

            // Advanced in odd slices of time up to just before the run's last event (where `run`
            // stops for want of work), then finished.
            let sliced = try RehearsalSession(definition, seed: 7)
            var time: Millis = 0
            while time + 7_777 < run.summary.endTime {
                time += 7_777
                try sliced.advance(to: time)
                XCTAssertEqual(sliced.now, time, path)
            }
            let record = try sliced.finish()
            XCTAssertEqual(events(of: record), events(of: run), "advanced in slices of 7.777 s: \(path)")
            XCTAssertEqual(record.summary.status, run.summary.status, path)
            XCTAssertEqual(record.expectations, run.expectations, path)
        }
    }

    /// scripts/ten-at-twenty.lua: ten healthy instances, batches of two, `update_model` at PT2M.
    static let tenAtTwenty = repositoryRoot + "/scripts/ten-at-twenty.lua"

    /// The script's own update at PT2M runs at its time; a cancel from outside lands between
    /// steps, with the status read in between; the events equal a run whose timeline cancels at
    /// the same time.
    func testExternalCancelBetweenStepsOfTheScriptsRollingUpgrade() throws {
        let definition = try ScenarioDefinition(luaScript: Self.tenAtTwenty, options: options())
        let session = try RehearsalSession(definition, seed: 3)
        try session.advance(to: 61_500)
        XCTAssertEqual(session.now, 61_500)
        XCTAssertNil(session.status)
        XCTAssertTrue(session.instances.allSatisfy { $0.health == .healthy && $0.latestModelApplied })
        try session.advance(to: 120_500)
        XCTAssertEqual(session.modelVersion, 2)
        XCTAssertEqual(session.model["image"], "v2")
        XCTAssertEqual(session.status?.code, .rollingForward)
        XCTAssertEqual(session.status?.progress.inProgressInstanceCount, 2)

        // Step until the first batch is done; the status moves between steps.
        while let successful = session.status?.progress.successfulInstanceCount, successful < 2 {
            XCTAssertEqual(session.status?.code, .rollingForward)
            XCTAssertNotNil(try session.step())
        }
        XCTAssertEqual(session.instances.filter(\.latestModelApplied).count, 2)
        try session.advance(to: session.now + 1_500)
        let cancelAt = session.clock
        XCTAssertNil(try session.perform(.cancel))
        XCTAssertEqual(session.status?.code, .cancelled)
        XCTAssertEqual(session.status?.lastAction, "Cancel")
        // Nothing left to cancel: the engine's refusal, and the run goes on.
        XCTAssertEqual(try session.perform(.cancel)?.refusal, .nothingToCancel)
        let record = try session.finish()
        XCTAssertEqual(record.summary.status?.code, .cancelled)
        XCTAssertEqual(record.upgrades, 1)
        XCTAssertEqual(record.events.filter { $0.kind == .actionFailed }.count, 1)

        // The same cancel on the scenario's own timeline, a typed entry after the script's (the
        // refused one left out).
        var timed = definition
        timed.timeline.append(.init(time: cancelAt, action: .perform(.cancel)))
        let scripted = try Rehearsal.run(timed, seed: 3)
        XCTAssertEqual(record.events.filter { $0.kind != .actionFailed }, scripted.events)
        XCTAssertEqual(scripted.events.first { $0.kind == .upgradeCancelled }?.time, cancelAt)
    }

    /// Snapshots: each instance's zone, domains, model and protection; a refusal names what.
    func testSnapshotsAndRefusals() throws {
        var scaleSet = ScaleSetDefinition(name: "z", capacity: 6)
        scaleSet.zones = ["1", "2", "3"]
        scaleSet.model = ["image": "v1"]
        scaleSet.protected = [2]
        scaleSet.policy.mode = .manual
        let definition = ScenarioDefinition(path: "z (Swift)", scaleSet: scaleSet, behaviour: .swift(SwiftBehaviours { _ in Behaviours() }))
        let session = try RehearsalSession(definition, seed: 1)
        let views = session.instances
        XCTAssertEqual(views.map(\.id), Array(0..<6))
        XCTAssertEqual(Set(views.compactMap(\.zone)), ["1", "2", "3"])
        XCTAssertEqual(views.filter(\.protectFromScaleSetActions).map(\.id), [2])
        XCTAssertNil(try session.perform(.updateModel(["image": "v2"])))
        XCTAssertEqual(session.instances.filter(\.latestModelApplied).count, 0)
        XCTAssertNotNil(try session.perform(.manualUpgrade(ids: [2]))?.message)
        XCTAssertNil(try session.perform(.manualUpgrade(ids: [0, 1])))
        try session.advance(to: 3_600_000)
        XCTAssertEqual(session.instances.filter(\.latestModelApplied).map(\.id), [0, 1])
        XCTAssertNil(session.status)
        XCTAssertEqual(session.osUpgradeHistory, [])
        _ = try session.finish()
        XCTAssertEqual(try session.perform(.cancel)?.refusal, .runFinished)
    }
}
