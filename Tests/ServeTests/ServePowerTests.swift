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

/// Serve's power routes (issue 39): restart, power off, deallocate and start of the scale set
/// and of one VM, each one step of the served run; the served events equal `rehearse run` of
/// the same actions at the same instants; the hostile requests answered as ARM answers them.
final class ServePowerTests: XCTestCase {
    static let scaleSet = ServeRoutesTests.scaleSet
    static let version = "?api-version=2024-07-01"
    typealias Call = ServeStepTests.Call

    /// ServeRoutesTests' scenario (4 instances, Healthy on every probe) served in `--step` mode
    /// for the length of `body`; the record, the actions performed with their instants, and the
    /// record of `Rehearsal.run` with those actions on the timeline.
    func served(_ body: (_ call: @escaping Call) async throws -> Void) async throws -> (served: RunRecord, steps: [(Millis, [SessionAction])], run: RunRecord) {
        let definition = try ServeRoutesTests.definition()
        let steps = ServeStepTests.Steps()
        var configuration = ServeConfiguration()
        configuration.port = 0
        configuration.tls = false
        configuration.mode = .step
        configuration.onPerform = { steps.add($0, $1) }
        let record = try await ServeRoutesTests.serve(definition, configuration, body)
        var scripted = definition
        for (time, actions) in steps.all {
            for action in actions { scripted.timeline.append(.init(time: time, action: .perform(action))) }
        }
        return (record, steps.all, try Rehearsal.run(scripted, ServeConfiguration().inputs))
    }

    /// The `PowerState/…` code of instance `id`'s instance view.
    static func powerState(_ call: Call, _ id: Int) async throws -> String? {
        let view = try await call(.GET, scaleSet + "/virtualMachines/\(id)/instanceView" + version, nil)
        guard case .array(let statuses)? = view.body?.field("statuses") else { return nil }
        for status in statuses {
            if case .string(let code)? = status.field("code"), code.hasPrefix("PowerState/") { return code }
        }
        return nil
    }

    func testPowerRoutesAreStepsOfTheRunWithAzuresOperationAndPowerStates() async throws {
        let (record, steps, run) = try await served { call in
            _ = try await call(.POST, "/rehearse/clock", #"{"to": "PT1M"}"#)
            let restart = try await call(.POST, Self.scaleSet + "/restart" + Self.version, #"{"instanceIds": ["1"]}"#)
            XCTAssertEqual(restart.status, 202)
            XCTAssertNil(restart.body)
            XCTAssertNotNil(restart.headers.first(name: "Location"))
            XCTAssertEqual(restart.headers.first(name: "Retry-After"), "1")
            let operation = try XCTUnwrap(restart.headers.first(name: "Azure-AsyncOperation"))
            let status = try await call(.GET, String(operation.drop { $0 != "/" }.dropFirst(2).drop { $0 != "/" }), nil)
            XCTAssertEqual(status.body?.field("status"), .string("Succeeded"))

            _ = try await call(.POST, "/rehearse/clock", #"{"to": "PT2M"}"#)
            let deallocate = try await call(.POST, Self.scaleSet + "/deallocate" + Self.version, #"{"instanceIds": ["2", "3"]}"#)
            XCTAssertEqual(deallocate.status, 202)
            let powerOff = try await call(.POST, Self.scaleSet + "/virtualMachines/0/powerOff" + Self.version, nil)
            XCTAssertEqual(powerOff.status, 202)
            let states = [try await Self.powerState(call, 0), try await Self.powerState(call, 1), try await Self.powerState(call, 2)]
            XCTAssertEqual(states, ["PowerState/stopped", "PowerState/running", "PowerState/deallocated"])
            // The scale set is not Updating because of stopped instances.
            let shown = try await call(.GET, Self.scaleSet + Self.version, nil)
            XCTAssertEqual(shown.body?.field("properties")?.field("provisioningState"), .string("Succeeded"))

            _ = try await call(.POST, "/rehearse/clock", #"{"to": "PT3M"}"#)
            let start = try await call(.POST, Self.scaleSet + "/START" + Self.version, nil)
            XCTAssertEqual(start.status, 202)
            let vmStart = try await call(.POST, Self.scaleSet + "/virtualMachines/3/start" + Self.version, nil)
            XCTAssertEqual(vmStart.status, 202)
            let third = try await Self.powerState(call, 3)
            XCTAssertEqual(third, "PowerState/running")
        }
        XCTAssertEqual(steps.map(\.0), [60_000, 120_000, 120_000, 180_000, 180_000])
        XCTAssertEqual(steps.map(\.1), [[.restart(ids: [1])], [.stop(ids: [2, 3], deallocate: true)], [.onInstance(id: 0, .stop(deallocate: false))],
                                        [.start(ids: nil)], [.onInstance(id: 3, .start)]])
        XCTAssertEqual(record.events.map(\.jsonLine), run.events.map(\.jsonLine))
        // The typed events: who each action reached (the start of "*" all three; the VM start none left).
        let reached = record.events.compactMap { event -> String? in
            switch event.payload {
            case .restart(_, let n): return "\(event.time) restart \(n)"
            case .stop(_, let deallocate, let n): return "\(event.time) \(deallocate ? "deallocate" : "stop") \(n)"
            case .start(_, let n): return "\(event.time) start \(n)"
            default: return nil
            }
        }
        XCTAssertEqual(reached, ["60000 restart 1", "120000 deallocate 2", "120000 stop 1", "180000 start 3", "180000 start 0"])
    }

    func testHostilePowerRequests() async throws {
        let (_, steps, _) = try await served { call in
            // Ids that are not instances: 404 naming the resource group, nothing done.
            for path in ["/restart", "/deallocate", "/poweroff", "/start"] {
                let reply = try await call(.POST, Self.scaleSet + path + Self.version, #"{"instanceIds": ["1", "17"]}"#)
                XCTAssertEqual(reply.status, 404, path)
                XCTAssertEqual(reply.error, "ResourceNotFound", path)
                XCTAssertTrue(reply.message?.contains("resource group 'g1'") ?? false, path)
            }
            let vm = try await call(.POST, Self.scaleSet + "/virtualMachines/17/restart" + Self.version, nil)
            XCTAssertEqual(vm.status, 404)
            XCTAssertEqual(vm.error, "ResourceNotFound")
            // Ids that are not ids, a list that is not a list: 400.
            for body in [#"{"instanceIds": ["x"]}"#, #"{"instanceIds": "1"}"#, #"{"instanceIds": [-1]}"#] {
                let reply = try await call(.POST, Self.scaleSet + "/restart" + Self.version, body)
                XCTAssertEqual(reply.status, 400, body)
                XCTAssertEqual(reply.error, "InvalidParameter", body)
            }
            // An empty list is every instance; a repeated id is one instance.
            let empty = try await call(.POST, Self.scaleSet + "/restart" + Self.version, #"{"instanceIds": []}"#)
            XCTAssertEqual(empty.status, 202)
            let twice = try await call(.POST, Self.scaleSet + "/poweroff" + Self.version, #"{"instanceIds": ["2", "2", 2]}"#)
            XCTAssertEqual(twice.status, 202)
            // A protected instance named: the engine's refusal, 409.
            _ = try await call(.PUT, Self.scaleSet + "/virtualMachines/3" + Self.version,
                               #"{"properties": {"protectionPolicy": {"protectFromScaleSetActions": true}}}"#)
            let refused = try await call(.POST, Self.scaleSet + "/deallocate" + Self.version, #"{"instanceIds": ["3"]}"#)
            XCTAssertEqual(refused.status, 409)
            XCTAssertEqual(refused.error, "OperationNotAllowed")
            // A deleted VM is gone for every power action.
            let delete = try await call(.DELETE, Self.scaleSet + "/virtualMachines/1" + Self.version, nil)
            XCTAssertEqual(delete.status, 202)
            // Being deleted, it is no instance of the scale set any more: 404, as once it is gone.
            let deleting = try await call(.POST, Self.scaleSet + "/restart" + Self.version, #"{"instanceIds": ["1"]}"#)
            XCTAssertEqual(deleting.status, 404)
            XCTAssertEqual(deleting.error, "ResourceNotFound")
            _ = try await call(.POST, "/rehearse/clock", #"{"advance": "PT30M"}"#)
            for action in ["restart", "poweroff", "deallocate", "start"] {
                let reply = try await call(.POST, Self.scaleSet + "/virtualMachines/1/\(action)" + Self.version, nil)
                XCTAssertEqual(reply.status, 404, action)
            }
            let listed = try await call(.POST, Self.scaleSet + "/start" + Self.version, #"{"instanceIds": ["1"]}"#)
            XCTAssertEqual(listed.status, 404)
        }
        // Only the accepted requests and the refused one reached the run (a 404 or 400 never does).
        XCTAssertEqual(steps.flatMap(\.1).filter { $0.name != .protect && $0.name != .deleteInstances },
                       [.restart(ids: nil), .stop(ids: [2], deallocate: false), .stop(ids: [3], deallocate: true)])
    }

    /// 40 restarts, 40 PATCHes (image and capacity) and 40 polls sent concurrently in `--step`
    /// mode (each poll moves the clock): each restart is one step of one action, each PATCH one
    /// step, and the served events equal the run of the same steps.
    func testConcurrentRestartsAndPATCHesAreOneStepEach() async throws {
        let (record, steps, run) = try await served { call in
            // Scale-in spares the four restarted instances: they exist throughout.
            for id in 0..<4 {
                let reply = try await call(.PUT, Self.scaleSet + "/virtualMachines/\(id)" + Self.version,
                                           #"{"properties": {"protectionPolicy": {"protectFromScaleIn": true}}}"#)
                XCTAssertEqual(reply.status, 200)
            }
            try await withThrowingTaskGroup(of: Void.self) { group in
                for round in 0..<40 {
                    group.addTask {
                        let reply = try await call(.POST, Self.scaleSet + "/virtualMachines/\(round % 4)/restart" + Self.version, nil)
                        XCTAssertEqual(reply.status, 202)
                    }
                    group.addTask {
                        let body = #"{"sku": {"capacity": \#(4 + round % 3)}, "properties": {"virtualMachineProfile": {"storageProfile": {"imageReference": {"version": "v\#(round)"}}}}}"#
                        let reply = try await call(.PATCH, Self.scaleSet + Self.version, body)
                        XCTAssertEqual(reply.status, 200)
                    }
                    group.addTask { _ = try await call(.GET, Self.scaleSet + "/rollingUpgrades/latest" + Self.version, nil) }
                    if round % 2 == 1 { try await group.next() }
                }
                try await group.waitForAll()
            }
        }
        let restarts = steps.filter { $0.1.contains { $0.name == .restart } }
        XCTAssertEqual(restarts.count, 40)
        XCTAssertTrue(restarts.allSatisfy { $0.1.count == 1 })
        XCTAssertEqual(steps.filter { $0.1.first?.name == .updateModel }.count, 40)
        XCTAssertEqual(record.events.filter { $0.kind == .restart }.count, 40)
        XCTAssertEqual(record.events.map(\.jsonLine), run.events.map(\.jsonLine))
    }

    /// Instance protection article: protection from scale set actions blocks the scale set's own
    /// actions, not a user's operation on the instance itself. VM 1 protected: each per-VM call
    /// (restart, deallocate, start, reimage) acts on it; the scale set's restart and start of
    /// every instance pass it over; naming it in the scale set's restart is 409.
    func testPerVMOperationsActOnAProtectedVM() async throws {
        let (record, steps, run) = try await served { call in
            let protect = try await call(.PUT, Self.scaleSet + "/virtualMachines/1" + Self.version,
                                         #"{"properties": {"protectionPolicy": {"protectFromScaleSetActions": true}}}"#)
            XCTAssertEqual(protect.status, 200)
            // (clock, path, body, status, VM 1's power state after; nil: not read)
            let calls: [(String?, String, String?, Int, String?)] = [
                ("PT1M", "/virtualMachines/1/restart", nil, 202, "PowerState/running"),
                ("PT2M", "/restart", nil, 202, nil),
                (nil, "/restart", #"{"instanceIds": ["1"]}"#, 409, nil),
                ("PT3M", "/virtualMachines/1/deallocate", nil, 202, "PowerState/deallocated"),
                ("PT4M", "/start", nil, 202, "PowerState/deallocated"),
                (nil, "/virtualMachines/1/start", nil, 202, "PowerState/running"),
                ("PT10M", "/virtualMachines/1/reimage", nil, 202, nil),
            ]
            for (clock, path, body, status, state) in calls {
                if let clock { _ = try await call(.POST, "/rehearse/clock", #"{"to": "\#(clock)"}"#) }
                let reply = try await call(.POST, Self.scaleSet + path + Self.version, body)
                XCTAssertEqual(reply.status, status, path)
                if status == 409 { XCTAssertEqual(reply.error, "OperationNotAllowed") }
                if let state {
                    let shown = try await Self.powerState(call, 1)
                    XCTAssertEqual(shown, state, path)
                }
            }
        }
        XCTAssertEqual(steps.flatMap(\.1).filter { $0.name != .protect },
                       [.onInstance(id: 1, .restart), .restart(ids: nil), .restart(ids: [1]), .onInstance(id: 1, .stop(deallocate: true)),
                        .start(ids: nil), .onInstance(id: 1, .start), .onInstance(id: 1, .reimage)])
        let reached = record.events.compactMap { event -> String? in
            switch event.payload {
            case .restart(let ids, let n): return "\(event.time) restart \(ids ?? []) \(n)"
            case .stop(let ids, _, let n): return "\(event.time) deallocate \(ids ?? []) \(n)"
            case .start(let ids, let n): return "\(event.time) start \(ids ?? []) \(n)"
            case .reimage(let ids, let n): return "\(event.time) reimage \(ids ?? []) \(n)"
            default: return nil
            }
        }
        // The scale set's restart reaches 0, 2 and 3 (3 of 4); its start finds nothing off but 1, spared.
        XCTAssertEqual(reached, ["60000 restart [1] 1", "120000 restart [] 3", "180000 deallocate [1] 1",
                                 "240000 start [] 0", "240000 start [1] 1", "600000 reimage [1] 1"])
        XCTAssertEqual(record.events.map(\.jsonLine), run.events.map(\.jsonLine))
    }
}
