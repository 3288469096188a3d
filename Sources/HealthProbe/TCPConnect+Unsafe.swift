import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A TCP connect with a timeout: the tcp health probe. The raw socket calls of this module live
/// in this file, the only unsafe code of HealthProbe: `getaddrinfo`'s list is walked through its
/// C pointers and freed once, by the `defer`, after the last entry is read. It buys a connect
/// with a timeout (non-blocking connect and `poll`), which Foundation does not offer on Linux.
enum TCPConnect {
    /// nil when the connection opened; otherwise why not.
    static func open(host: String, port: Int, timeout: TimeInterval) -> String? {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, String(port), &hints, &list) == 0, let first = list else { return "cannot resolve \(host)" }
        defer { freeaddrinfo(list) }
        var failure = "connection refused"
        var entry: UnsafeMutablePointer<addrinfo>? = first
        while let info = entry {
            entry = info.pointee.ai_next
            let fd = socket(info.pointee.ai_family, info.pointee.ai_socktype, info.pointee.ai_protocol)
            guard fd >= 0 else { continue }
            defer { close(fd) }
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            if Glibc.connect(fd, info.pointee.ai_addr, info.pointee.ai_addrlen) == 0 { return nil }
            guard errno == EINPROGRESS else {
                failure = String(cString: strerror(errno))
                continue
            }
            var poller = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
            let ready = poll(&poller, 1, Int32(timeout * 1000))
            if ready == 0 {
                failure = "timed out after \(timeout) s"
                continue
            }
            var code: Int32 = 0
            var size = socklen_t(MemoryLayout<Int32>.size)
            getsockopt(fd, SOL_SOCKET, SO_ERROR, &code, &size)
            if ready > 0 && code == 0 { return nil }
            failure = String(cString: strerror(code == 0 ? errno : code))
        }
        return failure
    }
}
