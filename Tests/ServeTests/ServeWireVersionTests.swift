import AsyncHTTPClient
import AzureWire
import Foundation
import Formats
import NIOCore
import NIOHTTP1
import Scenario
@testable import Serve
import UpgradeEngine
import XCTest

/// The wire exact to the api-version (issue 58, SPEC §6c), ETags, and a PATCH whose every field
/// is applied or refused (issue 55).
final class ServeWireVersionTests: XCTestCase {
    static let scaleSet = ServeRoutesTests.scaleSet

    // MARK: api-versions

    /// The versions az 2.91.0 and SDK 39.0.0 send are served; one Azure does not serve is ARM's
    /// 400 InvalidApiVersionParameter listing the served versions, newest first.
    func testVersionsAzureDoesNotServeAreRefusedAsARMRefusesThem() async throws {
        _ = try await ServeStepTests.served(try ServeRoutesTests.definition(), .step) { call in
            for version in ["2023-09-01", "2024-11-01", "2025-11-01", "2026-04-01", "2026-09-01"] {
                let shown = try await call(.GET, Self.scaleSet + "?api-version=\(version)", nil)
                XCTAssertEqual(shown.status, 200, version)
            }
            for version in ["2099-01-01", "1", "2026-04-02", "", "2026-04-01-preview"] {
                let refused = try await call(.GET, Self.scaleSet + "?api-version=\(version)", nil)
                XCTAssertEqual(refused.status, 400, version)
                XCTAssertEqual(refused.error, "InvalidApiVersionParameter", version)
                XCTAssertTrue(refused.message?.hasPrefix("The api-version '\(version)' is invalid. The supported versions are '2026-09-01,2026-04-01,2026-03-01,") ?? false,
                              refused.message ?? "")
            }
        }
        XCTAssertEqual(APIVersion.served.count, Set(APIVersion.served).count)
        XCTAssertEqual(APIVersion.served.map { $0.prefix(10) }, APIVersion.served.map { $0.prefix(10) }.sorted(by: >))
    }

    // MARK: RollingBack and Abandoned

    /// `RollingBack` from stable 2026-04-01 (SPEC §6c); 2026-03-01 and older read RollingForward.
    func testRollingBackIsShownFromTwentyTwentySixAprilOn() {
        for (version, shown) in [("2026-04-01", RunningCode.rollingBack), ("2026-09-01", .rollingBack), ("2026-03-01", .rollingForward),
                                 ("2025-11-01", .rollingForward), ("2023-09-01", .rollingForward)] {
            XCTAssertEqual(RunningCode.rollingBack.shown(toAPIVersion: version), shown, version)
        }
        XCTAssertEqual(RunningCode.completed.shown(toAPIVersion: "2023-09-01"), .completed)
    }

    /// A batch event superseded by a cancel: `Abandoned` (state and the Waiting targets) to
    /// 2026-09-01; `Completed` with the targets Waiting to 2025-11-01; a PATCH of it is 409, as
    /// one of a Completed event.
    func testAnAbandonedEventIsServedAbandonedOnlyFromTwentyTwentySixSeptember() async throws {
        let events = LifecycleHookServeTests.events
        let (record, _) = try await ServeStepTests.served(LifecycleHookServeTests.definition(hooked: true), .step) { call in
            let active = try await LifecycleHookServeTests.nextActive(call)
            let event = try XCTUnwrap(active)
            let name = LifecycleHookServeTests.name(event)
            let cancel = try await call(.POST, LifecycleHookServeTests.scaleSet + "/rollingUpgrades/cancel?api-version=2023-09-01", nil)
            XCTAssertEqual(cancel.status, 202)
            let newer = try await call(.GET, events + "/\(name)?api-version=2026-09-01", nil)
            XCTAssertEqual(newer.body?.field("properties")?.field("state"), .string("Abandoned"))
            XCTAssertEqual(LifecycleHookServeTests.targets(try XCTUnwrap(newer.body)).map(\.1), ["Abandoned", "Abandoned"])
            let older = try await call(.GET, events + "/\(name)?api-version=2025-11-01", nil)
            XCTAssertEqual(older.body?.field("properties")?.field("state"), .string("Completed"))
            XCTAssertEqual(LifecycleHookServeTests.targets(try XCTUnwrap(older.body)).map(\.1), ["Waiting", "Waiting"])
            let list = try await call(.GET, events + "?api-version=2026-09-01", nil)
            guard case .array(let listed)? = list.body?.field("value") else { return XCTFail("no list") }
            XCTAssertEqual(listed.first?.field("properties")?.field("state"), .string("Abandoned"))
            let answer = LifecycleHookServeTests.answers(LifecycleHookServeTests.targets(event).map { ($0.0, "Approved") })
            let patch = try await call(.PATCH, events + "/\(name)?api-version=2026-09-01", answer)
            XCTAssertEqual(patch.status, 409)
            XCTAssertEqual(patch.error, "OperationNotAllowed")
            XCTAssertTrue(patch.message?.contains("is Abandoned") ?? false, patch.message ?? "")
        }
        let completion = try XCTUnwrap(record.events.first { if case .hookCompleted = $0.payload { true } else { false } })
        guard case .hookCompleted(let outcome) = completion.payload else { return XCTFail("no completion") }
        XCTAssertTrue(outcome.abandoned)
    }

    // MARK: ETags

    /// A PATCH with `If-Match`/`If-None-Match` headers; the reply.
    static func patch(_ client: HTTPClient, _ base: String, _ body: String, headers: [(String, String)],
                      version: String = "2026-04-01") async throws -> ServeRoutesTests.Reply {
        var request = HTTPClientRequest(url: base + scaleSet + "?api-version=\(version)")
        request.method = .PATCH
        request.headers.add(name: "Authorization", value: "Bearer rehearse-test")
        request.headers.add(name: "Content-Type", value: "application/json")
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        request.body = .bytes(ByteBuffer(string: body))
        let response = try await client.execute(request, timeout: .seconds(30))
        let bytes = try await response.body.collect(upTo: 1 << 20)
        return ServeRoutesTests.Reply(status: Int(response.status.code), headers: response.headers,
                                      body: bytes.readableBytes == 0 ? nil : try JSON.parse(String(buffer: bytes)))
    }

    /// The scale set carries etag "1"; If-Match "7" and If-None-Match * are 412 PreconditionFailed
    /// with the capacity still 4; If-Match "1" scales to 6 and the etag becomes "2"; a client of
    /// 2022-11-01 (before ETags) is shown none.
    func testETagsGuardUpdatesAsARMDoes() async throws {
        var configuration = ServeConfiguration()
        configuration.port = 0
        configuration.tls = false
        configuration.mode = .step
        _ = try await ServeRoutesTests.serve(try ServeRoutesTests.definition(), configuration) { client, base in
            let call = ServeRoutesTests.caller(client, base: base)
            let shown = try await call(.GET, Self.scaleSet + "?api-version=2026-04-01", nil)
            XCTAssertEqual(shown.body?.field("etag"), .string("\"1\""))
            let scale = #"{"sku": {"capacity": 6}}"#
            for header in [("If-Match", "\"7\""), ("If-None-Match", "*"), ("If-None-Match", "\"1\"")] {
                let refused = try await Self.patch(client, base, scale, headers: [header])
                XCTAssertEqual(refused.status, 412, "\(header)")
                XCTAssertEqual(refused.error, "PreconditionFailed", "\(header)")
            }
            let unchanged = try await call(.GET, Self.scaleSet + "?api-version=2026-04-01", nil)
            XCTAssertEqual(unchanged.body?.field("sku")?.field("capacity"), .int(4))
            XCTAssertEqual(unchanged.body?.field("etag"), .string("\"1\""))
            let applied = try await Self.patch(client, base, scale, headers: [("If-Match", "\"1\"")])
            XCTAssertEqual(applied.status, 200)
            XCTAssertEqual(applied.body?.field("sku")?.field("capacity"), .int(6))
            XCTAssertEqual(applied.body?.field("etag"), .string("\"2\""))
            let stale = try await Self.patch(client, base, #"{"sku": {"capacity": 4}}"#, headers: [("If-Match", "\"1\"")])
            XCTAssertEqual(stale.status, 412)
            XCTAssertEqual(stale.message, #"Etag provided in if-match header "\"1\"" does not match etag "2" of resource."#)
            let old = try await call(.GET, Self.scaleSet + "?api-version=2022-11-01", nil)
            XCTAssertNil(old.body?.field("etag"))
        }
    }

    // MARK: Determinism

    /// The same scenario and requests, served twice with one epoch: the same bytes in every
    /// answer (the scale set with its etag, the hook event, get-latest, the clock).
    func testTheSameRequestsGiveTheSameBytes() async throws {
        func session() async throws -> [String] {
            var configuration = ServeConfiguration()
            configuration.port = 0
            configuration.tls = false
            configuration.mode = .step
            configuration.epoch = 1_795_719_600
            var bodies: [String] = []
            _ = try await ServeRoutesTests.serve(LifecycleHookServeTests.definition(hooked: true), configuration) { call in
                let active = try await LifecycleHookServeTests.nextActive(call)
                let name = LifecycleHookServeTests.name(try XCTUnwrap(active))
                for path in [LifecycleHookServeTests.scaleSet + "?api-version=2026-04-01", LifecycleHookServeTests.events + "/\(name)?api-version=2026-09-01",
                             LifecycleHookServeTests.scaleSet + "/rollingUpgrades/latest?api-version=2023-09-01", "/rehearse/clock"] {
                    bodies.append(try await call(.GET, path, nil).body?.serialized(pretty: false) ?? "")
                }
            }
            return bodies
        }
        let first = try await session(), second = try await session()
        XCTAssertEqual(first.count, 4)
        XCTAssertTrue(first[1].contains("2026-11-26T19:"), first[1])
        XCTAssertEqual(first, second)
    }

    // MARK: Every field applied or refused

    /// Each profile part a PATCH may send: `sku.name` is applied (a model change: GET shows it and
    /// the instances are out of date); `automaticRepairsPolicy`, `osProfile.customData`, a disk's
    /// caching, the network and extension profiles, an unknown field and a null that would remove
    /// an applied part are 400 naming the field,
    /// with nothing changed (etag "1"); the resource sent back as GET showed it is 200, no change.
    func testEveryFieldOfAPATCHIsAppliedOrRefusedNamed() async throws {
        let profile = "properties.virtualMachineProfile"
        let refusals: [(String, String)] = [
            (#"{"properties": {"automaticRepairsPolicy": {"enabled": true}}}"#, "properties.automaticRepairsPolicy.enabled"),
            (#"{"properties": {"virtualMachineProfile": {"osProfile": {"customData": "I2Nsb3VkLWNvbmZpZw=="}}}}"#, "\(profile).osProfile.customData"),
            (#"{"properties": {"virtualMachineProfile": {"storageProfile": {"osDisk": {"caching": "ReadOnly"}}}}}"#, "\(profile).storageProfile.osDisk.caching"),
            (#"{"properties": {"virtualMachineProfile": {"networkProfile": {"networkInterfaceConfigurations": [{"name": "nic"}]}}}}"#,
             "\(profile).networkProfile.networkInterfaceConfigurations"),
            (#"{"properties": {"virtualMachineProfile": {"extensionProfile": {"extensions": []}}}}"#, "\(profile).extensionProfile.extensions"),
            (#"{"properties": {"virtualMachineProfile": {"extensionProfile": {"extensions": [{"name": "HealthExtension", "properties": {"settings": {"port": 9000}}}]}}}}"#,
             "\(profile).extensionProfile.extensions[0].properties.settings.port"),
            (#"{"properties": {"frobnicate": 1}}"#, "properties.frobnicate"),
            (#"{"location": "westeurope"}"#, "location"),
            (#"{"properties": {"upgradePolicy": null}}"#, "properties.upgradePolicy"), (#"{"sku": {"capacity": null}}"#, "sku.capacity"),
        ]
        _ = try await ServeStepTests.served(try ServeRoutesTests.definition(), .step) { call in
            let read = try await call(.GET, Self.scaleSet + "?api-version=2026-04-01", nil)
            let before = try XCTUnwrap(read.body)
            for (body, field) in refusals {
                let refused = try await call(.PATCH, Self.scaleSet + "?api-version=2026-04-01", body)
                XCTAssertEqual(refused.status, 400, field)
                XCTAssertEqual(refused.error, "InvalidParameter", field)
                XCTAssertEqual(refused.body?.field("error")?.field("target"), .string(field))
            }
            let echoed = try await call(.PUT, Self.scaleSet + "?api-version=2026-04-01", before.serialized(pretty: false))
            XCTAssertEqual(echoed.status, 200)
            XCTAssertEqual(echoed.body?.field("etag"), .string("\"1\""))
            let size = try await call(.PATCH, Self.scaleSet + "?api-version=2026-04-01", #"{"sku": {"name": "Standard_D4s_v5"}}"#)
            XCTAssertEqual(size.status, 200)
            XCTAssertEqual(size.body?.field("sku")?.field("name"), .string("Standard_D4s_v5"))
            XCTAssertEqual(size.body?.field("etag"), .string("\"2\""))
            let vms = try await call(.GET, Self.scaleSet + "/virtualMachines?api-version=2024-11-01", nil)
            guard case .array(let list)? = vms.body?.field("value") else { return XCTFail("no instances") }
            XCTAssertEqual(list.count, 4)
            XCTAssertEqual(list.filter { $0.field("properties")?.field("latestModelApplied") == .bool(true) }.count, 0)
        }
    }

    /// A VM's PUT applies its protection policy and refuses any other change, naming it: the VM
    /// as GET showed it with protectFromScaleIn true is 200 and applied; a VM size or a tag is 400.
    func testAVMPUTAppliesItsProtectionAndRefusesOtherFields() async throws {
        let vm = Self.scaleSet + "/virtualMachines/1?api-version=2024-11-01"
        _ = try await ServeStepTests.served(try ServeRoutesTests.definition(), .step) { call in
            let read = try await call(.GET, vm, nil)
            guard case .object(var root)? = read.body, case .object(var properties)? = root["properties"] else { return XCTFail("no VM") }
            properties["protectionPolicy"] = .object(["protectFromScaleIn": .bool(true), "protectFromScaleSetActions": .bool(false)])
            root["properties"] = .object(properties)
            let put = try await call(.PUT, vm, JSON.object(root).serialized(pretty: false))
            XCTAssertEqual(put.status, 200)
            XCTAssertEqual(put.body?.field("properties")?.field("protectionPolicy")?.field("protectFromScaleIn"), .bool(true))
            for (body, field) in [(#"{"properties": {"hardwareProfile": {"vmSize": "Standard_D4s_v5"}}}"#, "properties.hardwareProfile.vmSize"),
                                  (#"{"tags": {"ring": "1"}}"#, "tags.ring")] {
                let refused = try await call(.PUT, vm, body)
                XCTAssertEqual(refused.status, 400, field)
                XCTAssertEqual(refused.body?.field("error")?.field("target"), .string(field))
            }
        }
    }
}
