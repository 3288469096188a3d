import AzureWire
import Foundation
import Formats
import HTTPTypes
import NIOHTTP1
@testable import Serve
import Scenario
import UpgradeEngine
import XCTest

/// The served clock a pipeline can use (issues 54 class 4 and 58): bounded with checked
/// arithmetic, never moved by a read past an Active hook event's `waitUntil`, not stepped by the
/// poll of an operation that is already done, and its instants anchored where the server says.
final class ServedClockTests: XCTestCase {
    static let scaleSet = ServeRoutesTests.scaleSet
    static let hookEvents = LifecycleHookServeTests.events
    /// The longest advance the clock route reads: 10^12 s.
    static let longest = "PT1000000000000S"

    /// 10,000 maximal advances after the clock reached its bound: each is refused (400 naming the
    /// bound, the clock left at 10^15 ms), in both clocks. The old served run added each to its
    /// shift whatever the session did with it: 2^63 / 10^15 ≈ 9,223 advances overflowed (SIGILL).
    func testTenThousandMaximalAdvancesAreRefusedNeverTrapped() async throws {
        for mode in [ClockMode.step, .speed(60)] {
            let run = try ServedRun(try ServeRoutesTests.definition(), RunInputs(), mode: mode)
            try await run.advance(by: ISODuration.longest - 1)
            var refused = 0
            for _ in 0..<10_000 {
                do {
                    try await run.advance(by: ISODuration.longest)
                } catch {
                    XCTAssertEqual(error.status, .badRequest)
                    XCTAssertEqual(error.code, "InvalidParameter")
                    XCTAssertEqual(error.target, "advance")
                    refused += 1
                }
            }
            XCTAssertEqual(refused, 10_000, "\(mode)")
            let now = await run.now
            guard mode == .step else {
                // At speed 60 the real seconds the loop took ran the clock on to the bound, where it stays.
                XCTAssertEqual(now, ISODuration.longest)
                continue
            }
            XCTAssertEqual(now, ISODuration.longest - 1)
            // The one millisecond left is still allowed, and then nothing more.
            try await run.advance(by: 1)
            let last = await run.now
            XCTAssertEqual(last, ISODuration.longest)
        }
    }

    /// Over HTTP: the first maximal advance reaches the bound; the next two are 400 naming it
    /// (P11574074DT1H46M40S, 10^12 s), and the clock stays at 10^15 ms.
    func testAnAdvancePastTheBoundIsARMs400AndTheClockStays() async throws {
        _ = try await ServeStepTests.served(try ServeRoutesTests.definition(), .step) { call in
            let first = try await call(.POST, "/rehearse/clock", #"{"advance": "\#(Self.longest)"}"#)
            XCTAssertEqual(first.status, 200)
            XCTAssertEqual(first.body?.field("now"), .int(ISODuration.longest))
            for _ in 0..<2 {
                let past = try await call(.POST, "/rehearse/clock", #"{"advance": "PT1S"}"#)
                XCTAssertEqual(past.status, 400)
                XCTAssertEqual(past.error, "InvalidParameter")
                XCTAssertTrue(past.message?.contains(ISODuration.format(ISODuration.longest)) ?? false, past.message ?? "")
            }
            let clock = try await call(.GET, "/rehearse/clock", nil)
            XCTAssertEqual(clock.body?.field("now"), .int(ISODuration.longest))
        }
    }

    /// The hook fleet of LifecycleHookServeTests with a batch hook that rejects by default after
    /// 30 minutes.
    static func rejectingFleet() -> ScenarioDefinition {
        LifecycleHookServeTests.definition(hooked: false, scheduling: LifecycleHook(type: .upgradeAutoOSRollingBatchStarting,
                                                                                     waitDuration: 1_800_000, defaultAction: .reject))
    }

    static func clock(_ call: ServeStepTests.Call) async throws -> Millis {
        guard case .int(let now)? = try await call(.GET, "/rehearse/clock", nil).body?.field("now") else { throw CocoaError(.coderValueNotFound) }
        return now
    }

    /// In --step, 40 reads (get-latest, the OS upgrade history, the event list) while a batch
    /// event is Active leave it Active and the clock where it stood (the run waits for the answer); the pipeline's
    /// approval then decides it (Approved, no default Reject). The old get-latest stepped to the
    /// event's waitUntil and the default Reject fired before the pipeline listed the event.
    func testReadsInStepModeNeverReachAnActiveEventsWaitUntil() async throws {
        let (record, _) = try await ServeStepTests.served(Self.rejectingFleet(), .step) { call in
            let active = try await LifecycleHookServeTests.nextActive(call)
            let event = try XCTUnwrap(active)
            let waitUntil = try XCTUnwrap(LifecycleHookServeTests.instant(event, "waitUntil"))
            let raised = try await Self.clock(call)
            for round in 0..<40 {
                let path = ["/rollingUpgrades/latest", "/osUpgradeHistory", "/lifecycleHookEvents"][round % 3]
                let read = try await call(.GET, LifecycleHookServeTests.scaleSet + path + "?api-version=2025-11-01", nil)
                XCTAssertEqual(read.status, 200, path)
            }
            let now = try await Self.clock(call)
            XCTAssertEqual(now, raised)
            XCTAssertLessThan(now, waitUntil)
            let name = LifecycleHookServeTests.name(event)
            let shown = try await call(.GET, Self.hookEvents + "/\(name)?" + LifecycleHookServeTests.v2025, nil)
            XCTAssertEqual(shown.body?.field("properties")?.field("state"), .string("Active"))
            let targets = LifecycleHookServeTests.targets(event).map { ($0.0, "Approved") }
            let patch = try await call(.PATCH, Self.hookEvents + "/\(name)?" + LifecycleHookServeTests.v2025, LifecycleHookServeTests.answers(targets))
            XCTAssertEqual(patch.status, 200)
            XCTAssertEqual(patch.body?.field("properties")?.field("state"), .string("Completed"))
        }
        let first = try XCTUnwrap(record.events.first { if case .hookCompleted = $0.payload { true } else { false } })
        guard case .hookCompleted(let outcome) = first.payload else { return XCTFail("no completion") }
        XCTAssertEqual(outcome.approved, 2)
        XCTAssertEqual(outcome.defaulted, 0)
        XCTAssertEqual(outcome.rejected, 0)
    }

    /// `az vmss lifecycle-hook remove` while a batch event is Active: its PUT is done when it is
    /// accepted, and polling that operation (az and the SDK poll after every mutating call) leaves
    /// the clock where it was, the event still Active. The old poll stepped the run to its next
    /// event, the default Reject at waitUntil (PT1M → PT3H1M in the issue's pipeline).
    func testPollingAFinishedOperationDoesNotStepTheClock() async throws {
        _ = try await ServeStepTests.served(Self.rejectingFleet(), .step) { call in
            let active = try await LifecycleHookServeTests.nextActive(call)
            let event = try XCTUnwrap(active)
            let before = try await Self.clock(call)
            let patch = try await call(.PATCH, LifecycleHookServeTests.scaleSet + "?api-version=2026-04-01",
                                       #"{"properties": {"lifecycleHooksProfile": {"lifecycleHooks": []}}}"#)
            XCTAssertEqual(patch.status, 200)
            let operation = try XCTUnwrap(patch.headers.first(name: "Azure-AsyncOperation"))
            let path = String(operation.drop { $0 != "/" }.dropFirst(2).drop { $0 != "/" })
            for _ in 0..<3 {
                let status = try await call(.GET, path, nil)
                XCTAssertEqual(status.body?.field("status"), .string("Succeeded"))
            }
            let after = try await Self.clock(call)
            XCTAssertEqual(after, before)
            let name = LifecycleHookServeTests.name(event)
            let shown = try await call(.GET, Self.hookEvents + "/\(name)?" + LifecycleHookServeTests.v2025, nil)
            XCTAssertEqual(shown.body?.field("properties")?.field("state"), .string("Active"))
        }
    }

    /// Served instants count from the epoch the server is given: the clock's timestamp at 0 ms
    /// and an event's timeCreated are instants after it, so a pipeline's own wall-clock
    /// `waitUntil` (epoch + 20 minutes after the event) is taken.
    func testServedTimesCountFromTheGivenEpoch() async throws {
        let epoch = 1_795_719_600  // 2026-11-26T19:00:00Z
        var configuration = ServeConfiguration()
        configuration.port = 0
        configuration.tls = false
        configuration.mode = .step
        configuration.epoch = epoch
        _ = try await ServeRoutesTests.serve(LifecycleHookServeTests.definition(hooked: true), configuration) { call in
            let clock = try await call(.GET, "/rehearse/clock", nil)
            XCTAssertEqual(clock.body?.field("timestamp"), .string("2026-11-26T19:00:00.0000000+00:00"))
            let active = try await LifecycleHookServeTests.nextActive(call)
            let event = try XCTUnwrap(active)
            guard case .string(let created)? = event.field("properties")?.field("timeCreated") else { return XCTFail("no timeCreated") }
            let createdMs = try XCTUnwrap(LifecycleHooksWire.instant(created, epoch: epoch))
            XCTAssertEqual(try XCTUnwrap(LifecycleHooksWire.instant(created, epoch: 0)), createdMs + Millis(epoch) * 1000)
            XCTAssertTrue(created.hasPrefix("2026-11-26T"), created)
            let until = Timestamp.format(createdMs + 1_200_000, epoch: epoch)
            let name = LifecycleHookServeTests.name(event)
            let patch = try await call(.PATCH, Self.hookEvents + "/\(name)?" + LifecycleHookServeTests.v2025,
                                       #"{"properties": {"waitUntil": "\#(until)"}}"#)
            XCTAssertEqual(patch.status, 200)
            XCTAssertEqual(patch.body?.field("properties")?.field("waitUntil"), .string(until))
        }
    }
}
