import Glibc

// The raw memory Formats' file readers touch, in one place.

/// Reads from `fd` into `bytes` from offset `count` to its end; what `read(2)` returns. Safe:
/// the buffer is `bytes`' own storage, written only within `count..<bytes.count`, and the pointer
/// does not outlive the call. It buys reading a file into one preallocated array, without a
/// second copy per chunk.
func readInto(_ bytes: inout [UInt8], from fd: Int32, at count: Int) -> Int {
    bytes.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress! + count, $0.count - count) }
}
