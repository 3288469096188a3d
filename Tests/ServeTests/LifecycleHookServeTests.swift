import AsyncHTTPClient
import AzureWire
import Foundation
import Formats
import LuaHost
import NIOHTTP1
import Reports
import Scenario
import Serve
import UpgradeEngine
import XCTest

/// Lifecycle hook events over HTTP (SPEC §6b; the 2025-11-01 List/Get/Update examples): LIST with
/// `$filter`, GET and PATCH of `lifecycleHookEvents/{name}`, answered as one step of the run.
///
/// The fleet, worked by hand: 10 instances, automatic OS image upgrades with the default policy
/// (20/20/20, no pause): 2 instances per batch, 5 batches; the image is released at 1 min; the
/// batch hook waits PT30M (maxWaitUntil 4 h after it is raised) and approves by default.
final class LifecycleHookServeTests: XCTestCase {
    static let scaleSet = "/subscriptions/s1/resourceGroups/g1/providers/Microsoft.Compute/virtualMachineScaleSets/batchjobs"
    static let events = scaleSet + "/lifecycleHookEvents"
    static let v2025 = "api-version=2025-11-01"
    static let twelveMinutes: Millis = 720_000

    /// The fleet above; `hooked`: with the batch hook.
    static func definition(hooked: Bool, scheduling: LifecycleHook? = nil) -> ScenarioDefinition {
        var scaleSet = ScaleSetDefinition(name: "batchjobs", capacity: 10)
        scaleSet.model = ["image": "2026.01.01"]
        scaleSet.policy.mode = .manual
        scaleSet.policy.automaticOS.enableAutomaticOSUpgrade = true
        scaleSet.healthExtension = HealthExtensionSettings(protocol: .http, port: 8000, requestPath: "/health")
        if hooked { scaleSet.lifecycleHooks = [LifecycleHook(type: .upgradeAutoOSRollingBatchStarting, waitDuration: 1_800_000, defaultAction: .approve)] }
        if let scheduling { scaleSet.lifecycleHooks = [scheduling] }
        return ScenarioDefinition(path: "hooks (served)", scaleSet: scaleSet, behaviour: .swift(SwiftBehaviours { _ in Behaviours() }),
                                  timeline: [.init(time: 60_000, action: .perform(.releaseImage(version: "2026.02.01")))])
    }

    /// A shipped scenario of scripts/.
    static func shipped(_ name: String) throws -> ScenarioDefinition {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        var options = ScenarioOptions()
        options.environment = [:]
        options.print = { _ in }
        return try ScenarioDefinition(luaScript: root.appendingPathComponent("scripts/\(name)").path, options: options)
    }

    typealias Call = @Sendable (HTTPMethod, String, String?) async throws -> ServeRoutesTests.Reply

    /// Serves `definition` (in step mode unless `mode` says otherwise) for the length of `body`.
    func served(_ definition: ScenarioDefinition, mode: ClockMode = .step,
                _ body: (_ call: @escaping Call) async throws -> Void) async throws -> (RunRecord, [(Millis, [SessionAction])]) {
        try await ServeStepTests.served(definition, mode, body)
    }

    /// LISTs the Active events until one is there (a LIST with none Active is a poll: the run steps
    /// to its next event); nil when the run ends first.
    static func nextActive(_ call: Call) async throws -> JSON? {
        for _ in 0..<2_000 {
            let list = try await call(.GET, Self.events + "?" + Self.v2025 + "&$filter=properties/state%20eq%20'Active'", nil)
            XCTAssertEqual(list.status, 200)
            guard case .array(let events)? = list.body?.field("value") else { XCTFail("no value"); return nil }
            if let first = events.first { return first }
            let clock = try await call(.GET, "/rehearse/clock", nil)
            if clock.body?.field("nextEvent") == .null { return nil }
        }
        return nil
    }

    static func name(_ event: JSON) -> String {
        if case .string(let text)? = event.field("name") { return text }
        return ""
    }

    /// `properties.<field>` as an instant on the virtual clock (ms).
    static func instant(_ event: JSON, _ field: String) -> Millis? {
        guard case .string(let text)? = event.field("properties")?.field(field) else { return nil }
        return LifecycleHooksWire.instant(text)
    }

    /// The target ids (last segment of each `resource.id`) and their action states.
    static func targets(_ event: JSON) -> [(String, String)] {
        guard case .array(let list)? = event.field("properties")?.field("targetResources") else { return [] }
        return list.compactMap { item in
            guard case .string(let id)? = item.field("resource")?.field("id"), case .string(let state)? = item.field("actionState") else { return nil }
            return (String(id.split(separator: "/").last ?? ""), state)
        }
    }

    /// A PATCH body answering each `(instance, state)`.
    static func answers(_ pairs: [(String, String)]) -> String {
        let items = pairs.map { #"{"resource": {"id": "\#(scaleSet)/virtualMachines/\#($0.0)"}, "actionState": "\#($0.1)"}"# }
        return #"{"properties": {"targetResources": [\#(items.joined(separator: ", "))]}}"#
    }

    static func batchStarts(_ record: RunRecord) -> [Millis] { record.events.compactMap { $0.kind == .batchStarted ? $0.time : nil } }

    // MARK: Approvals

    /// The team's automation approves each batch 12 minutes after its event is raised, by PATCH:
    /// batch k starts 12 × k minutes later than without the hook (720 s is a whole number of 5 s
    /// probe intervals), the upgrade ends 5 × 12 = 60 minutes later, and the served events equal
    /// `Rehearsal.run` of the same answers at the same instants.
    func testApprovingEachBatchAtTwelveMinutesStartsItTwelveMinutesLater() async throws {
        var raised: [Millis] = []
        let (record, steps) = try await served(Self.definition(hooked: true)) { call in
            for batch in 1...5 {
                let active = try await Self.nextActive(call)
                let event = try XCTUnwrap(active, "no event for batch \(batch)")
                XCTAssertEqual(event.field("type"), .string("Microsoft.Compute/virtualMachineScaleSets/lifecycleHookEvents"))
                XCTAssertEqual(event.field("properties")?.field("type"), .string("UpgradeAutoOSRollingBatchStarting"))
                XCTAssertEqual(event.field("properties")?.field("state"), .string("Active"))
                XCTAssertEqual(event.field("properties")?.field("defaultAction"), .string("Approve"))
                let created = try XCTUnwrap(Self.instant(event, "timeCreated"))
                raised.append(created)
                XCTAssertEqual(Self.instant(event, "waitUntil"), created + 1_800_000)
                XCTAssertEqual(Self.instant(event, "maxWaitUntil"), created + 14_400_000)
                let targets = Self.targets(event)
                XCTAssertEqual(targets.count, 2)
                XCTAssertTrue(targets.allSatisfy { $0.1 == "Waiting" })
                _ = try await call(.POST, "/rehearse/clock", #"{"to": "\#(ISODuration.format(created + Self.twelveMinutes))"}"#)
                let patch = try await call(.PATCH, Self.events + "/\(Self.name(event))?" + Self.v2025, Self.answers(targets.map { ($0.0, "Approved") }))
                XCTAssertEqual(patch.status, 200, "\(String(describing: patch.body))")
                XCTAssertEqual(patch.body?.field("properties")?.field("state"), .string("Completed"))
                XCTAssertEqual(Self.targets(try XCTUnwrap(patch.body)).map(\.1), ["Approved", "Approved"])
                let shown = try await call(.GET, Self.events + "/\(Self.name(event))?" + Self.v2025, nil)
                XCTAssertEqual(shown.body?.field("properties")?.field("state"), .string("Completed"))
            }
            let none = try await Self.nextActive(call)
            XCTAssertNil(none)
            let all = try await call(.GET, Self.events + "?" + Self.v2025, nil)
            guard case .array(let every)? = all.body?.field("value") else { return XCTFail("no list") }
            XCTAssertEqual(every.count, 5)
            XCTAssertEqual(all.body?.member("nextLink"), .null)
        }
        let plain = try Rehearsal.run(Self.definition(hooked: false), ServeConfiguration().inputs)
        XCTAssertEqual(record.summary.status?.code, .completed)
        XCTAssertEqual(record.summary.status?.progress.successfulInstanceCount, 10)
        XCTAssertEqual(raised.first, 60_000)
        XCTAssertEqual(zip(Self.batchStarts(record), Self.batchStarts(plain)).map { $0 - $1 }, (1...5).map { Millis($0) * Self.twelveMinutes })
        XCTAssertEqual(try XCTUnwrap(record.summary.upgradeEnded) - (try XCTUnwrap(plain.summary.upgradeEnded)), 3_600_000)
        XCTAssertEqual(record.summary.hooks.batchWaits, Array(repeating: Self.twelveMinutes, count: 5))
        XCTAssertEqual(record.summary.hooks.defaultedEvents, 0)
        // Five PATCHes, each one step: the answer action at 12 min after its event.
        XCTAssertEqual(steps.map(\.0), raised.map { $0 + Self.twelveMinutes })
        XCTAssertTrue(steps.allSatisfy { $0.1.count == 1 && $0.1[0].name == .answerHook })
        var replay = Self.definition(hooked: true)
        for (time, actions) in steps { for action in actions { replay.timeline.append(.init(time: time, action: .perform(action))) } }
        let run = try Rehearsal.run(replay, ServeConfiguration().inputs)
        XCTAssertEqual(record.events.map(\.jsonLine), run.events.map(\.jsonLine))
    }

    /// Rejecting instance 3 (its batch's other instance approved) leaves it on the old image with
    /// the hook as its reason: 9 upgraded, 3 skipped, and the VM shows latestModelApplied false.
    func testRejectingInstanceThreeLeavesItOnTheOldImage() async throws {
        let (record, _) = try await served(Self.definition(hooked: true)) { call in
            while let event = try await Self.nextActive(call) {
                let answers = Self.targets(event).map { ($0.0, $0.0 == "3" ? "Rejected" : "Approved") }
                let patch = try await call(.PATCH, Self.events + "/\(Self.name(event))?" + Self.v2025, Self.answers(answers))
                XCTAssertEqual(patch.status, 200)
                XCTAssertEqual(Self.targets(try XCTUnwrap(patch.body)).map(\.1), answers.map(\.1))
            }
            let three = try await call(.GET, Self.scaleSet + "/virtualMachines/3?" + Self.v2025, nil)
            XCTAssertEqual(three.body?.field("properties")?.field("latestModelApplied"), .bool(false))
            let two = try await call(.GET, Self.scaleSet + "/virtualMachines/2?" + Self.v2025, nil)
            XCTAssertEqual(two.body?.field("properties")?.field("latestModelApplied"), .bool(true))
        }
        XCTAssertEqual(record.summary.status?.code, .completed)
        XCTAssertEqual(record.summary.status?.progress.successfulInstanceCount, 9)
        XCTAssertEqual(record.summary.hooks.rejected, [3])
        XCTAssertEqual(record.instances.first { $0.id == 3 }?.leftBehind, .rejectedByHook)
        XCTAssertEqual(record.instances.filter { $0.modelVersion == 2 }.map(\.id), [0, 1, 2, 4, 5, 6, 7, 8, 9])
    }

    /// A pipeline that GETs the event, approves its first target and PATCHes the whole resource
    /// back (read-only members, the other target still Waiting) answers that one target; the same
    /// body claiming the event is Completed is 400 naming `properties.state`, and changes nothing.
    func testTheEventSentBackAsReadAnswersOnlyWhatChanged() async throws {
        let (_, steps) = try await served(Self.definition(hooked: true)) { call in
            let active = try await Self.nextActive(call)
            let event = try XCTUnwrap(active)
            let path = Self.events + "/\(Self.name(event))?" + Self.v2025
            guard case .object(var resource) = event, case .object(var properties)? = resource["properties"],
                  case .array(var targets)? = properties["targetResources"], case .object(var first) = targets[0] else { return XCTFail("not an event") }
            first["actionState"] = .string("Approved")
            targets[0] = .object(first)
            properties["targetResources"] = .array(targets)
            properties["state"] = .string("Completed")
            resource["properties"] = .object(properties)
            let claimed = try await call(.PATCH, path, JSON.object(resource).serialized(pretty: false))
            XCTAssertEqual(claimed.status, 400)
            XCTAssertEqual(claimed.body?.field("error")?.field("target"), .string("properties.state"))
            properties["state"] = .string("Active")
            resource["properties"] = .object(properties)
            let patch = try await call(.PATCH, path, JSON.object(resource).serialized(pretty: false))
            XCTAssertEqual(patch.status, 200)
            XCTAssertEqual(Self.targets(try XCTUnwrap(patch.body)).map(\.1), ["Approved", "Waiting"])
        }
        // The refused PATCH was no step; the good one was one answer step.
        XCTAssertEqual(steps.flatMap(\.1).filter { $0.name == .answerHook }.count, 1)
    }

    /// A PATCH of `waitUntil` alone (az vmss lifecycle-hook-event update --wait-until) moves the
    /// deadline: nobody answers, so at timeCreated + 45 min both targets get the default
    /// (Approve) and the first batch starts then: 1 min + 45 min.
    func testMovingWaitUntilDelaysTheDefaultAction() async throws {
        let (record, _) = try await served(Self.definition(hooked: true)) { call in
            let active = try await Self.nextActive(call)
            let event = try XCTUnwrap(active)
            let created = try XCTUnwrap(Self.instant(event, "timeCreated"))
            let until = Timestamp.format(created + 2_700_000)
            let patch = try await call(.PATCH, Self.events + "/\(Self.name(event))?" + Self.v2025, #"{"properties": {"waitUntil": "\#(until)"}}"#)
            XCTAssertEqual(patch.status, 200)
            XCTAssertEqual(Self.instant(try XCTUnwrap(patch.body), "waitUntil"), created + 2_700_000)
            XCTAssertEqual(patch.body?.field("properties")?.field("state"), .string("Active"))
            _ = try await call(.POST, "/rehearse/clock", #"{"advance": "PT46M"}"#)
            let shown = try await call(.GET, Self.events + "/\(Self.name(event))?" + Self.v2025, nil)
            XCTAssertEqual(shown.body?.field("properties")?.field("state"), .string("Completed"))
            XCTAssertEqual(Self.targets(try XCTUnwrap(shown.body)).map(\.1), ["Approved", "Approved"])
        }
        let first = try XCTUnwrap(record.events.first { if case .hookCompleted = $0.payload { true } else { false } })
        guard case .hookCompleted(let outcome) = first.payload else { return XCTFail("no completion") }
        XCTAssertEqual(outcome.defaulted, 2)
        XCTAssertEqual(outcome.waited, 2_700_000)
        XCTAssertEqual(Self.batchStarts(record).first, 60_000 + 2_700_000)
    }

    /// An `UpgradeAutoOSScheduling` event's one target is the scale set: a PATCH rejecting it (by
    /// the scale set's id) completes the event and no upgrade is scheduled; every instance stays on
    /// the first model. An instance id as its target is refused.
    func testRejectingTheSchedulingEventSchedulesNoUpgrade() async throws {
        let hook = LifecycleHook(type: .upgradeAutoOSScheduling, waitDuration: 3_600_000, defaultAction: .approve)
        let (record, _) = try await served(Self.definition(hooked: false, scheduling: hook)) { call in
            let active = try await Self.nextActive(call)
            let event = try XCTUnwrap(active)
            XCTAssertEqual(event.field("properties")?.field("type"), .string("UpgradeAutoOSScheduling"))
            guard case .array(let targets)? = event.field("properties")?.field("targetResources") else { return XCTFail("no targets") }
            XCTAssertEqual(targets.map { $0.field("resource")?.field("id") }, [.string(Self.scaleSet)])
            let path = Self.events + "/\(Self.name(event))?" + Self.v2025
            let wrong = try await call(.PATCH, path, Self.answers([("0", "Rejected")]))
            XCTAssertEqual(wrong.status, 400)
            XCTAssertEqual(wrong.body?.field("error")?.field("target"), .string("properties.targetResources[0].resource.id"))
            let body = #"{"properties": {"targetResources": [{"resource": {"id": "\#(Self.scaleSet)"}, "actionState": "Rejected"}]}}"#
            let reject = try await call(.PATCH, path, body)
            XCTAssertEqual(reject.status, 200)
            XCTAssertEqual(reject.body?.field("properties")?.field("state"), .string("Completed"))
            _ = try await call(.POST, "/rehearse/clock", #"{"advance": "PT6H"}"#)
            let list = try await call(.GET, Self.events + "?" + Self.v2025, nil)
            guard case .array(let all)? = list.body?.field("value") else { return XCTFail("no list") }
            XCTAssertEqual(all.map { $0.field("properties")?.field("state") }, [.string("Completed")])
        }
        XCTAssertEqual(record.summary.hooks.rejectedSchedules, 1)
        XCTAssertNil(record.summary.status)
        XCTAssertTrue(record.instances.allSatisfy { $0.modelVersion == 1 })
    }

    // MARK: Hostile requests

    /// Every bad PATCH is refused whole with the field named and changes nothing; an unknown event
    /// is 404 ResourceNotFound, another `$filter` 400, a Completed event 409 OperationNotAllowed.
    func testBadRequestsAreRefusedAndChangeNothing() async throws {
        let (_, steps) = try await served(Self.definition(hooked: true)) { call in
            let active = try await Self.nextActive(call)
            let event = try XCTUnwrap(active)
            let path = Self.events + "/\(Self.name(event))?" + Self.v2025
            let targets = Self.targets(event)
            let created = try XCTUnwrap(Self.instant(event, "timeCreated"))
            let refusals: [(String?, Int, String, String?)] = [
                (Self.answers([(targets[0].0, "Maybe")]), 400, "InvalidParameter", "properties.targetResources[0].actionState"),
                (#"{"properties": {"waitUntil": "tomorrow"}}"#, 400, "InvalidParameter", "properties.waitUntil"),
                // maxWaitUntil is 4 h after creation: one second past it is refused.
                (#"{"properties": {"waitUntil": "\#(Timestamp.format(created + 14_401_000))"}}"#, 400, "InvalidParameter", "properties.waitUntil"),
                (Self.answers([("7", "Approved")]), 400, "InvalidParameter", "properties.targetResources"),
                (#"{"properties": {"targetResources": [], "colour": "red"}}"#, 400, "InvalidParameter", "properties.colour"),
                (nil, 400, "InvalidRequestContent", nil),
            ]
            for (body, status, code, target) in refusals {
                let reply = try await call(.PATCH, path, body)
                XCTAssertEqual(reply.status, status, body ?? "no body")
                XCTAssertEqual(reply.error, code, body ?? "no body")
                if let target { XCTAssertEqual(reply.body?.field("error")?.field("target"), .string(target), body ?? "") }
            }
            let unchanged = try await call(.GET, path, nil)
            XCTAssertEqual(Self.targets(try XCTUnwrap(unchanged.body)).map(\.1), ["Waiting", "Waiting"])
            XCTAssertEqual(Self.instant(try XCTUnwrap(unchanged.body), "waitUntil"), created + 1_800_000)

            let missing = try await call(.GET, Self.events + "/00000000-0000-4000-8000-000000000099?" + Self.v2025, nil)
            XCTAssertEqual(missing.status, 404)
            XCTAssertEqual(missing.error, "ResourceNotFound")
            let missingPatch = try await call(.PATCH, Self.events + "/nope?" + Self.v2025, Self.answers([("0", "Approved")]))
            XCTAssertEqual(missingPatch.status, 404)
            let filter = try await call(.GET, Self.events + "?" + Self.v2025 + "&$filter=properties/state%20eq%20'Completed'", nil)
            XCTAssertEqual(filter.status, 400)
            XCTAssertEqual(filter.body?.field("error")?.field("target"), .string("$filter"))

            let approve = try await call(.PATCH, path, Self.answers(targets.map { ($0.0, "Approved") }))
            XCTAssertEqual(approve.status, 200)
            let again = try await call(.PATCH, path, Self.answers(targets.map { ($0.0, "Rejected") }))
            XCTAssertEqual(again.status, 409)
            XCTAssertEqual(again.error, "OperationNotAllowed")
            // A body wrong in any state is 400 for a Completed event too.
            let bogus = try await call(.PATCH, path, Self.answers(targets.map { ($0.0, "Bogus") }))
            XCTAssertEqual(bogus.status, 400)
            XCTAssertEqual(bogus.error, "InvalidParameter")
            let after = try await call(.GET, path, nil)
            XCTAssertEqual(Self.targets(try XCTUnwrap(after.body)).map(\.1), ["Approved", "Approved"])
        }
        // Only the one good PATCH reached the run.
        XCTAssertEqual(steps.count, 1)
    }

    // MARK: The scale set's lifecycleHooksProfile

    /// A PATCH of `properties.lifecycleHooksProfile` (what `az vmss lifecycle-hook add` sends) is
    /// `set_lifecycle_hooks`: the GET shows the profile, the next event uses it (PT20M, Reject by
    /// default: every batch is rejected at 20 minutes and passed over), and the served events
    /// equal `Rehearsal.run` of the same action at the same instant. Bad profiles are 400.
    func testAPATCHOfTheLifecycleHooksProfileSetsTheHooks() async throws {
        let profile = #"{"properties": {"lifecycleHooksProfile": {"lifecycleHooks": [{"type": "UpgradeAutoOSRollingBatchStarting", "waitDuration": "PT20M", "defaultAction": "Reject"}]}}}"#
        let (record, steps) = try await served(Self.definition(hooked: false)) { call in
            let before = try await call(.GET, Self.scaleSet + "?" + Self.v2025, nil)
            XCTAssertNil(before.body?.field("properties")?.field("lifecycleHooksProfile"))
            let long = try await call(.PATCH, Self.scaleSet + "?" + Self.v2025, profile.replacingOccurrences(of: "PT20M", with: "PT5H"))
            XCTAssertEqual(long.status, 400)
            XCTAssertEqual(long.body?.field("error")?.field("target"), .string("properties.lifecycleHooksProfile.lifecycleHooks[0].waitDuration"))
            let unknown = try await call(.PATCH, Self.scaleSet + "?" + Self.v2025, profile.replacingOccurrences(of: "UpgradeAutoOSRollingBatchStarting", with: "Nope"))
            XCTAssertEqual(unknown.status, 400)
            let patch = try await call(.PATCH, Self.scaleSet + "?" + Self.v2025, profile)
            XCTAssertEqual(patch.status, 200)
            guard case .array(let hooks)? = patch.body?.field("properties")?.field("lifecycleHooksProfile")?.field("lifecycleHooks") else {
                return XCTFail("no profile")
            }
            XCTAssertEqual(hooks.map { $0.field("waitDuration") }, [.string("PT20M")])
            // The same profile again changes nothing: no second action.
            let same = try await call(.PATCH, Self.scaleSet + "?" + Self.v2025, profile)
            XCTAssertEqual(same.status, 200)
            let active = try await Self.nextActive(call)
            let event = try XCTUnwrap(active)
            let created = try XCTUnwrap(Self.instant(event, "timeCreated"))
            XCTAssertEqual(Self.instant(event, "waitUntil"), created + 1_200_000)
            XCTAssertEqual(event.field("properties")?.field("defaultAction"), .string("Reject"))
        }
        let hook = LifecycleHook(type: .upgradeAutoOSRollingBatchStarting, waitDuration: 1_200_000, defaultAction: .reject)
        // The second PATCH is a step with no action (as any PATCH that changes nothing).
        XCTAssertEqual(steps.map(\.1), [[.setLifecycleHooks([hook])], []])
        XCTAssertEqual(record.summary.hooks.defaultedTargets, 10)
        XCTAssertTrue(record.instances.allSatisfy { $0.modelVersion == 1 })
        var replay = Self.definition(hooked: false)
        replay.timeline.append(.init(time: steps[0].0, action: .perform(.setLifecycleHooks([hook]))))
        let run = try Rehearsal.run(replay, ServeConfiguration().inputs)
        XCTAssertEqual(record.events.map(\.jsonLine), run.events.map(\.jsonLine))
    }

    /// Lua's `set_lifecycle_hooks` reads the profile's shape; a bad hook stops the script with the field named.
    func testSetLifecycleHooksFromLua() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("hooks-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        func run(_ hooks: String) throws -> RunRecord {
            let path = dir.appendingPathComponent("scenario.lua").path
            try ActionPathsTests.script(#"at("PT1M", function() set_lifecycle_hooks(\#(hooks)) end)"#).write(toFile: path, atomically: true, encoding: .utf8)
            var options = ScenarioOptions()
            options.environment = [:]
            options.print = { _ in }
            return try Rehearsal.run(try ScenarioDefinition(luaScript: path, options: options), ServeConfiguration().inputs)
        }
        XCTAssertEqual(try run(#"{ { type = "UpgradeAutoOSScheduling", waitDuration = "PT2H", defaultAction = "Approve" } }"#).summary.status?.code, .completed)
        XCTAssertEqual(try run("{}").summary.status?.code, .completed)
        XCTAssertThrowsError(try run(#"{ { type = "UpgradeAutoOSScheduling", waitDuration = "PT3D" } }"#)) { error in
            guard let failure = error as? RunFailure, case .script(let lua, _) = failure.error, case .invalid(let problems)? = lua.refusal else {
                return XCTFail("\(error)")
            }
            XCTAssertEqual(problems.map(\.field), ["set_lifecycle_hooks.lifecycleHooks[0].waitDuration"])
        }
        XCTAssertThrowsError(try run("42"))
    }

    // MARK: RollingBack by api-version

    /// While failed instances roll back (scripts/post-batch-rollback.lua), get-latest says
    /// RollingBack to api-versions 2026-04-01 and 2026-09-01 and RollingForward to 2024-07-01,
    /// 2025-11-01 and 2026-03-01 (SPEC §6c, correcting §6b's 2026-09-01). The clock stands still but for the clock route (speed 0), so every read sees one
    /// instant: halfway between the first rollback and the fault, as `Rehearsal.run` places them.
    func testRollingBackIsAnsweredFromApiVersion20260401On() async throws {
        let definition = try Self.shipped("post-batch-rollback.lua")
        let alone = try Rehearsal.run(definition, ServeConfiguration().inputs)
        let rollback = try XCTUnwrap(alone.events.first { if case .rollbackStarted = $0.payload { true } else { false } }).time
        let fault = try XCTUnwrap(alone.summary.upgradeEnded)
        XCTAssertGreaterThan(fault - rollback, 2_000)
        let halfway = (rollback + fault) / 2 / 1000 * 1000
        let latest = "/subscriptions/s1/resourceGroups/g1/providers/Microsoft.Compute/virtualMachineScaleSets/web/rollingUpgrades/latest?api-version="
        func code(_ reply: ServeRoutesTests.Reply) -> JSON? { reply.body?.field("properties")?.field("runningStatus")?.field("code") }
        let (record, _) = try await served(definition, mode: .speed(0)) { call in
            _ = try await call(.POST, "/rehearse/clock", #"{"to": "\#(ISODuration.format(halfway))"}"#)
            let new = try await call(.GET, latest + "2026-09-01", nil), old = try await call(.GET, latest + "2024-07-01", nil)
            let hooks = try await call(.GET, latest + "2025-11-01", nil), april = try await call(.GET, latest + "2026-04-01", nil)
            let march = try await call(.GET, latest + "2026-03-01", nil)
            XCTAssertEqual(code(new), .string("RollingBack"))
            XCTAssertEqual(code(old), .string("RollingForward"))
            XCTAssertEqual(code(hooks), .string("RollingForward"))
            XCTAssertEqual(code(april), .string("RollingBack"))
            XCTAssertEqual(code(march), .string("RollingForward"))
            let clock = try await call(.GET, "/rehearse/clock", nil)
            XCTAssertEqual(clock.body?.field("now"), .int(halfway))
        }
        XCTAssertEqual(record.summary.status?.code, .faulted)
    }
}
