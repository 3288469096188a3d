import AsyncHTTPClient
import Foundation
import Formats
import NIOCore
import NIOHTTP1
import Reports
import Scenario
import Serve
import UpgradeEngine
import XCTest

/// One request is one step of the served run: its changes share one virtual instant, and the
/// served events are those of `rehearse run` with the same actions at the same instants.
final class ServeStepTests: XCTestCase {
    static let scaleSet = ServeRoutesTests.scaleSet

    /// What the served actions were, in order, with their instants (the server tells `onPerform`).
    // Its list is read and written under the lock only.
    final class Steps: @unchecked Sendable {
        private let lock = NSLock()
        private var list: [(Millis, [SessionAction])] = []
        func add(_ time: Millis, _ actions: [SessionAction]) { lock.withLock { list.append((time, actions)) } }
        var all: [(Millis, [SessionAction])] { lock.withLock { list } }
    }

    typealias Call = @Sendable (HTTPMethod, String, String?) async throws -> ServeRoutesTests.Reply

    /// Serves ServeRoutesTests' scenario in `mode` for the length of `body`, then stops the
    /// server; returns the served run's record and the steps performed.
    func served(_ mode: ClockMode, _ body: (_ call: @escaping Call) async throws -> Void) async throws -> (RunRecord, [(Millis, [SessionAction])], ScenarioDefinition) {
        let definition = try ServeRoutesTests.definition()
        let (record, steps) = try await Self.served(definition, mode, body)
        return (record, steps, definition)
    }

    /// Serves `definition` in `mode` for the length of `body`; the record and the steps performed.
    static func served(_ definition: ScenarioDefinition, _ mode: ClockMode,
                       _ body: (_ call: @escaping Call) async throws -> Void) async throws -> (RunRecord, [(Millis, [SessionAction])]) {
        let steps = Steps()
        var configuration = ServeConfiguration()
        configuration.port = 0
        configuration.tls = false
        configuration.mode = mode
        // The instants these tests read count from the scenario epoch, 2024-01-01.
        configuration.epoch = Timestamp.defaultEpoch
        configuration.onPerform = { steps.add($0, $1) }
        let record = try await ServeRoutesTests.serve(definition, configuration, body)
        return (record, steps.all)
    }

    /// The same actions at the same instants on the definition's own timeline, run by `Rehearsal.run`.
    func replayed(_ definition: ScenarioDefinition, _ steps: [(Millis, [SessionAction])]) throws -> RunRecord {
        var scripted = definition
        for (time, actions) in steps {
            for action in actions { scripted.timeline.append(.init(time: time, action: .perform(action))) }
        }
        return try Rehearsal.run(scripted, ServeConfiguration().inputs)
    }

    /// Issue 37's timeline: reimage at PT1M, an image PATCH at PT2M, a manual upgrade at PT3M,
    /// through the clock route; the served events equal the run's line for line.
    func testServedEventsEqualRunOfTheSameActionsAtTheSameInstants() async throws {
        let (record, steps, definition) = try await served(.step) { call in
            _ = try await call(.POST, "/rehearse/clock", #"{"to": "PT1M"}"#)
            let reimage = try await call(.POST, Self.scaleSet + "/reimage?api-version=2024-07-01", nil)
            XCTAssertEqual(reimage.status, 202)
            _ = try await call(.POST, "/rehearse/clock", #"{"to": "PT2M"}"#)
            let patch = try await call(.PATCH, Self.scaleSet + "?api-version=2024-07-01",
                                       #"{"properties": {"virtualMachineProfile": {"storageProfile": {"imageReference": {"version": "2.0.0"}}}}}"#)
            XCTAssertEqual(patch.status, 200)
            _ = try await call(.POST, "/rehearse/clock", #"{"to": "PT3M"}"#)
            let manual = try await call(.POST, Self.scaleSet + "/manualupgrade?api-version=2024-07-01", #"{"instanceIds": ["*"]}"#)
            XCTAssertEqual(manual.status, 202)
        }
        XCTAssertEqual(steps.map(\.0), [60_000, 120_000, 180_000])
        XCTAssertEqual(steps.map(\.1), [[.reimage(ids: nil)], [.updateModel(["imageReference.version": "2.0.0"])], [.manualUpgrade(ids: nil)]])
        let run = try replayed(definition, [(60_000, [.reimage(ids: nil)]), (120_000, [.updateModel(["imageReference.version": "2.0.0"])]),
                                            (180_000, [.manualUpgrade(ids: nil)])])
        XCTAssertGreaterThan(run.events.count, 10)
        XCTAssertEqual(record.events.map(\.jsonLine), run.events.map(\.jsonLine))
        XCTAssertEqual(record.events.first { $0.kind == .reimage }?.time, 60_000)
        XCTAssertEqual(record.events.first { $0.kind == .modelUpdated }?.time, 120_000)
    }

    /// Four clients at once in `--step` mode (each poll moves the clock): PATCHes each changing
    /// the image and the capacity, cancels, reimages and polls, 50 rounds on each of 20 servers
    /// (1,000 PATCHes). Every PATCH's model update and scaling carry one instant with nothing of
    /// another instant between them, and the served events equal `Rehearsal.run` of the actions
    /// at the instants they were performed.
    func testConcurrentPATCHesAreEachOneStepAndServedEqualsRun() async throws {
        var patches = 0, scalings = 0
        for server in 0..<20 {
            let (record, steps, definition) = try await served(.step) { call in
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for round in 0..<50 {
                        let k = server * 50 + round
                        group.addTask {
                            // A capacity of its own: every PATCH changes the capacity.
                            let body = #"{"sku": {"capacity": \#(5 + round)}, "properties": {"virtualMachineProfile": {"storageProfile": {"imageReference": {"version": "v\#(k)"}}}}}"#
                            let reply = try await call(.PATCH, Self.scaleSet + "?api-version=2024-07-01", body)
                            XCTAssertEqual(reply.status, 200, "\(String(describing: reply.body))")
                        }
                        group.addTask { _ = try await call(.GET, Self.scaleSet + "/rollingUpgrades/latest?api-version=2024-07-01", nil) }
                        if round % 5 == 0 {
                            group.addTask { _ = try await call(.POST, Self.scaleSet + "/rollingUpgrades/cancel?api-version=2024-07-01", nil) }
                        }
                        if round % 7 == 0 {
                            group.addTask { _ = try await call(.POST, Self.scaleSet + "/virtualMachines/0/reimage?api-version=2024-07-01", nil) }
                        }
                        if round % 4 == 3 { try await group.next() }
                    }
                    try await group.waitForAll()
                }
            }
            let events = record.events
            for (index, event) in events.enumerated() {
                guard case .modelUpdated(_, let changes, _, _) = event.payload, let version = changes["imageReference.version"] else { continue }
                patches += 1
                // The same PATCH's scaling comes next, unless the count of instances did not change.
                guard let scaled = events[(index + 1)...].firstIndex(where: { $0.kind == .scaled || $0.kind == .modelUpdated }),
                      events[scaled].kind == .scaled else { continue }
                scalings += 1
                XCTAssertTrue(events[index...scaled].allSatisfy { $0.time == event.time },
                              "PATCH \(version): model update at \(event.time), scaling at \(events[scaled].time)")
            }
            XCTAssertEqual(steps.filter { $0.1.count == 2 }.count, 50)
            let run = try replayed(definition, steps)
            XCTAssertEqual(events.map(\.jsonLine), run.events.map(\.jsonLine), "server \(server)")
        }
        XCTAssertEqual(patches, 1_000)
        XCTAssertGreaterThan(scalings, 500)
    }
}
