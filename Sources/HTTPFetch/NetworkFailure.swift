import AsyncHTTPClient
import Foundation
import NIOCore

/// Network failures in words, for probes and downloads alike.
public enum NetworkFailure {
    /// The usual network failures in words.
    public static func describe(_ error: any Error) -> String {
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
}
