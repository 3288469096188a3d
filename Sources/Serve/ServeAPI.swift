import AzureWire
import Formats
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import Scenario
import UpgradeEngine

/// Routes every request: Compute's scale set subset, the long-running operations, the identity
/// and metadata endpoints, the clock. Paths match ARM's way: segments compared ignoring case,
/// empty segments (a doubled slash) ignored, any `api-version`.
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

    /// One request in, one response out; every failure is ARM's error body.
    func respond(_ request: Request) async -> Response {
        do {
            return try await route(request)
        } catch let error as ARMError {
            return Reply.error(error)
        } catch {
            return Reply.error(ARMError(.internalServerError, code: "InternalServerError", message: "\(error)"))
        }
    }

    /// The parts of a request the routes read.
    struct Call {
        let method: HTTPRequest.Method
        let path: String
        /// Path segments as sent, and lowercased for matching.
        let segments: [String]
        let lower: [String]
        let query: [String: String]
        /// `scheme://host[:port]` as the client addressed this server.
        let base: String
        let apiVersion: String

        /// `$expand=instanceView` (a comma list, any case, as the SDKs send it).
        var expandsInstanceView: Bool {
            query["$expand"]?.lowercased().split(separator: ",").contains { $0.trimmingCharacters(in: .whitespaces) == "instanceview" } ?? false
        }
    }

    private func route(_ request: Request) async throws -> Response {
        let target = request.head.path ?? "/"
        let (path, queryText) = Self.split(target)
        // Only a segment with a `%` has anything to decode (Foundation's decoding is costly per call).
        let segments = path.split(separator: "/", omittingEmptySubsequences: true).map { segment in
            segment.utf8.contains(UInt8(ascii: "%")) ? String(segment).removingPercentEncoding ?? String(segment) : String(segment)
        }
        let query = Self.form(queryText)
        let host = request.head.authority ?? "127.0.0.1"
        let call = Call(method: request.method, path: path, segments: segments, lower: segments.map { $0.lowercased() }, query: query,
                        base: "\(scheme)://\(host)", apiVersion: query["api-version"] ?? "2024-07-01")
        var request = request
        let body = try await readBody(&request, call)
        let l = call.lower
        switch l.first {
        case "metadata" where l == ["metadata", "endpoints"] && call.method == .get:
            return Reply.json(Authority(base: call.base).metadata)
        case "subscriptions":
            return try await subscriptions(call, body: body)
        case "tenants" where l.count == 1 && call.method == .get:
            return Reply.json(Authority(base: call.base).tenants)
        case "rehearse" where l == ["rehearse", "clock"]:
            return try await clock(call, body: body)
        default:
            if let response = try await identity(call, rawBody: body?.raw, host: host) { return response }
            throw ARMError.notFound(call.method, path)
        }
    }

    // MARK: Bodies

    /// A request body: its text and, when it is JSON, the value.
    struct Body {
        let raw: String
        let json: JSON?
    }

    /// Reads the body up to the bound; a larger one is 413, malformed JSON 400 (ARM's codes).
    private func readBody(_ request: inout Request, _ call: Call) async throws -> Body? {
        if let length = request.headers[.contentLength].flatMap(Int.init), length > maxBodyBytes { throw Self.tooLarge(length, maxBodyBytes) }
        let buffer: ByteBuffer
        do { buffer = try await request.collectBody(upTo: maxBodyBytes) } catch { throw Self.tooLarge(nil, maxBodyBytes) }
        guard buffer.readableBytes > 0 else { return nil }
        // Not UTF-8: refused whole, never read with U+FFFD in place of the bytes.
        guard let raw = String(validating: buffer.readableBytesView, as: UTF8.self) else {
            throw ARMError(.badRequest, code: "InvalidRequestContent",
                           message: "The request content was invalid and could not be deserialized: the body is not UTF-8 text.")
        }
        let isForm = request.headers[.contentType]?.lowercased().hasPrefix("application/x-www-form-urlencoded") ?? false
        if isForm { return Body(raw: raw, json: nil) }
        do {
            return Body(raw: raw, json: try JSON.parse(raw, maxBytes: maxBodyBytes))
        } catch {
            throw ARMError(.badRequest, code: "InvalidRequestContent",
                           message: "The request content was invalid and could not be deserialized: \(error.problem).")
        }
    }

    static func tooLarge(_ length: Int?, _ limit: Int) -> ARMError {
        ARMError(.contentTooLarge, code: "RequestContentTooLarge",
                 message: "The request content\(length.map { " of \($0) bytes" } ?? "") is larger than the \(limit) bytes allowed.")
    }

    static func split(_ target: String) -> (String, String) {
        guard let mark = target.firstIndex(of: "?") else { return (target, "") }
        return (String(target[..<mark]), String(target[target.index(after: mark)...]))
    }

    /// `a=b&c=d`, percent-decoded, `+` as a space; the first of a repeated key wins.
    static func form(_ text: String) -> [String: String] {
        var fields: [String: String] = [:]
        for pair in text.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let decode = { (s: Substring) in
                s.utf8.contains { $0 == UInt8(ascii: "%") || $0 == UInt8(ascii: "+") }
                    ? String(s).replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? String(s) : String(s)
            }
            let key = decode(parts[0])
            if fields[key] == nil { fields[key] = parts.count > 1 ? decode(parts[1]) : "" }
        }
        return fields
    }

    // MARK: Identity

    /// The fake Entra authority's routes, under any tenant; nil when the path is none of them.
    private func identity(_ call: Call, rawBody: String?, host: String) async throws -> Response? {
        let l = call.lower, authority = Authority(base: call.base)
        guard l.count >= 2 else { return nil }
        let tenant = call.segments[0]
        switch Array(l.dropFirst()) {
        case ["v2.0", ".well-known", "openid-configuration"], [".well-known", "openid-configuration"]:
            return Reply.json(authority.openIDConfiguration(tenant: tenant))
        case ["discovery", "instance"]:
            return Reply.json(authority.instanceDiscovery(host: host, tenant: tenant == "common" ? Authority.tenant : tenant))
        case ["discovery", "v2.0", "keys"], ["discovery", "keys"]:
            return Reply.json(.object(["keys": .array([])]))
        case ["oauth2", "v2.0", "token"], ["oauth2", "token"]:
            guard call.method == .post else { return nil }
            let form = Self.form(rawBody ?? "")
            guard form["grant_type"] != nil else {
                return Reply.json(.object(["error": .string("invalid_request"),
                                           "error_description": .string("AADSTS900144: The request body must contain the following parameter: 'grant_type'.")]),
                                  status: .badRequest)
            }
            return Reply.json(try await authority.token(form: form, tenant: tenant))
        default:
            return nil
        }
    }

    // MARK: Subscriptions and the scale set

    private func subscriptions(_ call: Call, body: Body?) async throws -> Response {
        let l = call.lower, s = call.segments, authority = Authority(base: call.base)
        if l.count == 1, call.method == .get { return Reply.json(authority.subscriptions) }
        guard l.count >= 2 else { throw ARMError.notFound(call.method, call.path) }
        if l.count == 2, call.method == .get { return Reply.json(authority.subscription(s[1])) }
        // …/providers/Microsoft.Compute/locations/{l}/operations/{id}
        if l.count == 8, l[2] == "providers", l[3] == "microsoft.compute", l[4] == "locations", l[6] == "operations", call.method == .get {
            return try await operationStatus(call, id: s[7], monitor: call.query["monitor"]?.lowercased() == "true")
        }
        // The subscription-wide list (`az vmss list` without a group): the scale set, in the resource group `rehearse`.
        if l.count == 5, l[2] == "providers", l[3] == "microsoft.compute", l[4] == "virtualmachinescalesets", call.method == .get {
            let answer = try await run.transact { run in
                let id = "/subscriptions/\(s[1])/resourceGroups/\(ServeAPI.resourceGroup)/providers/Microsoft.Compute/virtualMachineScaleSets/\(run.scaleSet.name)"
                return Answer(body: .object(["value": .array([run.shapes(id: id).resource])]))
            }
            return Reply.answer(answer)
        }
        guard l.count >= 4, l[2] == "resourcegroups" else { throw ARMError.notFound(call.method, call.path) }
        if l.count == 4, call.method == .get {
            let location = await run.scaleSet.location
            return Reply.json(.object(["id": .string("/subscriptions/\(s[1])/resourceGroups/\(s[3])"), "name": .string(s[3]),
                                       "location": .string(location), "properties": .object(["provisioningState": .string("Succeeded")])]))
        }
        guard l.count >= 7, l[4] == "providers", l[5] == "microsoft.compute", l[6] == "virtualmachinescalesets" else {
            throw ARMError.notFound(call.method, call.path)
        }
        guard call.query["api-version"] != nil else {
            throw ARMError(.badRequest, code: "MissingApiVersionParameter", message: "The api-version query parameter (?api-version=) is required for all requests.")
        }
        let rest = Array(s.dropFirst(8)), lowered = Array(l.dropFirst(8))
        let route = l.count > 7 ? ScaleSetRoutes.find(call.method, lowered) : nil
        let json = body?.json
        // One request, one step: the whole answer is computed in one call into the run.
        let answer = try await run.transact { run in
            let name = run.scaleSet.name
            let listID = "/subscriptions/\(s[1])/resourceGroups/\(s[3])/providers/Microsoft.Compute/virtualMachineScaleSets"
            if l.count == 7 {
                guard call.method == .get else { throw ARMError.notFound(call.method, call.path) }
                return Answer(body: .object(["value": .array([run.shapes(id: "\(listID)/\(name)").resource])]))
            }
            guard s[7] == name || l[7] == name.lowercased() else {
                throw ARMError.resourceNotFound("Microsoft.Compute/virtualMachineScaleSets", s[7], group: s[3])
            }
            guard let route else { throw ARMError.notFound(call.method, call.path) }
            return try route.step(ScaleSetCall(call: call, rest: rest, id: "\(listID)/\(name)", subscription: s[1], body: json), run)
        }
        return Reply.answer(answer)
    }

    // MARK: Long-running operations

    private func operationStatus(_ call: Call, id: String, monitor: Bool) async throws -> Response {
        let answer = try await run.transact { run in
            try run.polled()
            guard let op = run.operation(id) else {
                throw ARMError(.notFound, code: "NotFound", message: "The operation \(id) was not found.")
            }
            if monitor {
                guard op.state == .inProgress else { return Answer() }
                return Answer(status: .accepted, headers: [(.location, "\(call.base)\(call.path)?monitor=true&api-version=\(call.apiVersion)"), (.retryAfter, "1")])
            }
            return Answer(body: op.json, headers: op.state == .inProgress ? [(.retryAfter, "1")] : [])
        }
        return Reply.answer(answer)
    }

    // MARK: The clock

    /// `GET /rehearse/clock` reads it; `POST` with `{"advance": "PT5M"}`, `{"to": "PT1H"}` or
    /// `{"step": true}` moves it forward.
    private func clock(_ call: Call, body: Body?) async throws -> Response {
        let json = body?.json
        let answer = try await run.transact { run in
            switch call.method {
            case .get: break
            case .post: try Self.moveClock(run, json)
            default: throw ARMError.notFound(call.method, call.path)
            }
            let now = run.now, next = run.nextEventTime, status = run.status
            var fields: [String: JSON] = ["now": .int(now), "time": .string(ISODuration.format(now)), "timestamp": .string(Timestamp.format(now)),
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
