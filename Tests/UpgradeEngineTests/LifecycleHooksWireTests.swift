import AzureWire
import Formats
import UpgradeEngine
import XCTest

/// The wire shapes of lifecycle hooks (Compute api-version 2025-11-01): the profile, the event
/// resource as GET answers it (the fields of `VirtualMachineScaleSetLifeCycleHookEvent_Get.json`),
/// LIST with `$filter=properties/state eq 'Active'`, and the PATCH body a client sends.
final class LifecycleHooksWireTests: XCTestCase {
    let scaleSetID = "/subscriptions/s/resourceGroups/rg/providers/Microsoft.Compute/virtualMachineScaleSets/web"

    func testProfileReadsBothTypesWithDefaultsAndRefusesWhatAzureRefuses() throws {
        let json = try JSON.parse("""
            {"lifecycleHooks": [{"type": "UpgradeAutoOSRollingBatchStarting", "waitDuration": "PT30M", "defaultAction": "Approve"},
                                {"type": "UpgradeAutoOSScheduling"}]}
            """)
        let (hooks, problems) = LifecycleHooksWire.profile(json)
        XCTAssertEqual(problems, [])
        XCTAssertEqual(hooks, [LifecycleHook(type: .upgradeAutoOSRollingBatchStarting, waitDuration: 1_800_000, defaultAction: .approve),
                               LifecycleHook(type: .upgradeAutoOSScheduling, waitDuration: 3_600_000, defaultAction: .approve)])
        let bad = try JSON.parse("""
            {"lifecycleHooks": [{"type": "UpgradeAutoOSNow"}, {"type": "UpgradeAutoOSScheduling", "defaultAction": "Maybe", "extra": 1}]}
            """)
        let (_, found) = LifecycleHooksWire.profile(bad)
        XCTAssertEqual(found.map(\.field), ["lifecycleHooksProfile.lifecycleHooks[0].type", "lifecycleHooksProfile.lifecycleHooks[1].extra",
                                            "lifecycleHooksProfile.lifecycleHooks[1].defaultAction"])
        // Round trip through the scale set's shape.
        XCTAssertEqual(LifecycleHooksWire.profile(LifecycleHooksWire.profileJSON(hooks)).0, hooks)
    }

    func testEventResourceHasTheGetExamplesFields() throws {
        // Raised 6 h 17 min 55 s after the epoch, waiting 3 h, at most 6 h (the example's figures).
        let created: Millis = (6 * 3600 + 17 * 60 + 55) * 1000
        var event = LifecycleHookEvent(number: 1, name: LifecycleHookEvent.name(1), type: .upgradeAutoOSRollingBatchStarting,
                                       timeCreated: created, waitUntil: created + 3 * 3_600_000, maxWaitUntil: created + 6 * 3_600_000,
                                       defaultAction: .approve,
                                       targets: [HookTarget(instance: 0, name: "web_0", actionState: .approved),
                                                 HookTarget(instance: 1, name: "web_1", actionState: .approved)])
        event.isActive = false
        let json = LifecycleHooksWire.eventJSON(event, scaleSetID: scaleSetID, orchestration: .uniform)
        XCTAssertEqual(json.field("name"), .string("00000000-0000-4000-8000-000000000001"))
        XCTAssertEqual(json.field("id"), .string(scaleSetID + "/lifecycleHookEvents/00000000-0000-4000-8000-000000000001"))
        let properties = try XCTUnwrap(json.field("properties"))
        XCTAssertEqual(properties.field("type"), .string("UpgradeAutoOSRollingBatchStarting"))
        XCTAssertEqual(properties.field("timeCreated"), .string("2024-01-01T06:17:55.0000000+00:00"))
        XCTAssertEqual(properties.field("waitUntil"), .string("2024-01-01T09:17:55.0000000+00:00"))
        XCTAssertEqual(properties.field("maxWaitUntil"), .string("2024-01-01T12:17:55.0000000+00:00"))
        XCTAssertEqual(properties.field("defaultAction"), .string("Approve"))
        XCTAssertEqual(properties.field("state"), .string("Completed"))
        guard case .array(let targets)? = properties.field("targetResources") else { return XCTFail("no targetResources") }
        XCTAssertEqual(targets.map { $0.field("resource")?.field("id") }, [.string(scaleSetID + "/virtualMachines/0"), .string(scaleSetID + "/virtualMachines/1")])
        XCTAssertEqual(targets.map { $0.field("actionState") }, [.string("Approved"), .string("Approved")])
        // A Flexible scale set's targets are VM names.
        let flexible = LifecycleHooksWire.eventJSON(event, scaleSetID: scaleSetID, orchestration: .flexible)
        guard case .array(let named)? = flexible.field("properties")?.field("targetResources") else { return XCTFail("no targetResources") }
        XCTAssertEqual(named.first?.field("resource")?.field("id"), .string(scaleSetID + "/virtualMachines/web_0"))
        // LIST with the Active filter leaves the completed one out.
        XCTAssertEqual(LifecycleHooksWire.listJSON([event], activeOnly: true, scaleSetID: scaleSetID, orchestration: .uniform),
                       .object(["value": .array([]), "nextLink": .null]))
    }

    func testPatchBodyBecomesAnAnswer() throws {
        let event = LifecycleHookEvent(number: 2, name: LifecycleHookEvent.name(2), type: .upgradeAutoOSRollingBatchStarting,
                                       timeCreated: 600_000, waitUntil: 2_400_000, maxWaitUntil: 15_000_000, defaultAction: .approve,
                                       targets: [HookTarget(instance: 2, name: "web_2", actionState: .waiting),
                                                 HookTarget(instance: 3, name: "web_3", actionState: .waiting)])
        let body = try JSON.parse("""
            {"properties": {"targetResources": [
               {"resource": {"id": "\(scaleSetID)/virtualMachines/2"}, "actionState": "Approved"},
               {"resource": {"id": "\(scaleSetID)/virtualMachines/web_3"}, "actionState": "Rejected"}],
             "waitUntil": "2024-01-01T01:00:00Z"}}
            """)
        let response = try LifecycleHooksWire.patch(body, event: event) { $0 == "web_3" ? 3 : nil }
        // 01:00 is 3,600 s after the epoch, 3,000 s after the event's creation at 600 s.
        XCTAssertEqual(response, HookResponse(reject: .instances([3]), approve: .instances([2]), waitFor: 3_000_000))
        XCTAssertThrowsError(try LifecycleHooksWire.patch(try JSON.parse(#"{"properties": {"waitUntil": "tomorrow"}}"#), event: event) { _ in nil }) { error in
            XCTAssertEqual((error as? ValidationFailure)?.problems.map(\.field), ["properties.waitUntil"])
        }
        // A member beside `properties` is named, with or without `properties`; the resource's id, name and type may come back.
        for (text, fields) in [(#"{"bogus": 1}"#, ["bogus", "properties"]), (#"{"bogus": 1, "properties": {"waitUntil": "2024-01-01T01:00:00Z"}}"#, ["bogus"])] {
            XCTAssertThrowsError(try LifecycleHooksWire.patch(try JSON.parse(text), event: event) { _ in nil }) { error in
                XCTAssertEqual((error as? ValidationFailure)?.problems.map(\.field), fields, text)
            }
        }
        XCTAssertNoThrow(try LifecycleHooksWire.patch(try JSON.parse(#"{"name": "e", "type": "t", "properties": {"waitUntil": "2024-01-01T01:00:00Z"}}"#),
                                                      event: event) { _ in nil })
        // Names are read ignoring case: one given twice in two cases is named, not half read.
        let twice = #"{"properties": {"waitUntil": "2024-01-01T01:00:00Z", "WaitUntil": "2024-01-01T02:00:00Z"}}"#
        XCTAssertThrowsError(try LifecycleHooksWire.patch(try JSON.parse(twice), event: event) { _ in nil }) { error in
            XCTAssertEqual((error as? ValidationFailure)?.problems.map(\.field), ["properties.waitUntil"])
        }
        XCTAssertEqual(LifecycleHooksWire.instant("2024-01-02T00:00:00.5+00:00"), 86_400_500)
        XCTAssertNil(LifecycleHooksWire.instant("2024-13-02T00:00:00Z"))
    }

    /// A client that reads the event, changes one target's answer and sends the whole resource
    /// back (read-only members and the other targets as GET showed them) gives that one answer;
    /// a read-only member that says something else is named. (A decided target keeps its first
    /// answer in the engine, whatever comes for it.)
    func testTheEventSentBackAsReadIsOneAnswerAndChangedReadOnlyMembersAreNamed() throws {
        let event = LifecycleHookEvent(number: 3, name: LifecycleHookEvent.name(3), type: .upgradeAutoOSRollingBatchStarting,
                                       timeCreated: 600_000, waitUntil: 2_400_000, maxWaitUntil: 15_000_000, defaultAction: .approve,
                                       targets: [HookTarget(instance: 4, name: "web_4", actionState: .waiting),
                                                 HookTarget(instance: 5, name: "web_5", actionState: .waiting),
                                                 HookTarget(instance: 6, name: "web_6", actionState: .approved)])
        guard case .object(var resource) = LifecycleHooksWire.eventJSON(event, scaleSetID: scaleSetID, orchestration: .uniform),
              case .object(var properties)? = resource["properties"], case .array(var targets)? = properties["targetResources"],
              case .object(var fifth) = targets[1] else { return XCTFail("not the event's shape") }
        fifth["actionState"] = .string("Rejected")
        targets[1] = .object(fifth)
        properties["targetResources"] = .array(targets)
        // The same instant written with Z instead of +00:00 is the same value.
        properties["maxWaitUntil"] = .string("2024-01-01T04:10:00Z")
        resource["properties"] = .object(properties)
        let response = try LifecycleHooksWire.patch(.object(resource), event: event) { _ in nil }
        // waitUntil came back as read (2,400 s, its deadline now): it moves nothing.
        XCTAssertEqual(response, HookResponse(reject: .instances([5]), approve: .instances([6]), waitFor: nil))

        properties["maxWaitUntil"] = .string("2024-01-01T05:00:00Z")
        properties["state"] = nil
        properties["State"] = .string("Completed")
        properties["defaultAction"] = .string("Reject")
        guard case .object(var third) = targets[2] else { return XCTFail("no third target") }
        third["actionState"] = .string("Waiting")
        targets[2] = .object(third)
        properties["targetResources"] = .array(targets)
        resource["properties"] = .object(properties)
        XCTAssertThrowsError(try LifecycleHooksWire.patch(.object(resource), event: event) { _ in nil }) { error in
            XCTAssertEqual((error as? ValidationFailure)?.problems.map(\.field),
                           ["properties.State", "properties.defaultAction", "properties.maxWaitUntil"])
        }
    }

    /// What cannot be one answer is named: two answers for one target, Waiting for an id that is
    /// not a target, an id Azure would not write (a sign, a leading zero). The deadline sent back
    /// as it is moves nothing, and a numeric Flexible VM name is the VM, not an instance id.
    func testAnswersThatCannotBeOneAreNamedAndAnUnmovedDeadlineIsNoMove() throws {
        let event = LifecycleHookEvent(number: 4, name: LifecycleHookEvent.name(4), type: .upgradeAutoOSRollingBatchStarting,
                                       timeCreated: 600_000, waitUntil: 2_400_000, maxWaitUntil: 15_000_000, defaultAction: .approve,
                                       targets: [HookTarget(instance: 0, name: "1", actionState: .waiting),
                                                 HookTarget(instance: 2, name: "web-c", actionState: .waiting)])
        func fields(_ text: String) throws -> [String] {
            do {
                _ = try LifecycleHooksWire.patch(try JSON.parse(text), event: event) { ["1": 0, "web-c": 2][$0] }
                return []
            } catch {
                return (error as? ValidationFailure)?.problems.map(\.field) ?? ["not a ValidationFailure"]
            }
        }
        func item(_ id: String, _ state: String) -> String { #"{"resource": {"id": "s/virtualMachines/\#(id)"}, "actionState": "\#(state)"}"# }
        XCTAssertEqual(try fields(#"{"properties": {"targetResources": [\#(item("2", "Approved")), \#(item("web-c", "Rejected"))]}}"#),
                       ["properties.targetResources[1].actionState"])
        XCTAssertEqual(try fields(#"{"properties": {"targetResources": [\#(item("7", "Waiting"))]}}"#), ["properties.targetResources[0].resource.id"])
        XCTAssertEqual(try fields(#"{"properties": {"targetResources": [\#(item("+2", "Approved")), \#(item("02", "Approved"))]}}"#),
                       ["properties.targetResources[0].resource.id", "properties.targetResources[1].resource.id"])
        // Another scale set's VM 2 is not this one's.
        let other = #"{"properties": {"targetResources": [{"resource": {"id": "/subscriptions/s/resourceGroups/g/providers/Microsoft.Compute/virtualMachineScaleSets/other/virtualMachines/2"}, "actionState": "Approved"}]}}"#
        XCTAssertThrowsError(try LifecycleHooksWire.patch(try JSON.parse(other), event: event, scaleSetName: "web") { _ in nil }) { error in
            XCTAssertEqual((error as? ValidationFailure)?.problems.map(\.field), ["properties.targetResources[0].resource.id"])
        }
        XCTAssertNoThrow(try LifecycleHooksWire.patch(try JSON.parse(other.replacingOccurrences(of: "/other/", with: "/WEB/")), event: event, scaleSetName: "web") { _ in nil })
        // VM "1" is instance 0 in this Flexible scale set.
        let named = try LifecycleHooksWire.patch(try JSON.parse(#"{"properties": {"targetResources": [\#(item("1", "Approved"))]}}"#), event: event) { ["1": 0][$0] }
        XCTAssertEqual(named.approve, .instances([0]))
        // 2,400 s after the epoch is the deadline it has: no move, so nothing at all.
        let same = try LifecycleHooksWire.patch(try JSON.parse(#"{"properties": {"waitUntil": "2024-01-01T00:40:00Z"}}"#), event: event) { _ in nil }
        XCTAssertTrue(same.isEmpty)
        // A Completed event's echo is not compared: the route refuses it for its state.
        let stale = #"{"properties": {"state": "Active", "waitUntil": "2024-01-01T00:40:00Z"}}"#
        var completed = event
        completed.isActive = false
        XCTAssertNoThrow(try LifecycleHooksWire.patch(try JSON.parse(stale), event: completed, checkingEcho: false) { _ in nil })
        XCTAssertThrowsError(try LifecycleHooksWire.patch(try JSON.parse(stale), event: completed) { _ in nil })
    }

    /// A day the month does not have, and a field in another width or with a sign, are not
    /// instants (they were read as the next month's day, or as the plain year).
    func testAnInstantHasTheDaysOfItsMonthAndISOWidths() {
        // 2024 is a leap year (divisible by 4), 2100 is not (a century not divisible by 400), 2000 is.
        XCTAssertEqual(LifecycleHooksWire.instant("2024-02-29T00:00:00Z"), (31 + 28) * 86_400_000)
        XCTAssertEqual(LifecycleHooksWire.instant("2000-02-29T00:00:00Z", epoch: 951_782_400), 0)
        for text in ["2024-02-30T00:00:00Z", "2023-02-29T00:00:00Z", "2100-02-29T00:00:00Z", "2024-04-31T00:00:00Z",
                     "+002024-01-01T01:00:00Z", "2024-1-01T01:00:00Z", "2024-01-01T1:00:00Z", "02024-01-01T01:00:00Z", "2024-01-+1T01:00:00Z"] {
            XCTAssertNil(LifecycleHooksWire.instant(text), text)
        }
        XCTAssertEqual(LifecycleHooksWire.instant("2024-12-31T23:59:59Z"), (366 * 86_400 - 1) * 1000)
        // An offset is the same instant in another zone: 01:00+01:00 and 18:30-05:30 (the day before) are midnight UTC.
        XCTAssertEqual(LifecycleHooksWire.instant("2024-01-01T01:00:00+01:00"), 0)
        XCTAssertEqual(LifecycleHooksWire.instant("2023-12-31T18:30:00-05:30"), 0)
        for text in ["2024-01-01T00:00:00.000\u{B2}Z", "2024-01-01T00:00:00.1\u{BD}Z", "2024-01-01T00:00:00+1:00", "2024-01-01T00:00:00+24:00",
                     "2024-01-01T00:00:00+01:60", "2024-01-01T00:00:00 01:00"] {
            XCTAssertNil(LifecycleHooksWire.instant(text), text)
        }
    }
}
