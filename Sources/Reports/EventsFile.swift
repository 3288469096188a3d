import Glibc

/// Where `--events` writes: opened as a user expects of a path (a regular file is truncated,
/// a FIFO or a device such as `/dev/stdout` is written into, a symbolic link is followed), never
/// replaced by a new file; `-` is standard output. A failed write is remembered and reported,
/// never ignored.
public final class EventsFile {
    /// The path as given (`-` is standard output).
    public let path: String
    private let fd: Int32
    private var owned: Bool
    /// The first write error, as `strerror` says it.
    public private(set) var failure: String?

    /// Opens `path` for writing; throws a message naming the path and the reason.
    public init(path: String) throws(EventsFileError) {
        self.path = path
        if path == "-" {
            fd = STDOUT_FILENO
            owned = false
            return
        }
        // Non-blocking, so that a FIFO nobody reads is refused at once (ENXIO) instead of
        // blocking forever; blocking again once open, so writes wait for a slow reader.
        let opened = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NONBLOCK, 0o644)
        guard opened >= 0 else {
            let reason = errno == ENXIO ? "a FIFO with no reader (start the reader first)" : String(cString: strerror(errno))
            throw EventsFileError("cannot open the events file \(path): \(reason)")
        }
        let flags = fcntl(opened, F_GETFL)
        _ = fcntl(opened, F_SETFL, flags & ~O_NONBLOCK)
        fd = opened
        owned = true
    }

    deinit { if owned { close(fd) } }

    /// Writes one line (a newline is added); after a failure it writes nothing more.
    public func writeLine(_ line: String) {
        guard failure == nil else { return }
        var bytes = Array(line.utf8)
        bytes.append(0x0A)
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { write(fd, $0.baseAddress! + offset, $0.count - offset) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else {
                failure = n < 0 ? String(cString: strerror(errno)) : "nothing could be written"
                return
            }
            offset += n
        }
    }

    /// Closes the file; throws when a write or the close failed (e.g. `/dev/full`: no space left).
    public func finish() throws(EventsFileError) {
        if owned {
            owned = false
            if close(fd) != 0 && failure == nil { failure = String(cString: strerror(errno)) }
        }
        if let failure { throw EventsFileError("cannot write the events file \(path): \(failure)") }
    }
}

/// Why the events file could not be opened or written: the path and the reason.
public struct EventsFileError: Error, CustomStringConvertible {
    /// The message: `cannot write the events file out.jsonl: No space left on device`.
    public let description: String
    init(_ description: String) { self.description = description }
}
