import AsyncHTTPClient
import Formats
import NIOHTTP1
import Serve
import XCTest

/// `rehearse serve`'s router and middleware (issue 39, item 2): ARM's paths matched ignoring
/// case, doubled slashes and percent escapes; a method a path does not take is ARM's 404; ARM's
/// routes need a bearer token, the clock, metadata and identity routes do not.
final class ServeRouterTests: XCTestCase {
    static let version = "?api-version=2024-07-01"
    static let image = #"{"properties": {"virtualMachineProfile": {"storageProfile": {"imageReference": {"version": "2.0.0"}}}}}"#

    /// Serves ServeRoutesTests' scenario (4 instances, image 1.0.0) in step mode over HTTP.
    func serving(_ body: (_ client: HTTPClient, _ base: String) async throws -> Void) async throws {
        var configuration = ServeConfiguration()
        configuration.port = 0
        configuration.tls = false
        configuration.mode = .step
        _ = try await ServeRoutesTests.serve(try ServeRoutesTests.definition(), configuration, body)
    }

    static func imageVersion(_ reply: ServeRoutesTests.Reply) -> JSON? {
        reply.body?.field("properties")?.field("virtualMachineProfile")?.field("storageProfile")?.field("imageReference")?.field("version")
    }

    func testARMPathsMatchIgnoringCaseDoubledSlashesAndPercentEscapes() async throws {
        try await serving { client, base in
            let call = ServeRoutesTests.caller(client, base: base)
            let shouting = try await call(.GET, "/SUBSCRIPTIONS/s1/RESOURCEGROUPS/g1/PROVIDERS/MICROSOFT.COMPUTE/VIRTUALMACHINESCALESETS/WEB" + Self.version, nil)
            XCTAssertEqual(shouting.status, 200)
            XCTAssertEqual(shouting.body?.field("name"), .string("web"))
            XCTAssertEqual(shouting.body?.field("sku")?.field("capacity"), .int(4))
            // The id spells the subscription and group as the client did, and the set's own name.
            XCTAssertEqual(shouting.body?.field("id"), .string("/subscriptions/s1/resourceGroups/g1/providers/Microsoft.Compute/virtualMachineScaleSets/web"))

            let doubled = try await call(.GET, "//subscriptions/s1//resourceGroups/g1/providers/Microsoft.Compute//virtualMachineScaleSets/web/" + Self.version, nil)
            XCTAssertEqual(doubled.status, 200)
            XCTAssertEqual(doubled.body?.field("name"), .string("web"))

            let escaped = try await call(.GET, "/subscriptions/s1/resourceGroups/g1/providers/Microsoft.Compute/virtualMachineScaleSets/w%65b/virtualMachines/%32" + Self.version, nil)
            XCTAssertEqual(escaped.status, 200)
            XCTAssertEqual(escaped.body?.field("instanceId"), .string("2"))

            // An escaped separator stays part of its segment: no scale set has that name.
            let slash = try await call(.GET, "/subscriptions/s1/resourceGroups/g1/providers/Microsoft.Compute/virtualMachineScaleSets/w%2Feb" + Self.version, nil)
            XCTAssertEqual(slash.status, 404)
            XCTAssertEqual(slash.error, "ResourceNotFound")
        }
    }

    func testAMethodAPathDoesNotTakeIsARMsNotFound() async throws {
        try await serving { client, base in
            let call = ServeRoutesTests.caller(client, base: base)
            for (method, path) in [(HTTPMethod.DELETE, ServeRoutesTests.scaleSet + Self.version), (.PUT, "/rehearse/clock"),
                                   (.GET, ServeRoutesTests.scaleSet + "/rollingUpgrades/cancel" + Self.version)] {
                let reply = try await call(method, path, nil)
                XCTAssertEqual(reply.status, 404, "\(method) \(path)")
                XCTAssertEqual(reply.error, "NotFound", "\(method) \(path)")
            }
        }
    }

    func testARMRoutesNeedABearerTokenAndARefusedRequestChangesNothing() async throws {
        try await serving { client, base in
            let call = ServeRoutesTests.caller(client, base: base)
            let anonymous = ServeRoutesTests.caller(client, base: base, authorization: nil)
            let basic = ServeRoutesTests.caller(client, base: base, authorization: "Basic dXNlcjpwYXNz")
            let empty = ServeRoutesTests.caller(client, base: base, authorization: "Bearer ")
            for caller in [anonymous, basic, empty] {
                let patch = try await caller(.PATCH, ServeRoutesTests.scaleSet + Self.version, Self.image)
                XCTAssertEqual(patch.status, 401)
                XCTAssertEqual(patch.error, "AuthenticationFailed")
                let list = try await caller(.GET, "/subscriptions", nil)
                XCTAssertEqual(list.status, 401)
            }
            let model = try await call(.GET, ServeRoutesTests.scaleSet + Self.version, nil)
            XCTAssertEqual(Self.imageVersion(model), .string("1.0.0"))
            // Not ARM: the clock, the cloud's metadata and the authority answer without a token.
            let clock = try await anonymous(.GET, "/rehearse/clock", nil)
            XCTAssertEqual(clock.status, 200)
            XCTAssertEqual(clock.body?.field("now"), .int(0))
            let metadata = try await anonymous(.GET, "/metadata/endpoints?api-version=2022-09-01", nil)
            XCTAssertEqual(metadata.status, 200)
            let openid = try await anonymous(.GET, "/organizations/v2.0/.well-known/openid-configuration", nil)
            XCTAssertEqual(openid.status, 200)
            XCTAssertNotNil(openid.body?.field("token_endpoint"))
            // With a token, the same PATCH lands.
            let patched = try await call(.PATCH, ServeRoutesTests.scaleSet + Self.version, Self.image)
            XCTAssertEqual(patched.status, 200)
            XCTAssertEqual(Self.imageVersion(patched), .string("2.0.0"))
        }
    }

    /// Hostile paths and tokens: each answered in ARM's shape (or served, for a long token), and
    /// the server goes on serving.
    func testHostilePathsAndTokensAreAnsweredAndTheServerGoesOn() async throws {
        try await serving { client, base in
            let call = ServeRoutesTests.caller(client, base: base)
            let set = ServeRoutesTests.scaleSet
            let paths = [
                String(repeating: "/a", count: 10_000),
                set + "/%zz%" + Self.version,
                set + "/virtualMachines/%ff%fe" + Self.version,
                set + "/virtualMachines/%00" + Self.version,
                set + "/virtualMachines/" + String(repeating: "%41", count: 5_000) + Self.version,
                set + "/virtualMachines/99999999999999999999999" + Self.version,
                set + "/virtualMachines/-1" + Self.version,
            ]
            for path in paths {
                let reply = try await call(.GET, path, nil)
                XCTAssertEqual(reply.status, 404, String(path.prefix(80)))
                XCTAssertNotNil(reply.error, String(path.prefix(80)))
            }
            // 20,000 slashes before `subscriptions` are empty segments: the subscriptions list.
            let list = try await call(.GET, String(repeating: "/", count: 20_000) + "subscriptions", nil)
            guard case .array(let subscriptions)? = list.body?.field("value") else { return XCTFail("no list") }
            XCTAssertEqual(subscriptions.count, 1)
            // `%2E%2E` decodes to a name like any other (no dot-segment removal): the group's GET names it.
            let group = try await call(.GET, "/subscriptions/%2E%2E/resourceGroups/%2E%2E" + Self.version, nil)
            XCTAssertEqual(group.body?.field("id"), .string("/subscriptions/../resourceGroups/.."))
            for token in ["Bearer " + String(repeating: "x", count: 30_000), "bearer \u{00e9}t\u{00e9}", "BEARER a.b.c"] {
                let reply = try await ServeRoutesTests.caller(client, base: base, authorization: token)(.GET, set + Self.version, nil)
                XCTAssertEqual(reply.status, 200)
            }
            for token in ["Bearer", "Bearer    ", "Token abc", ""] {
                let reply = try await ServeRoutesTests.caller(client, base: base, authorization: token)(.GET, set + Self.version, nil)
                XCTAssertEqual(reply.status, 401, token)
                XCTAssertEqual(reply.error, "AuthenticationFailed", token)
            }
            let after = try await call(.GET, set + Self.version, nil)
            XCTAssertEqual(after.body?.field("sku")?.field("capacity"), .int(4))
        }
    }
}
