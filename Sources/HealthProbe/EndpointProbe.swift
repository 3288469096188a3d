import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import UpgradeEngine

/// One real probe of a live endpoint, made the way the Application Health extension makes it:
/// an HTTP(S) GET that follows no redirect and reads a bounded body, or a TCP connect. The reply
/// is judged by the engine's own rules (`HealthExtensionSettings.evaluate`).
public struct EndpointProbe: Sendable {
    /// What was probed and what came back, before judging.
    public struct Outcome: Sendable {
        public var reply: ProbeReply
        /// Why there was no answer (timeout, refused connection, …), when there was none.
        public var failure: String?
        /// Bytes of body read (at most the bound plus one).
        public var bodyBytes: Int
    }

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

    private func get() -> Outcome {
        let delegate = ProbeDelegate(limit: maxBodyBytes)
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = timeout
        configuration.timeoutIntervalForResource = timeout
        configuration.httpShouldSetCookies = false
        configuration.urlCache = nil
        let session = URLSession(configuration: configuration, delegate: delegate, delegateQueue: nil)
        var request = URLRequest(url: url, cachePolicy: .reloadIgnoringLocalCacheData, timeoutInterval: timeout)
        request.httpMethod = "GET"
        session.dataTask(with: request).resume()
        let result = delegate.wait()
        session.finishTasksAndInvalidate()
        if let status = result.status {
            return Outcome(reply: .http(status: status, body: String(decoding: result.body, as: UTF8.self)), failure: nil,
                           bodyBytes: result.body.count)
        }
        return Outcome(reply: .noAnswer, failure: result.failure ?? "no answer", bodyBytes: 0)
    }

    private func connect() -> Outcome {
        let opened = TCPConnect.open(host: url.host!, port: url.port!, timeout: timeout)
        return Outcome(reply: .tcp(connected: opened == nil), failure: opened, bodyBytes: 0)
    }
}

/// Collects one response: status, a bounded body, and how it ended. URLSession calls it on its
/// own queue; the lock makes that safe, hence `@unchecked Sendable`.
final class ProbeDelegate: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    private let lock = NSLock()
    private let finished = DispatchSemaphore(value: 0)
    private let limit: Int
    private var status: Int?
    private var body = Data()
    private var failure: String?

    init(limit: Int) { self.limit = limit }

    /// The usual network failures in words.
    static func describe(_ error: any Error) -> String {
        switch (error as? URLError)?.code {
        case .timedOut?: return "timed out"
        case .cannotConnectToHost?: return "connection refused"
        case .cannotFindHost?: return "cannot resolve the host"
        case .secureConnectionFailed?, .serverCertificateUntrusted?, .serverCertificateHasBadDate?, .serverCertificateNotYetValid?,
             .serverCertificateHasUnknownRoot?:
            return "TLS failed (certificates are verified on this platform): \(error.localizedDescription)"
        default: return error.localizedDescription
        }
    }

    func wait() -> (status: Int?, body: Data, failure: String?) {
        finished.wait()
        lock.lock()
        defer { lock.unlock() }
        return (status, body, failure)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
                    completionHandler: @escaping (URLSession.ResponseDisposition) -> Void) {
        lock.lock()
        status = (response as? HTTPURLResponse)?.statusCode
        lock.unlock()
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        lock.lock()
        body.append(data.prefix(limit + 1 - body.count))
        let full = body.count > limit
        lock.unlock()
        if full { dataTask.cancel() }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
                    newRequest request: URLRequest, completionHandler: @escaping (URLRequest?) -> Void) {
        completionHandler(nil)  // the extension does not follow redirects
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        lock.lock()
        let truncated = body.count > limit  // cancelled by us: judge what was read
        if let error, !truncated {
            status = nil
            failure = Self.describe(error)
        }
        if status == nil && failure == nil {
            if let response = task.response as? HTTPURLResponse { status = response.statusCode } else { failure = "no response" }
        }
        lock.unlock()
        finished.signal()
    }
}
