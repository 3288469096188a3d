import AsyncHTTPClient
import Formats
import NIOCore
import NIOHTTP1
@testable import Serve
import UpgradeEngine
import XCTest

/// How serve reads what real clients send besides JSON ids: `["*"]` (what `az vmss restart`,
/// `stop` and their kin send when no id is given), the lists Azure requires, and a body sent as
/// a form (curl's `-d` without a content type).
final class ServeInstanceListTests: XCTestCase {
    static let scaleSet = ServeRoutesTests.scaleSet
    static let version = "?api-version=2024-07-01"

    static func target(_ reply: ServeRoutesTests.Reply) -> String? {
        guard case .string(let text)? = reply.body?.field("error")?.field("target") else { return nil }
        return text
    }

    func testAStarIsEveryInstanceAndTheListsAzureRequiresAreRequired() async throws {
        let definition = try ServeRoutesTests.definition()
        let (record, _) = try await ServeStepTests.served(definition, .step) { call in
            _ = try await call(.POST, "/rehearse/clock", #"{"to": "PT1M"}"#)
            let restart = try await call(.POST, Self.scaleSet + "/restart" + Self.version, #"{"instanceIds": ["*"]}"#)
            XCTAssertEqual(restart.status, 202)
            let mixed = try await call(.POST, Self.scaleSet + "/restart" + Self.version, #"{"instanceIds": ["*", "1"]}"#)
            XCTAssertEqual(mixed.status, 400)
            XCTAssertEqual(Self.target(mixed), "instanceIds")
            // An id is digits only: Int would read "+1" as 1 and "-0" as 0.
            for signed in ["+1", "-0"] {
                let refused = try await call(.POST, Self.scaleSet + "/restart" + Self.version, #"{"instanceIds": ["\#(signed)"]}"#)
                XCTAssertEqual(refused.status, 400, signed)
                XCTAssertEqual(Self.target(refused), "instanceIds", signed)
            }

            // UpdateInstances requires its list: none, or an empty one, is 400 naming it.
            for body in ["{}", #"{"instanceIds": []}"#] {
                let refused = try await call(.POST, Self.scaleSet + "/manualupgrade" + Self.version, body)
                XCTAssertEqual(refused.status, 400, body)
                XCTAssertEqual(Self.target(refused), "instanceIds", body)
            }
            let every = try await call(.POST, Self.scaleSet + "/manualupgrade" + Self.version, #"{"instanceIds": ["*"]}"#)
            XCTAssertEqual(every.status, 202)

            // Protection from scale set actions refuses a restart naming the instance, not a delete
            // naming it: instance protection does not block a user's delete of an instance.
            let protect = try await call(.PUT, Self.scaleSet + "/virtualMachines/3" + Self.version,
                                         #"{"properties": {"protectionPolicy": {"protectFromScaleSetActions": true}}}"#)
            XCTAssertEqual(protect.status, 200)
            let protectedRestart = try await call(.POST, Self.scaleSet + "/restart" + Self.version, #"{"instanceIds": ["3"]}"#)
            XCTAssertEqual(protectedRestart.status, 409)
            let deleteProtected = try await call(.POST, Self.scaleSet + "/delete" + Self.version, #"{"instanceIds": ["3"]}"#)
            XCTAssertEqual(deleteProtected.status, 202)
            let deleteNone = try await call(.POST, Self.scaleSet + "/delete" + Self.version, #"{"instanceIds": []}"#)
            XCTAssertEqual(deleteNone.status, 400)
            XCTAssertEqual(Self.target(deleteNone), "instanceIds")
            let deleteRest = try await call(.POST, Self.scaleSet + "/delete" + Self.version, #"{"instanceIds": ["*"]}"#)
            XCTAssertEqual(deleteRest.status, 202)
        }
        let restarts = record.events.compactMap { event -> Int? in
            if case .restart(nil, let restarting) = event.payload { return restarting }
            return nil
        }
        XCTAssertEqual(restarts, [4])
        let upgrades = record.events.compactMap { event -> Int? in
            if case .manualUpgrade(nil, let upgrading, _) = event.payload { return upgrading }
            return nil
        }
        // Every instance already runs the model: nothing to upgrade, and one event for `*`.
        XCTAssertEqual(upgrades, [0])
        let deletions = record.events.compactMap { event -> [Int]? in
            if case .scaled(_, _, let deleted, _) = event.payload { return deleted }
            return nil
        }
        XCTAssertEqual(deletions, [[3], [0, 1, 2]])
    }

    func testAFormBodyIs415WhereJSONIsTakenAndReadByTheTokenEndpoint() async throws {
        let definition = try ServeRoutesTests.definition()
        var configuration = ServeConfiguration()
        configuration.port = 0
        configuration.tls = false
        configuration.mode = .step
        _ = try await ServeRoutesTests.serve(definition, configuration) { (client: HTTPClient, base: String) in
            func send(_ method: HTTPMethod, _ path: String, _ body: String) async throws -> ServeRoutesTests.Reply {
                var request = HTTPClientRequest(url: base + path)
                request.method = method
                request.headers.add(name: "Authorization", value: "Bearer rehearse-test")
                request.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
                request.body = .bytes(ByteBuffer(string: body))
                let response = try await client.execute(request, timeout: .seconds(30))
                let bytes = try await response.body.collect(upTo: 1 << 20)
                return ServeRoutesTests.Reply(status: Int(response.status.code), headers: response.headers,
                                              body: bytes.readableBytes == 0 ? nil : try JSON.parse(String(buffer: bytes)))
            }
            let patch = try await send(.PATCH, Self.scaleSet + Self.version, #"{"sku": {"capacity": 2}}"#)
            XCTAssertEqual(patch.status, 415)
            XCTAssertEqual(patch.error, "UnsupportedMediaType")
            let clock = try await send(.POST, "/rehearse/clock", #"{"step": true}"#)
            XCTAssertEqual(clock.status, 415)
            XCTAssertTrue(ServeAPI.isJSON("Application/JSON; charset=utf-8") && ServeAPI.isJSON("application/merge-patch+json") && ServeAPI.isJSON(" text/json"))
            XCTAssertFalse(ServeAPI.isJSON("text/plain") || ServeAPI.isJSON("multipart/form-data; boundary=x") || ServeAPI.isJSON("application/jsonx"))
            let token = try await send(.POST, "/tenant-1/oauth2/v2.0/token", "grant_type=client_credentials&client_id=a&client_secret=b&scope=x")
            XCTAssertEqual(token.status, 200)
            XCTAssertNotNil(token.body?.field("access_token"))
            // The refused PATCH changed nothing.
            let shown = try await ServeRoutesTests.caller(client, base: base)(.GET, Self.scaleSet + Self.version, nil)
            XCTAssertEqual(shown.body?.field("sku")?.field("capacity"), .int(4))
        }
    }
}
