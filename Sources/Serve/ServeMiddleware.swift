import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import Synchronization

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
/// one: 401 `AuthenticationFailed` with a `WWW-Authenticate` challenge. Nobody verifies the token
/// (the fake authority signs each with a fresh key); any bearer token is accepted.
struct BearerToken<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard let header = request.headers[.authorization] else {
            throw ARMError(.unauthorized, code: "AuthenticationFailed", message: "Authentication failed. The 'Authorization' header is missing.")
        }
        let parts = header.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        guard parts.count == 2, parts[0].lowercased() == "bearer", !parts[1].trimmingCharacters(in: .whitespaces).isEmpty else {
            throw ARMError(.unauthorized, code: "AuthenticationFailed",
                           message: "Authentication failed. The 'Authorization' header is provided in an invalid format; allowed 'Bearer <token>'.")
        }
        return try await next(request, context)
    }
}

/// The scale set's routes need `?api-version=` (any version), as ARM answers without one.
struct APIVersion<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard request.uri.queryParameters["api-version"] != nil else {
            throw ARMError(.badRequest, code: "MissingApiVersionParameter", message: "The api-version query parameter (?api-version=) is required for all requests.")
        }
        return try await next(request, context)
    }
}

/// ARM's paths before routing: a percent-escaped segment is decoded (`virtualMachineScaleSets/w%65b`
/// names `web`), unless its decoding would add a separator (`/`, `?`, `#`) or is not UTF-8.
/// Case and doubled slashes are the router's (`.caseInsensitive`, empty segments skipped).
struct ARMPaths<Responder: HTTPResponder>: HTTPResponder {
    let router: Responder

    init(_ router: Responder) { self.router = router }

    func respond(to request: Request, context: Responder.Context) async throws -> Response {
        let target = request.head.path ?? "/"
        guard target.utf8.contains(UInt8(ascii: "%")) else { return try await router.respond(to: request, context: context) }
        let mark = target.firstIndex(of: "?") ?? target.endIndex
        let path = target[..<mark].split(separator: "/", omittingEmptySubsequences: false).map { segment -> Substring in
            guard segment.utf8.contains(UInt8(ascii: "%")), let decoded = String(segment).removingPercentEncoding,
                  !decoded.contains(where: { $0 == "/" || $0 == "?" || $0 == "#" }) else { return segment }
            return Substring(decoded)
        }.joined(separator: "/")
        var head = request.head
        head.path = path + target[mark...]
        return try await router.respond(to: Request(head: head, body: request.body), context: context)
    }
}
