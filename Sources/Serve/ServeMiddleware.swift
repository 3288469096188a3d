import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import Synchronization
import AzureWire

/// Every error a route or the router ends with, answered in ARM's shape: an `ARMError` as it
/// is; the router's own 404 (no route for the path and method) as ARM's `NotFound` naming them;
/// any other error as a 500 `InternalServerError`, never Hummingbird's plain-text body.
struct ARMErrors<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as ARMError {
            throw error
        } catch let error as HTTPError where error.status == .notFound {
            throw ARMError.notFound(request.method, request.uri.path)
        } catch let error as any HTTPResponseError {
            throw ARMError(error.status, code: error.status.reasonPhrase.replacingOccurrences(of: " ", with: ""), message: "\(error)")
        } catch {
            throw ARMError(.internalServerError, code: "InternalServerError", message: "\(error)")
        }
    }
}

/// The virtual clock (speed mode) starts running when the first request arrives, whichever it
/// is (unless `--start-at` set it): a pipeline started some seconds after the server sees the
/// scenario's timeline from its start.
final class ClockStart<Context: RequestContext>: RouterMiddleware, Sendable {
    let run: ServedRun
    /// Set by the first request; later ones skip the call into the run.
    private let started = Atomic<Bool>(false)

    init(run: ServedRun) { self.run = run }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        if !started.load(ordering: .relaxed), started.compareExchange(expected: false, desired: true, ordering: .relaxed).exchanged {
            await run.startClock(at: ContinuousClock.now)
        }
        return try await next(request, context)
    }
}

/// ARM's routes need `Authorization: Bearer <token>`, as Azure Resource Manager answers without
/// one: 401 `AuthenticationFailed`. Nobody verifies the token (the fake authority signs each
/// with a fresh key); any bearer token is accepted.
struct BearerToken<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard let header = request.headers[.authorization] else {
            throw ARMError(.unauthorized, code: "AuthenticationFailed", message: "Authentication failed. The 'Authorization' header is missing.")
        }
        guard Self.isBearer(header) else {
            throw ARMError(.unauthorized, code: "AuthenticationFailed",
                           message: "Authentication failed. The 'Authorization' header is provided in an invalid format; allowed 'Bearer <token>'.")
        }
        return try await next(request, context)
    }

    /// `Bearer <token>`: the scheme in any case after any spaces, then a token that is not all
    /// white space. Read as bytes (every request pays for it); a token of non-ASCII bytes alone
    /// is judged by Foundation's white space.
    static func isBearer(_ header: String) -> Bool {
        let bytes = header.utf8
        guard let start = bytes.firstIndex(where: { $0 != UInt8(ascii: " ") }) else { return false }
        let scheme = bytes[start...].prefix { $0 != UInt8(ascii: " ") }
        guard scheme.count == 6, zip(scheme, "bearer".utf8).allSatisfy({ $0 | 0x20 == $1 }), scheme.endIndex < bytes.endIndex else { return false }
        let token = bytes[bytes.index(after: scheme.endIndex)...]
        if token.contains(where: { $0 > 0x20 && $0 < 0x7F }) { return true }
        return !String(Substring(token)).trimmingCharacters(in: .whitespaces).isEmpty
    }
}

/// The scale set's routes need `?api-version=` naming a version Compute serves, as ARM answers:
/// none is 400 `MissingApiVersionParameter`; one it does not serve (`2099-01-01`, `1`) is 400
/// `InvalidApiVersionParameter` listing the versions served (`AzureWire.APIVersion.served`).
struct APIVersionCheck<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard let version = Self.version(request.uri.query ?? "") else {
            throw ARMError(.badRequest, code: "MissingApiVersionParameter", message: "The api-version query parameter (?api-version=) is required for all requests.")
        }
        guard AzureWire.APIVersion.isServed(version) else {
            throw ARMError(.badRequest, code: "InvalidApiVersionParameter", message: AzureWire.APIVersion.invalidMessage(version))
        }
        return try await next(request, context)
    }

    /// The first `api-version` of the query, percent-decoded (the route reads the same one); nil
    /// when there is none.
    static func version(_ query: String) -> String? {
        for pair in query.utf8.split(separator: UInt8(ascii: "&")) where pair.starts(with: "api-version".utf8) {
            if pair.count == 11 { return "" }
            guard pair.dropFirst(11).first == UInt8(ascii: "=") else { continue }
            let text = String(Substring(pair.dropFirst(12)))
            return text.contains("%") || text.contains("+") ? text.replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? text : text
        }
        return nil
    }
}

/// ARM's paths before routing: a percent-escaped segment is decoded (`virtualMachineScaleSets/w%65b`
/// names `web`) unless its decoding would add a separator (`/`, `?`, `#`); a segment that equals
/// one of the routes' literals ignoring case (`VIRTUALMACHINESCALESETS`) takes the literal's
/// spelling, so that the router compares bytes. A name that equals a literal ignoring case but
/// not exactly (a resource group `Providers`) is read in the literal's spelling. Doubled slashes
/// are the router's (empty segments skipped). A path with nothing to change is passed on as it is.
struct ARMPaths<Responder: HTTPResponder>: HTTPResponder {
    let router: Responder
    /// The literals as registered.
    private let exact: Set<Substring>
    /// The literals by their lowercased spelling.
    private let spelling: [Substring: Substring]
    /// The literals' bytes by their length: a segment is compared with those of its length only.
    private let byLength: [Int: [[UInt8]]]

    init(_ router: Responder, literals: Set<String>) {
        self.router = router
        exact = Set(literals.map { Substring($0) })
        spelling = Dictionary(literals.map { (Substring($0.lowercased()), Substring($0)) }, uniquingKeysWith: { first, _ in first })
        byLength = Dictionary(grouping: literals.map { Array($0.utf8) }, by: \.count)
    }

    func respond(to request: Request, context: Responder.Context) async throws -> Response {
        let target = request.head.path ?? "/"
        guard let path = normalized(target) else { return try await router.respond(to: request, context: context) }
        var head = request.head
        head.path = path
        return try await router.respond(to: Request(head: head, body: request.body), context: context)
    }

    /// `target` with its segments decoded and its literals respelled; nil when nothing changes.
    func normalized(_ target: String) -> String? {
        // Most paths (every poll) need nothing: found without building a string or an array.
        guard mayChange(target.utf8.span) else { return nil }
        // Bytes, not characters: splitting by Character cost 2% of a poll's CPU time.
        let mark = target.utf8.firstIndex(of: UInt8(ascii: "?")) ?? target.utf8.endIndex
        var changed = false
        let segments = target.utf8[..<mark].split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false).map { sent -> Substring in
            var segment = Substring(sent)
            if segment.utf8.contains(UInt8(ascii: "%")), let decoded = String(segment).removingPercentEncoding,
               !decoded.contains(where: { $0 == "/" || $0 == "?" || $0 == "#" }) {
                segment = Substring(decoded)
                changed = true
            }
            guard !segment.isEmpty, !exact.contains(segment) else { return segment }
            let lowered = segment.utf8.contains(where: { $0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z") }) ? Substring(segment.lowercased()) : segment
            guard let literal = spelling[lowered] else { return segment }
            changed = true
            return literal
        }
        return changed ? segments.joined(separator: "/") + target[mark...] : nil
    }

    /// Whether a segment of the path (before `?`) might read differently once decoded and
    /// respelled: it has an escape or a byte past ASCII (Unicode case folding is `normalized`'s
    /// to judge), or it equals a literal in ASCII letters of another case.
    private func mayChange(_ path: Span<UInt8>) -> Bool {
        var start = 0
        for end in 0...path.count {
            let byte = end < path.count ? path[end] : UInt8(ascii: "/")
            if byte == UInt8(ascii: "%") || byte >= 0x80 { return true }
            guard byte == UInt8(ascii: "/") || byte == UInt8(ascii: "?") else { continue }
            if let literals = byLength[end - start] {
                for literal in literals where Self.foldsEqual(path, from: start, literal) {
                    if !(0..<literal.count).allSatisfy({ path[start + $0] == literal[$0] }) { return true }
                }
            }
            if byte == UInt8(ascii: "?") { return false }
            start = end + 1
        }
        return false
    }

    /// Whether `path` from `start` holds `literal`'s bytes, ignoring the case of ASCII letters.
    private static func foldsEqual(_ path: Span<UInt8>, from start: Int, _ literal: [UInt8]) -> Bool {
        for offset in 0..<literal.count {
            let a = path[start + offset], b = literal[offset]
            guard a == b || (a | 0x20 == b | 0x20 && (a | 0x20) >= UInt8(ascii: "a") && (a | 0x20) <= UInt8(ascii: "z")) else { return false }
        }
        return true
    }
}
