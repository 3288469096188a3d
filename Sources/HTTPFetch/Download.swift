import AsyncHTTPClient
public import Foundation
import NIOCore
import NIOHTTP1

/// Downloads over HTTP(S) for `plugins install`: certificates verified, at most 5 redirects, a
/// 200 answer only, a bounded body, one deadline for the whole transfer.
public enum Download {
    /// The body of `url`, at most `maxBytes` bytes, within `timeout` seconds for the whole
    /// transfer; throws saying what went wrong (status, size, time, network).
    public static func get(_ url: String, maxBytes: Int, timeout: TimeInterval = 120) throws(DownloadError) -> [UInt8] {
        switch blockingWait({ await fetch(url, maxBytes: maxBytes, timeout: timeout) }) {
        case .success(let bytes): return bytes
        case .failure(let error): throw error
        }
    }

    private static func fetch(_ url: String, maxBytes: Int, timeout: TimeInterval) async -> Result<[UInt8], DownloadError> {
        var configuration = HTTPClient.Configuration(redirectConfiguration: .follow(max: 5, allowCycles: false))
        configuration.decompression = .disabled
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        defer { _ = client.shutdown() }
        do {
            let response = try await client.execute(HTTPClientRequest(url: url), timeout: .seconds(Int64(timeout)))
            guard response.status == .ok else { return .failure(DownloadError("\(url): HTTP \(response.status.code) \(response.status.reasonPhrase)")) }
            if let length = response.headers.first(name: "content-length").flatMap(Int.init), length > maxBytes {
                return .failure(DownloadError("\(url): \(length) bytes, over the \(maxBytes) allowed"))
            }
            var body: [UInt8] = []
            for try await chunk in response.body {
                body += chunk.readableBytesView
                if body.count > maxBytes { return .failure(DownloadError("\(url): more than the \(maxBytes) bytes allowed")) }
            }
            return .success(body)
        } catch {
            return .failure(DownloadError("\(url): \(NetworkFailure.describe(error))"))
        }
    }
}

/// Why a download failed: the URL and what went wrong, in one message.
public struct DownloadError: Error, Equatable, CustomStringConvertible {
    /// `URL: problem` (`…/index.json: HTTP 404 Not Found`).
    public var message: String
    /// An error saying `message`.
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}
