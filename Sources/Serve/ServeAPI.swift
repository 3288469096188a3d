import AzureWire
import Formats
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import Scenario
import UpgradeEngine

/// The served API as a Hummingbird router: Compute's scale set subset (`ScaleSetRoutes`), the
/// long-running operations, the identity and metadata endpoints, the clock. Paths match ARM's
/// way: `ARMPaths` decodes percent-escaped segments and brings literal ones to the registered
/// spelling whatever their case; the router skips empty segments (a doubled slash).
/// Middleware: errors in ARM's shape (`ARMErrors`), the clock starting at the first request
/// (`ClockStart`), a bearer token on every ARM route (`BearerToken`) and an `api-version` on
/// the scale set's, one Compute serves (`APIVersionCheck`).
final class ServeAPI: Sendable {
    /// The resource group the subscription-wide list names (any group serves the scale set).
    static let resourceGroup = "rehearse"
    let run: ServedRun
    let scheme: String
    let maxBodyBytes: Int

    init(run: ServedRun, scheme: String, maxBodyBytes: Int) {
        self.run = run
        self.scheme = scheme
        self.maxBodyBytes = maxBodyBytes
    }

    /// What the application serves: the router, behind ARM's path matching.
    func responder() -> ARMPaths<RouterResponder<BasicRequestContext>> {
        let book = RouteBook()
        return ARMPaths(router(book).buildResponder(), literals: book.literals)
    }

    /// The literal segments of the routes registered, for `ARMPaths`.
    final class RouteBook {
        private(set) var literals: Set<String> = []

        /// `text` as the router's path, its literal segments noted.
        func path(_ text: String) -> RouterPath {
            for segment in text.split(separator: "/") where !segment.hasPrefix(":") && !segment.hasPrefix("{") {
                // Two spellings of one literal would leave one of them out of reach of other cases.
                assert(!literals.contains { $0 != segment && $0.lowercased() == segment.lowercased() }, "\(segment) is registered in two spellings")
                literals.insert(String(segment))
            }
            return RouterPath(text)
        }
    }

    /// Every route, as Hummingbird's examples lay a router out. Its comparisons are exact:
    /// `ARMPaths` brings a literal segment sent in any case to the spelling registered here.
    /// (With `.caseInsensitive`, Hummingbird lowercases both sides character by character:
    /// resolving a poll's path took 18% of serve's CPU under wrk, 9% without it.)
    func router(_ book: RouteBook) -> Router<BasicRequestContext> {
        let router = Router(context: BasicRequestContext.self)
        router.add(middleware: ARMErrors())
        router.add(middleware: ClockStart(run: run))
        // ARM's first: a `/subscriptions/…` path then never tries the authority's `/{tenant}/…`.
        armRoutes(router.group(book.path("subscriptions")).add(middleware: BearerToken()), book)
        router.get(book.path("metadata/endpoints")) { request, context in try await self.answer(request, context) { call in
            Reply.json(Authority(base: call.base).metadata)
        } }
        router.get(book.path("tenants")) { request, context in try await self.answer(request, context) { call in
            Reply.json(Authority(base: call.base).tenants)
        } }
        for method in [HTTPRequest.Method.get, .post] {
            router.on(book.path("rehearse/clock"), method: method) { request, context in try await self.answer(request, context) { call in
                try await self.clock(call)
            } }
        }
        identityRoutes(router, book)
        return router
    }

    // MARK: Calls

    /// The parts of a request the routes read.
    struct Call: Sendable {
        let method: HTTPRequest.Method
        /// The path as routed (percent escapes decoded), without the query.
        let path: String
        let query: [String: String]
        /// The path's parameters (`:subscription`, `:group`, `:name`, `:id`, …), as sent.
        let parameters: [String: String]
        /// `scheme://host[:port]` as the client addressed this server.
        let base: String
        let host: String
        let apiVersion: String
        let body: Body?
        /// `If-Match` and `If-None-Match` as sent (ETags, SPEC §6c).
        var ifMatch: String?
        var ifNoneMatch: String?

        /// A parameter of the route's path ("" when the route has none of that name).
        func parameter(_ name: String) -> String { parameters[name] ?? "" }

        /// `$expand=instanceView` (a comma list, any case, as the SDKs send it).
        var expandsInstanceView: Bool {
            query["$expand"]?.lowercased().split(separator: ",").contains { $0.trimmingCharacters(in: .whitespaces) == "instanceview" } ?? false
        }
    }

    /// Reads the request (its body bounded) and answers it with `body`. `form`: the route reads a
    /// form-encoded body (the token endpoint); every other route takes JSON and refuses other types.
    private func answer(_ request: Request, _ context: BasicRequestContext, form: Bool = false,
                        _ body: @Sendable (Call) async throws -> Response) async throws -> Response {
        var request = request
        let query = Self.form(request.uri.query ?? "")
        let host = request.head.authority ?? "127.0.0.1"
        var parameters: [String: String] = [:]
        for (key, value) in context.parameters { parameters[String(key)] = String(value) }
        let payload = try await readBody(&request, form: form)
        let call = Call(method: request.method, path: request.uri.path, query: query, parameters: parameters, base: "\(scheme)://\(host)",
                        host: host, apiVersion: query["api-version"] ?? "2024-07-01", body: payload,
                        ifMatch: request.headers[.ifMatch], ifNoneMatch: request.headers[.ifNoneMatch])
        return try await body(call)
    }

    // MARK: Bodies

    /// A request body: its text and, when it is JSON, the value.
    struct Body: Sendable {
        let raw: String
        let json: JSON?
    }

    /// Reads the body up to the bound; a larger one is 413, malformed JSON 400, and one whose
    /// Content-Type is not JSON 415 where the route takes JSON (ARM's codes).
    private func readBody(_ request: inout Request, form: Bool) async throws -> Body? {
        let length = request.headers[.contentLength]
        // HTTP/1.1: a request without Content-Length or Transfer-Encoding has no body (every poll).
        if length == nil && request.headers[.transferEncoding] == nil { return nil }
        if let length = length.flatMap(Int.init), length > maxBodyBytes { throw Self.tooLarge(length, maxBodyBytes) }
        let buffer: ByteBuffer
        do { buffer = try await request.collectBody(upTo: maxBodyBytes) } catch { throw Self.tooLarge(nil, maxBodyBytes) }
        guard buffer.readableBytes > 0 else { return nil }
        // Not UTF-8: refused whole, never read with U+FFFD in place of the bytes.
        guard let raw = String(validating: buffer.readableBytesView, as: UTF8.self) else {
            throw ARMError(.badRequest, code: "InvalidRequestContent",
                           message: "The request content was invalid and could not be deserialized: the body is not UTF-8 text.")
        }
        // The token endpoint reads a form, whatever the type says; every other route JSON, sent
        // as JSON or with no type at all (curl's `-d` sends a form's type: 415, as ARM answers).
        if form { return Body(raw: raw, json: nil) }
        if let type = request.headers[.contentType], !Self.isJSON(type) {
            let shown = String(type.prefix(100).unicodeScalars.filter { $0.value >= 0x20 && $0.value != 0x7F })
            throw ARMError(.unsupportedMediaType, code: "UnsupportedMediaType",
                           message: "The content media type '\(shown)' is not supported. Only 'application/json' is supported.")
        }
        do {
            return Body(raw: raw, json: try JSON.parse(raw, maxBytes: maxBodyBytes))
        } catch {
            throw ARMError(.badRequest, code: "InvalidRequestContent",
                           message: "The request content was invalid and could not be deserialized: the body \(error.problem).")
        }
    }

    /// Whether a Content-Type names JSON: `application/json`, `text/json` or a `+json` type,
    /// in any case, with or without parameters such as `charset`.
    static func isJSON(_ contentType: String) -> Bool {
        let media = contentType.split(separator: ";", maxSplits: 1).first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() } ?? ""
        return media == "application/json" || media == "text/json" || (media.hasPrefix("application/") && media.hasSuffix("+json"))
    }

    static func tooLarge(_ length: Int?, _ limit: Int) -> ARMError {
        ARMError(.contentTooLarge, code: "RequestContentTooLarge",
                 message: "The request content\(length.map { " of \($0) bytes" } ?? "") is larger than the \(limit) bytes allowed.")
    }

    /// `a=b&c=d`, percent-decoded, `+` as a space; the first of a repeated key wins. Split as
    /// bytes (every request's query is read here).
    static func form(_ text: String) -> [String: String] {
        var fields: [String: String] = [:]
        let decode = { (s: Substring.UTF8View) in
            let text = String(Substring(s))
            return s.contains { $0 == UInt8(ascii: "%") || $0 == UInt8(ascii: "+") }
                ? text.replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? text : text
        }
        for pair in text.utf8.split(separator: UInt8(ascii: "&")) {
            let equals = pair.firstIndex(of: UInt8(ascii: "=")) ?? pair.endIndex
            let key = decode(pair[..<equals])
            if fields[key] == nil { fields[key] = equals == pair.endIndex ? "" : decode(pair[pair.index(after: equals)...]) }
        }
        return fields
    }

    // MARK: Identity

    /// The fake Entra authority's routes, under any tenant.
    private func identityRoutes(_ router: Router<BasicRequestContext>, _ book: RouteBook) {
        for path in [":tenant/v2.0/.well-known/openid-configuration", ":tenant/.well-known/openid-configuration"] {
            router.get(book.path(path)) { request, context in try await self.answer(request, context) { call in
                Reply.json(Authority(base: call.base).openIDConfiguration(tenant: call.parameter("tenant")))
            } }
        }
        router.get(book.path(":tenant/discovery/instance")) { request, context in try await self.answer(request, context) { call in
            let tenant = call.parameter("tenant")
            return Reply.json(Authority(base: call.base).instanceDiscovery(host: call.host, tenant: tenant == "common" ? Authority.tenant : tenant))
        } }
        for path in [":tenant/discovery/v2.0/keys", ":tenant/discovery/keys"] {
            router.get(book.path(path)) { request, context in try await self.answer(request, context) { _ in
                Reply.json(.object(["keys": .array([])]))
            } }
        }
        for path in [":tenant/oauth2/v2.0/token", ":tenant/oauth2/token"] {
            router.post(book.path(path)) { request, context in try await self.answer(request, context, form: true) { call in
                let form = Self.form(call.body?.raw ?? "")
                guard form["grant_type"] != nil else {
                    return Reply.json(.object(["error": .string("invalid_request"),
                                               "error_description": .string("AADSTS900144: The request body must contain the following parameter: 'grant_type'.")]),
                                      status: .badRequest)
                }
                return Reply.json(try await Authority(base: call.base).token(form: form, tenant: call.parameter("tenant")))
            } }
        }
    }

    // MARK: Subscriptions and the scale set

    /// The routes below `/subscriptions` (ARM's: a bearer token required).
    private func armRoutes(_ arm: RouterGroup<BasicRequestContext>, _ book: RouteBook) {
        arm.get { request, context in try await self.answer(request, context) { call in
            Reply.json(Authority(base: call.base).subscriptions)
        } }
        arm.get(":subscription") { request, context in try await self.answer(request, context) { call in
            Reply.json(Authority(base: call.base).subscription(call.parameter("subscription")))
        } }
        arm.get(book.path(":subscription/providers/Microsoft.Compute/locations/:location/operations/:operation")) { request, context in
            try await self.answer(request, context) { call in
                try await self.operationStatus(call, id: call.parameter("operation"), monitor: call.query["monitor"]?.lowercased() == "true")
            }
        }
        // The subscription-wide list (`az vmss list` without a group): the scale set, in the resource group `rehearse`.
        arm.get(book.path(":subscription/providers/Microsoft.Compute/virtualMachineScaleSets")) { request, context in
            try await self.answer(request, context) { call in
                let answer = try await self.run.transact { run in
                    let id = "/subscriptions/\(call.parameter("subscription"))/resourceGroups/\(ServeAPI.resourceGroup)/providers/Microsoft.Compute/virtualMachineScaleSets/\(run.scaleSet.name)"
                    return Answer(body: .object(["value": .array([run.shapes(id: id).resource])]))
                }
                return Reply.answer(answer)
            }
        }
        arm.get(book.path(":subscription/resourceGroups/:group")) { request, context in try await self.answer(request, context) { call in
            let location = await self.run.scaleSet.location
            let group = call.parameter("group")
            return Reply.json(.object(["id": .string("/subscriptions/\(call.parameter("subscription"))/resourceGroups/\(group)"), "name": .string(group),
                                       "location": .string(location), "properties": .object(["provisioningState": .string("Succeeded")])]))
        } }
        let sets = arm.group(book.path(":subscription/resourceGroups/:group/providers/Microsoft.Compute/virtualMachineScaleSets")).add(middleware: APIVersionCheck())
        sets.get { request, context in try await self.answer(request, context) { call in
            let answer = try await self.run.transact { run in
                Answer(body: .object(["value": .array([run.shapes(id: "\(Self.listID(call))/\(run.scaleSet.name)").resource])]))
            }
            return Reply.answer(answer)
        } }
        for route in ScaleSetRoutes.all {
            sets.on(book.path(route.pattern.isEmpty ? ":name" : ":name/\(route.pattern)"), method: route.method) { request, context in
                try await self.answer(request, context) { call in try await self.scaleSet(call, route) }
            }
        }
    }

    /// `/subscriptions/{s}/resourceGroups/{g}/providers/Microsoft.Compute/virtualMachineScaleSets`, as the client spelled s and g.
    private static func listID(_ call: Call) -> String {
        "/subscriptions/\(call.parameter("subscription"))/resourceGroups/\(call.parameter("group"))/providers/Microsoft.Compute/virtualMachineScaleSets"
    }

    /// A route below the scale set: one request, one step (the whole answer computed in one call into the run).
    private func scaleSet(_ call: Call, _ route: ScaleSetRoute) async throws -> Response {
        let answer = try await run.transact { run in
            let name = run.name, sent = call.parameter("name")
            guard sent == name || sent.lowercased() == name.lowercased() else {
                throw ARMError.resourceNotFound("Microsoft.Compute/virtualMachineScaleSets", sent, group: call.parameter("group"))
            }
            let set = ScaleSetCall(call: call, id: "\(Self.listID(call))/\(name)", subscription: call.parameter("subscription"), body: call.body?.json)
            return try route.step(set, run)
        }
        return Reply.answer(answer)
    }

    // MARK: Long-running operations

    private func operationStatus(_ call: Call, id: String, monitor: Bool) async throws -> Response {
        let answer = try await run.transact { run in
            // Only an operation still in progress is a poll that may step the clock: one done when
            // it was accepted (every PATCH's) moves nothing, so az's and the SDK's poll after each
            // mutating call leaves the clock where the call left it.
            if run.operation(id)?.state == .inProgress { try run.polled() }
            guard let op = run.operation(id) else {
                throw ARMError(.notFound, code: "NotFound", message: "The operation \(id) was not found.")
            }
            if monitor {
                guard op.state == .inProgress else { return Answer() }
                return Answer(status: .accepted, headers: [(.location, "\(call.base)\(call.path)?monitor=true&api-version=\(call.apiVersion)"), (.retryAfter, "1")])
            }
            return Answer(body: op.json(epoch: run.epoch), headers: op.state == .inProgress ? [(.retryAfter, "1")] : [])
        }
        return Reply.answer(answer)
    }

    // MARK: The clock

    /// `GET /rehearse/clock` reads it; `POST` with `{"advance": "PT5M"}`, `{"to": "PT1H"}` or
    /// `{"step": true}` moves it forward.
    private func clock(_ call: Call) async throws -> Response {
        let json = call.body?.json
        let answer = try await run.transact { run in
            if call.method == .post { try Self.moveClock(run, json) }
            let now = run.now, next = run.nextEventTime, status = run.status
            var fields: [String: JSON] = ["now": .int(now), "time": .string(ISODuration.format(now)), "timestamp": .string(Timestamp.format(now, epoch: run.epoch)),
                                          "nextEvent": next.map(JSON.int) ?? .null, "rollingUpgrade": status.map { .string($0.code.rawValue) } ?? .null]
            switch run.mode {
            case .speed(let factor): fields["mode"] = .string("speed"); fields["speed"] = .double(factor)
            case .step: fields["mode"] = .string("step")
            }
            return Answer(body: .object(fields))
        }
        return Reply.answer(answer)
    }

    private static func moveClock(_ run: isolated ServedRun, _ json: JSON?) throws(ARMError) {
        guard let fields = json?.object, fields.count == 1, let (key, value) = fields.first else {
            throw ARMError(.badRequest, code: "InvalidRequestContent",
                           message: "POST /rehearse/clock takes one of {\"advance\": \"PT5M\"}, {\"to\": \"PT1H\"}, {\"step\": true}")
        }
        switch (key, value) {
        case ("advance", .string(let text)), ("to", .string(let text)):
            guard case .success(let ms) = ISODuration.parse(text) else {
                throw ARMError(.badRequest, code: "InvalidParameter", message: "\(key): '\(text)' is not an ISO 8601 duration such as PT5M", target: key)
            }
            let now = run.now
            guard key == "advance" || ms >= now else {
                throw ARMError(.badRequest, code: "InvalidParameter", message: "to: \(text) is before the clock (\(ISODuration.format(now))); the clock never goes back", target: key)
            }
            let (target, overflow) = key == "advance" ? now.addingReportingOverflow(ms) : (ms, false)
            guard !overflow, target <= ServedRun.latest else {
                throw ARMError(.badRequest, code: "InvalidParameter",
                               message: "\(key): \(text) takes the clock past \(ISODuration.format(ServedRun.latest)), the latest it reaches", target: key)
            }
            try run.advance(by: target - now)
        case ("step", .bool(true)):
            try run.stepToNextEvent()
        default:
            throw ARMError(.badRequest, code: "InvalidParameter",
                           message: "\(key): \(value.serialized(pretty: false)) is not allowed; allowed advance (a duration), to (a duration) or step (true)", target: key)
        }
    }
}
