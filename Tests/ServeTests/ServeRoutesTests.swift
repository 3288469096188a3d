import AsyncHTTPClient
import Foundation
import Formats
import NIOCore
import NIOHTTP1
import Scenario
import Serve
import UpgradeEngine
import XCTest

/// `rehearse serve`'s routes, long-running operations and clock, over plain HTTP in process.
final class ServeRoutesTests: XCTestCase {
    static let scenario = """
        scaleset {
          name = "web", capacity = 4, quota = 80,
          model = { imageReference = { version = "1.0.0" } },
          upgradePolicy = { mode = "Rolling", rollingUpgradePolicy = { maxBatchInstancePercent = 50 } },
          healthExtension = { protocol = "http", port = 8000, requestPath = "/health",
                              intervalInSeconds = 5, numberOfProbes = 1, gracePeriod = 30 },
        }
        health(function(vm, now) return { applicationHealthState = "Healthy" } end)
        """

    static let scaleSet = "/subscriptions/s1/resourceGroups/g1/providers/Microsoft.Compute/virtualMachineScaleSets/web"

    struct Reply: Sendable {
        let status: Int
        let headers: HTTPHeaders
        let body: JSON?
        var error: String? {
            guard case .string(let code)? = body?.field("error")?.field("code") else { return nil }
            return code
        }
        var message: String? {
            guard case .string(let text)? = body?.field("error")?.field("message") else { return nil }
            return text
        }
    }

    /// The scenario, loaded from a file of its own.
    static func definition() throws -> ScenarioDefinition {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("serve-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let path = dir.appendingPathComponent("scenario.lua").path
        try Self.scenario.write(toFile: path, atomically: true, encoding: .utf8)
        var options = ScenarioOptions()
        options.environment = [:]
        options.print = { _ in }
        return try ScenarioDefinition(luaScript: path, options: options)
    }

    /// A function making requests to `base` with `client`: method, path, JSON body; each with
    /// `authorization` (nil: no such header).
    static func caller(_ client: HTTPClient, base: String, authorization: String? = "Bearer rehearse-test")
        -> @Sendable (HTTPMethod, String, String?) async throws -> Reply {
        { method, path, text in
            var request = HTTPClientRequest(url: base + path)
            request.method = method
            // Any bearer token: ARM's routes need one, nobody verifies it.
            if let authorization { request.headers.add(name: "Authorization", value: authorization) }
            if let text {
                request.body = .bytes(ByteBuffer(string: text))
                request.headers.add(name: "Content-Type", value: "application/json")
            }
            let response = try await client.execute(request, timeout: .seconds(30))
            let bytes = try await response.body.collect(upTo: 1 << 24)
            let json = bytes.readableBytes == 0 ? nil : try JSON.parse(String(buffer: bytes))
            return Reply(status: Int(response.status.code), headers: response.headers, body: json)
        }
    }

    /// Serves the scenario for the length of `body`, which gets a function making requests.
    func serving(_ mode: ClockMode, maxBody: Int = 4 << 20,
                 _ body: (_ call: (HTTPMethod, String, String?) async throws -> Reply) async throws -> Void) async throws {
        let definition = try Self.definition()
        var configuration = ServeConfiguration()
        configuration.port = 0
        configuration.tls = false
        configuration.mode = mode
        configuration.maxBodyBytes = maxBody
        _ = try await Self.serve(definition, configuration, body)
    }

    /// Serves `definition` for the length of `body`, which gets a function making requests;
    /// then stops the server and returns the served run's record.
    static func serve(_ definition: ScenarioDefinition, _ configuration: ServeConfiguration,
                      _ body: (_ call: @escaping @Sendable (HTTPMethod, String, String?) async throws -> Reply) async throws -> Void) async throws -> RunRecord {
        try await serve(definition, configuration) { client, base in try await body(caller(client, base: base)) }
    }

    /// Serves `definition` for the length of `body`, which gets a client and the server's base URL.
    static func serve(_ definition: ScenarioDefinition, _ configuration: ServeConfiguration,
                      _ body: (_ client: HTTPClient, _ base: String) async throws -> Void) async throws -> RunRecord {
        let (urls, continuation) = AsyncStream.makeStream(of: String.self)
        let server = Task { try await Server.run(definition, configuration: configuration) { continuation.yield($0) } }
        var iterator = urls.makeAsyncIterator()
        guard let base = await iterator.next() else { throw ServeError.input(.port, value: "0", problem: "the server did not start") }
        let client = HTTPClient(eventLoopGroupProvider: .singleton)
        do {
            try await body(client, base)
        } catch {
            try await client.shutdown()
            server.cancel()
            throw error
        }
        try await client.shutdown()
        server.cancel()
        return try await server.value
    }

    func testAPATCHStartsARollingUpgradeWithAzuresLongRunningOperation() async throws {
        try await serving(.step) { call in
            let shown = try await call(.GET, Self.scaleSet + "?api-version=2024-07-01", nil)
            XCTAssertEqual(shown.status, 200)
            XCTAssertEqual(shown.body?.field("sku")?.field("capacity"), .int(4))
            XCTAssertEqual(shown.body?.field("properties")?.field("upgradePolicy")?.field("mode"), .string("Rolling"))
            let none = try await call(.GET, Self.scaleSet + "/rollingUpgrades/latest?api-version=2024-07-01", nil)
            XCTAssertEqual(none.status, 404)
            XCTAssertEqual(none.error, "NotFound")

            let patch = try await call(.PATCH, Self.scaleSet + "?api-version=2024-07-01",
                                       #"{"properties": {"virtualMachineProfile": {"storageProfile": {"imageReference": {"version": "2.0.0"}}}}}"#)
            XCTAssertEqual(patch.status, 200)
            XCTAssertEqual(patch.body?.field("properties")?.field("virtualMachineProfile")?.field("storageProfile")?.field("imageReference")?.field("version"),
                           .string("2.0.0"))
            let retry = try XCTUnwrap(Int(patch.headers.first(name: "Retry-After") ?? ""))
            XCTAssertGreaterThanOrEqual(retry, 1)
            let operation = try XCTUnwrap(patch.headers.first(name: "Azure-AsyncOperation"))
            let operationPath = String(operation.drop { $0 != "/" }.dropFirst(2).drop { $0 != "/" })
            let status = try await call(.GET, operationPath, nil)
            XCTAssertEqual(status.body?.field("status"), .string("Succeeded"))

            let latest = try await call(.GET, Self.scaleSet + "/rollingUpgrades/latest?api-version=2024-07-01", nil)
            XCTAssertEqual(latest.body?.field("properties")?.field("runningStatus")?.field("code"), .string("RollingForward"))

            guard case .int(let before)? = try await call(.GET, "/rehearse/clock", nil).body?.field("now") else { return XCTFail("no clock") }
            XCTAssertGreaterThan(before, 0)
            let advanced = try await call(.POST, "/rehearse/clock", #"{"advance": "PT2H"}"#)
            XCTAssertEqual(advanced.body?.field("now"), .int(before + 7_200_000))
            let done = try await call(.GET, Self.scaleSet + "/rollingUpgrades/latest?api-version=2024-07-01", nil)
            XCTAssertEqual(done.body?.field("properties")?.field("runningStatus")?.field("code"), .string("Completed"))
            XCTAssertEqual(done.body?.field("properties")?.field("progress")?.field("successfulInstanceCount"), .int(4))
            let vms = try await call(.GET, Self.scaleSet + "/virtualMachines?$expand=instanceView&api-version=2024-07-01", nil)
            guard case .array(let list)? = vms.body?.field("value") else { return XCTFail("no instance list") }
            XCTAssertEqual(list.count, 4)
            for vm in list {
                XCTAssertEqual(vm.field("properties")?.field("latestModelApplied"), .bool(true))
                XCTAssertEqual(vm.field("properties")?.field("instanceView")?.field("vmHealth")?.field("status")?.field("code"),
                               .string("HealthState/healthy"))
            }

            // An action: 202 with Azure-AsyncOperation, Location (the monitor: 200 once done) and Retry-After.
            let manual = try await call(.POST, Self.scaleSet + "/manualupgrade?api-version=2024-07-01", #"{"instanceIds": ["0", "1"]}"#)
            XCTAssertEqual(manual.status, 202)
            XCTAssertNotNil(manual.headers.first(name: "Azure-AsyncOperation"))
            XCTAssertGreaterThanOrEqual(Int(manual.headers.first(name: "Retry-After") ?? "") ?? 0, 1)
            let location = try XCTUnwrap(manual.headers.first(name: "Location"))
            XCTAssertTrue(location.contains("monitor=true"))
            let monitor = try await call(.GET, String(location.drop { $0 != "/" }.dropFirst(2).drop { $0 != "/" }), nil)
            XCTAssertEqual(monitor.status, 200)
            // The engine's refusals are 409 with its message: an OS upgrade of a pinned image, a cancel with nothing running.
            let os = try await call(.POST, Self.scaleSet + "/osRollingUpgrade?api-version=2024-07-01", nil)
            XCTAssertEqual(os.status, 409)
            XCTAssertEqual(os.error, "OperationNotAllowed")
            XCTAssertTrue(os.message?.hasPrefix("The OS Rolling Upgrade API cannot be used") ?? false)
            let unknownVM = try await call(.GET, Self.scaleSet + "/virtualMachines/99?api-version=2024-07-01", nil)
            XCTAssertEqual(unknownVM.status, 404)
            XCTAssertEqual(unknownVM.error, "ResourceNotFound")
            let cancel = try await call(.POST, Self.scaleSet + "/rollingUpgrades/cancel?api-version=2024-07-01", nil)
            XCTAssertEqual(cancel.status, 409)
            XCTAssertEqual(cancel.error, "OperationNotAllowed")
            XCTAssertEqual(cancel.message, "There is no ongoing Rolling Upgrade to cancel.")
        }
    }

    func testAPolicyPATCHIsTheScenariosUpdatePolicyAndReimageIsAccepted() async throws {
        try await serving(.speed(60)) { call in
            // Seed 001's switch: the same scale set, now with batches of 25%; the GET shows it.
            let patch = try await call(.PATCH, Self.scaleSet + "?api-version=2024-07-01",
                                       #"{"properties": {"upgradePolicy": {"mode": "Rolling", "rollingUpgradePolicy": {"maxBatchInstancePercent": 25}}}}"#)
            XCTAssertEqual(patch.status, 200)
            let shown = try await call(.GET, Self.scaleSet + "?api-version=2024-07-01", nil)
            guard case .int(let percent)? = shown.body?.field("properties")?.field("upgradePolicy")?.field("rollingUpgradePolicy")?
                .field("maxBatchInstancePercent") else { return XCTFail("no policy in \(String(describing: shown.body))") }
            XCTAssertEqual(percent, 25)
            let reimage = try await call(.POST, Self.scaleSet + "/virtualMachines/1/reimage?api-version=2024-07-01", nil)
            XCTAssertEqual(reimage.status, 202)
            let missing = try await call(.POST, Self.scaleSet + "/virtualMachines/9/reimage?api-version=2024-07-01", nil)
            XCTAssertEqual(missing.status, 404)
        }
    }

    func testBadInputIsAnsweredInARMsErrorShapeAndTheServerGoesOn() async throws {
        try await serving(.speed(60), maxBody: 64 * 1024) { call in
            let unknown = try await call(.GET, "/nothing/here", nil)
            XCTAssertEqual(unknown.status, 404)
            XCTAssertEqual(unknown.error, "NotFound")
            let otherSet = try await call(.GET, Self.scaleSet + "x?api-version=2024-07-01", nil)
            XCTAssertEqual(otherSet.status, 404)
            XCTAssertEqual(otherSet.error, "ResourceNotFound")
            let noVersion = try await call(.GET, Self.scaleSet, nil)
            XCTAssertEqual(noVersion.status, 400)
            XCTAssertEqual(noVersion.error, "MissingApiVersionParameter")
            let malformed = try await call(.PATCH, Self.scaleSet + "?api-version=2024-07-01", #"{"properties": {"#)
            XCTAssertEqual(malformed.status, 400)
            XCTAssertEqual(malformed.error, "InvalidRequestContent")
            let large = try await call(.PATCH, Self.scaleSet + "?api-version=2024-07-01", "[" + String(repeating: "1,", count: 40_000) + "1]")
            XCTAssertEqual(large.status, 413)
            XCTAssertEqual(large.error, "RequestContentTooLarge")
            let policy = try await call(.PATCH, Self.scaleSet + "?api-version=2024-07-01",
                                        #"{"properties": {"upgradePolicy": {"mode": "Rolling", "rollingUpgradePolicy": {"maxBatchInstancePercent": 3, "maxUnhealthyInstancePercent": 101}}}}"#)
            XCTAssertEqual(policy.status, 400)
            XCTAssertEqual(policy.error, "InvalidParameter")
            guard case .array(let details)? = policy.body?.field("error")?.field("details") else { return XCTFail("no details") }
            let targets = details.map { detail -> String? in
                if case .string(let target)? = detail.field("target") { return target }
                return nil
            }
            let rolling = "upgradePolicy.rollingUpgradePolicy."
            XCTAssertEqual(targets, [rolling + "maxBatchInstancePercent", rolling + "maxUnhealthyInstancePercent"])
            let shown = try await call(.GET, Self.scaleSet + "?api-version=2024-07-01", nil)
            XCTAssertEqual(shown.status, 200)
        }
    }

    func testTheClockRouteReadsAndAdvancesTheVirtualClock() async throws {
        try await serving(.step) { call in
            let start = try await call(.GET, "/rehearse/clock", nil)
            XCTAssertEqual(start.body?.field("now"), .int(0))
            XCTAssertEqual(start.body?.field("mode"), .string("step"))
            // Nothing to do: a step leaves the clock where it is.
            let idle = try await call(.POST, "/rehearse/clock", #"{"step": true}"#)
            XCTAssertEqual(idle.body?.field("now"), .int(0))
            XCTAssertEqual(idle.body?.member("nextEvent"), .null)
            let patch = try await call(.PATCH, Self.scaleSet + "?api-version=2024-07-01",
                                       #"{"properties": {"virtualMachineProfile": {"storageProfile": {"imageReference": {"version": "2.0.0"}}}}}"#)
            XCTAssertEqual(patch.status, 200)
            let stepped = try await call(.POST, "/rehearse/clock", #"{"step": true}"#)
            guard case .int(let now)? = stepped.body?.field("now") else { return XCTFail("no clock") }
            XCTAssertGreaterThan(now, 0)
            let moved = try await call(.POST, "/rehearse/clock", #"{"to": "PT10M"}"#)
            XCTAssertEqual(moved.body?.field("now"), .int(600_000))
            let back = try await call(.POST, "/rehearse/clock", #"{"to": "PT1M"}"#)
            XCTAssertEqual(back.status, 400)
            let wrong = try await call(.POST, "/rehearse/clock", #"{"jump": 1}"#)
            XCTAssertEqual(wrong.status, 400)
            XCTAssertEqual(wrong.error, "InvalidParameter")
        }
    }

    /// A scale-out over the quota is 409 and changes nothing, the image in the same PATCH
    /// included; delete-instances, protection and the subscription-wide list answer as Azure's.
    func testRefusedPATCHChangesNothingAndTheInstanceOperations() async throws {
        try await serving(.step) { call in
            let image = #""properties": {"virtualMachineProfile": {"storageProfile": {"imageReference": {"version": "9.0.0"}}}}"#
            let over = try await call(.PATCH, Self.scaleSet + "?api-version=2024-07-01", #"{"sku": {"capacity": 81}, \#(image)}"#)
            XCTAssertEqual(over.status, 409)
            XCTAssertEqual(over.error, "OperationNotAllowed")
            let shown = try await call(.GET, Self.scaleSet + "?api-version=2024-07-01", nil)
            XCTAssertEqual(shown.body?.field("sku")?.field("capacity"), .int(4))
            XCTAssertEqual(shown.body?.field("properties")?.field("virtualMachineProfile")?.field("storageProfile")?.field("imageReference")?
                .field("version"), .string("1.0.0"))

            // Shapes and values wrong whatever the state: 400 naming the field, nothing changed.
            for (body, target) in [(#"{"sku": "x"}"#, "sku"), (#"{"properties": "x"}"#, "properties"),
                                   (#"{"sku": {"capacity": "ten"}}"#, "sku.capacity"),
                                   (#"{"properties": {"virtualMachineProfile": {"storageProfile": {"imageReference": {"version": ""}}}}}"#,
                                    "virtualMachineProfile.storageProfile.imageReference.version")] {
                let wrong = try await call(.PATCH, Self.scaleSet + "?api-version=2024-07-01", body)
                XCTAssertEqual(wrong.status, 400, body)
                XCTAssertEqual(wrong.body?.field("error")?.field("target"), .string(target), body)
            }
            let unchanged = try await call(.GET, Self.scaleSet + "?api-version=2024-07-01", nil)
            XCTAssertEqual(unchanged.body?.field("properties")?.field("provisioningState"), .string("Succeeded"))

            let protect = try await call(.PUT, Self.scaleSet + "/virtualMachines/2?api-version=2024-07-01",
                                         #"{"properties": {"protectionPolicy": {"protectFromScaleIn": true}}}"#)
            XCTAssertEqual(protect.status, 200)
            XCTAssertEqual(protect.body?.field("properties")?.field("protectionPolicy")?.field("protectFromScaleIn"), .bool(true))
            let delete = try await call(.POST, Self.scaleSet + "/delete?api-version=2024-07-01", #"{"instanceIds": ["3", "3"]}"#)
            XCTAssertEqual(delete.status, 202)
            let after = try await call(.GET, Self.scaleSet + "?api-version=2024-07-01", nil)
            XCTAssertEqual(after.body?.field("sku")?.field("capacity"), .int(3))
            let gone = try await call(.DELETE, Self.scaleSet + "/virtualMachines/7?api-version=2024-07-01", nil)
            XCTAssertEqual(gone.status, 404)
            XCTAssertEqual(gone.error, "ResourceNotFound")
            XCTAssertTrue(gone.message?.contains("resource group 'g1'") ?? false)
            let listed = try await call(.GET, "/subscriptions/s1/providers/Microsoft.Compute/virtualMachineScaleSets?api-version=2024-07-01", nil)
            guard case .array(let sets)? = listed.body?.field("value") else { return XCTFail("no list") }
            XCTAssertEqual(sets.map { $0.field("name") }, [.string("web")])
        }
    }

    func testMetadataAndTheFakeAuthority() async throws {
        try await serving(.step) { call in
            let metadata = try await call(.GET, "//metadata/endpoints?api-version=2022-09-01", nil)
            XCTAssertEqual(metadata.status, 200)
            guard case .string(let manager)? = metadata.body?.field("resourceManager") else { return XCTFail("no resourceManager") }
            XCTAssertTrue(manager.hasPrefix("http://127.0.0.1:"))
            let openid = try await call(.GET, "/tenant-1/v2.0/.well-known/openid-configuration", nil)
            guard case .string(let tokenURL)? = openid.body?.field("token_endpoint") else { return XCTFail("no token endpoint") }
            XCTAssertTrue(tokenURL.hasSuffix("/tenant-1/oauth2/v2.0/token"))
            let subscriptions = try await call(.GET, "/subscriptions?api-version=2022-12-01", nil)
            guard case .array(let list)? = subscriptions.body?.field("value") else { return XCTFail("no subscriptions") }
            XCTAssertEqual(list.count, 1)
        }
    }
}
