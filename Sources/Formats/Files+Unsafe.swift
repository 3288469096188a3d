import Glibc

// The raw memory Formats' file readers touch, in one place.

/// Reads from `fd` into `bytes` from offset `count` to its end; what `read(2)` returns. Safe:
/// the buffer is `bytes`' own storage, written only within `count..<bytes.count`, and the pointer
/// does not outlive the call. It buys reading a file into one preallocated array, without a
/// second copy per chunk.
func readInto(_ bytes: inout [UInt8], from fd: Int32, at count: Int) -> Int {
    bytes.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress! + count, $0.count - count) }
}

/// Why `writeFully` stopped short.
enum WriteShortfall {
    /// `write(2)` failed; `errno` says why.
    case error
    /// `write(2)` wrote nothing and reported no error.
    case nothingWritten
}

/// Writes every byte of `bytes` to `fd`, again after an interrupted call; nil when all were
/// written. Safe: the pointer is the collection's own contiguous storage (or a copy's), read
/// within its count, and does not outlive the call. It buys writing an event line or a page in
/// one `write(2)` from the bytes where they are, without a copy per write.
func writeFully(_ bytes: some Collection<UInt8>, to fd: Int32) -> WriteShortfall? {
    func writeAll(_ buffer: UnsafeBufferPointer<UInt8>) -> WriteShortfall? {
        guard let base = buffer.baseAddress else { return nil }
        var offset = 0
        while offset < buffer.count {
            let n = Glibc.write(fd, base + offset, buffer.count - offset)
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { return n < 0 ? .error : .nothingWritten }
            offset += n
        }
        return nil
    }
    if let result = bytes.withContiguousStorageIfAvailable(writeAll) { return result }
    return Array(bytes).withUnsafeBufferPointer(writeAll)
}
