import AsyncHTTPClient
public import Foundation
import NIOCore
import NIOHTTP1
import NIOSSL
public import UpgradeEngine

/// One real probe of a live endpoint, made the way the Application Health extension makes it:
/// an HTTP(S) GET under one 30 s deadline that follows no redirect, does not verify certificates
/// and reads a bounded, never decompressed body, or a TCP connect. The reply
/// is judged by the engine's own rules (`HealthExtensionSettings.evaluate`).
public struct EndpointProbe: Sendable {
    /// What was probed and what came back, before judging.
    public struct Outcome: Sendable {
        /// The answer as the engine judges it (HTTP status and body, TCP connect, or no answer).
        public var reply: ProbeReply
        /// Why there was no answer (timeout, refused connection, …), when there was none.
        public var failure: String?
        /// Bytes of body read (at most the bound plus one).
        public var bodyBytes: Int
    }

    /// What is probed.
    public let url: URL
    /// Seconds to wait for an answer (the extension waits 30).
    public var timeout: TimeInterval
    /// Bytes of body read before giving up on it.
    public var maxBodyBytes: Int

    /// Parses `http://…`, `https://…` or `tcp://host:port`, explaining what is wrong otherwise.
    public init(_ text: String, timeout: TimeInterval = 30, maxBodyBytes: Int = maxProbeBodyBytes) throws(EngineError) {
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), let host = url.host, !host.isEmpty else {
            throw EngineError("'\(text)' is not a URL such as http://127.0.0.1:8000/health or tcp://127.0.0.1:22")
        }
        guard ["http", "https", "tcp"].contains(scheme) else {
            throw EngineError("'\(text)': scheme \(scheme) is not probed by the health extension; allowed http, https, tcp")
        }
        if scheme == "tcp" && url.port == nil { throw EngineError("'\(text)': a tcp probe needs a port, e.g. tcp://127.0.0.1:22") }
        guard timeout > 0, timeout <= 30 else { throw EngineError("timeout \(timeout) s: allowed more than 0 and at most 30 seconds") }
        self.url = url
        self.timeout = timeout
        self.maxBodyBytes = maxBodyBytes
    }

    /// The protocol the URL names.
    public var probeProtocol: ProbeProtocol { ProbeProtocol(rawValue: url.scheme!.lowercased())! }

    /// Health extension settings matching this probe (rich states unless `binary`).
    public func settings(binary: Bool) -> HealthExtensionSettings {
        let path = url.path.isEmpty ? "/" : url.path + (url.query.map { "?\($0)" } ?? "")
        return HealthExtensionSettings(protocol: probeProtocol, port: url.port, requestPath: path,
                                       typeHandlerVersion: binary ? "1.0" : "2.0")
    }

    /// Makes the probe. Blocks until the answer, the timeout or the body bound.
    public func run() -> Outcome {
        probeProtocol == .tcp ? connect() : get()
    }

    /// The GET, blocking the calling thread until the outcome (the command line is synchronous).
    private func get() -> Outcome {
        let probe = self
        return blockingWait { await probe.fetch() }
    }

    /// One GET under one overall deadline (connect, head and body together: a server that sends
    /// a byte now and then cannot keep it going), reading at most `maxBodyBytes + 1` bytes of a
    /// body that is never decompressed (no Accept-Encoding is sent, as the extension sends none),
    /// following no redirect and, as the extension, not verifying https certificates.
    func fetch() async -> Outcome {
        var configuration = HTTPClient.Configuration(certificateVerification: .none, redirectConfiguration: .disallow)
        configuration.decompression = .disabled
        configuration.timeout = HTTPClient.Configuration.Timeout(connect: .seconds(Int64(timeout.rounded(.up))))
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        let url = self.url.absoluteString, limit = maxBodyBytes, seconds = timeout
        let outcome: Outcome
        do {
            outcome = try await withThrowingTaskGroup(of: Outcome.self) { group in
                group.addTask {
                    var request = HTTPClientRequest(url: url)
                    request.method = .GET
                    let response = try await client.execute(request, timeout: .seconds(Int64(seconds.rounded(.up)) + 1))
                    var body: [UInt8] = []
                    for try await chunk in response.body {
                        body += chunk.readableBytesView.prefix(limit + 1 - body.count)
                        if body.count > limit { break }
                    }
                    return Outcome(reply: .http(status: Int(response.status.code), body: String(decoding: body, as: UTF8.self)),
                                   failure: nil, bodyBytes: body.count)
                }
                group.addTask {
                    try await Task.sleep(nanoseconds: UInt64(seconds * 1_000_000_000))
                    return Outcome(reply: .noAnswer, failure: "timed out: no complete answer within \(Self.format(seconds)) s", bodyBytes: 0)
                }
                let first = try await group.next()!
                group.cancelAll()
                return first
            }
        } catch {
            outcome = Outcome(reply: .noAnswer, failure: Self.describe(error), bodyBytes: 0)
        }
        try? await client.shutdown()
        return outcome
    }

    static func format(_ seconds: TimeInterval) -> String {
        seconds == seconds.rounded() ? String(Int(seconds)) : String(seconds)
    }

    /// The usual network failures in words.
    static func describe(_ error: any Error) -> String {
        if let io = error as? IOError, io.errnoCode == ECONNREFUSED { return "connection refused" }
        if let client = error as? HTTPClientError {
            switch client {
            case .connectTimeout, .deadlineExceeded, .readTimeout: return "timed out"
            case .remoteConnectionClosed: return "the server closed the connection without an answer"
            default: return "\(client)"
            }
        }
        let text = String(describing: error)
        if text.contains("connectionRefused") || text.contains("Connection refused") { return "connection refused" }
        return text
    }

    private func connect() -> Outcome {
        let opened = TCPConnect.open(host: url.host!, port: url.port!, timeout: timeout)
        return Outcome(reply: .tcp(connected: opened == nil), failure: opened, bodyBytes: 0)
    }
}

/// Runs `body` in a task and blocks the calling thread until it returns (the command line is
/// synchronous). The box hands the value from the task to the waiting thread; the semaphore
/// orders the write before the read, hence `@unchecked Sendable`.
func blockingWait<T: Sendable>(_ body: @escaping @Sendable () async -> T) -> T {
    let box = WaitBox<T>()
    let done = DispatchSemaphore(value: 0)
    Task {
        box.value = await body()
        done.signal()
    }
    done.wait()
    return box.value!
}

/// Where `blockingWait`'s task leaves its value for the waiting thread.
final class WaitBox<T>: @unchecked Sendable {  // safe: written once by the task before the semaphore's signal, read after its wait
    var value: T?
}
