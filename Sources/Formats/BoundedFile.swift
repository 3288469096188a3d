import Glibc

/// Reading files that come from other people: the size is checked before anything is read, only
/// regular files are read (a FIFO or device would block or never end), and a file may be
/// required to stay inside a folder (no `..`, no symbolic link leading out).
public enum BoundedFile {
    /// Largest Lua source file (a scenario or a bundle module), in bytes.
    public static let maxSourceBytes = 4 << 20

    /// Why a file was not read, in one sentence naming it.
    public struct Refusal: Error, Equatable, Sendable, CustomStringConvertible {
        /// The path as given.
        public var path: String
        /// What is wrong, e.g. "is 1073741824 bytes; at most 65536 are read".
        public var problem: String
        public var description: String { "\(path) \(problem)" }
    }

    /// The bytes of the regular file at `path`, refused (without reading it) when it is larger
    /// than `maxBytes` bytes or not a regular file.
    public static func read(_ path: String, maxBytes: Int) throws(Refusal) -> [UInt8] {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else { throw Refusal(path: path, problem: "cannot be read: \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw Refusal(path: path, problem: "cannot be read: \(String(cString: strerror(errno)))") }
        guard (info.st_mode & S_IFMT) == S_IFREG else { throw Refusal(path: path, problem: "is not a regular file") }
        guard Int(info.st_size) <= maxBytes else {
            throw Refusal(path: path, problem: "is \(info.st_size) bytes; at most \(maxBytes) are read")
        }
        var bytes = [UInt8](repeating: 0, count: Int(info.st_size) + 1)
        var count = 0
        while count < bytes.count {
            let n = readInto(&bytes, from: fd, at: count)
            if n < 0 && errno == EINTR { continue }
            guard n >= 0 else { throw Refusal(path: path, problem: "cannot be read: \(String(cString: strerror(errno)))") }
            if n == 0 { break }
            count += n
        }
        guard count <= maxBytes else { throw Refusal(path: path, problem: "grew past \(maxBytes) bytes while being read") }
        bytes.removeSubrange(count...)
        return bytes
    }

    /// The canonical absolute path of `path` (symbolic links resolved), or nil when it does not exist.
    public static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// Whether `path`, once its symbolic links are resolved, lies inside `folder` (resolved too).
    public static func isInside(_ path: String, folder: String) -> Bool {
        guard let root = realPath(folder), let real = realPath(path) else { return false }
        return real.hasPrefix(root.hasSuffix("/") ? root : root + "/")
    }

    /// Reads `relative` inside `folder`, refusing a path that leaves it (`..`, an absolute path, a
    /// symbolic link leading out) as well as anything `read` refuses.
    public static func readInside(_ folder: String, _ relative: String, maxBytes: Int) throws(Refusal) -> [UInt8] {
        let path = folder.hasSuffix("/") ? folder + relative : folder + "/" + relative
        guard !relative.hasPrefix("/"), !relative.split(separator: "/").contains("..") else {
            throw Refusal(path: path, problem: "leaves its folder \(folder)")
        }
        guard isInside(path, folder: folder) else {
            throw Refusal(path: path, problem: realPath(path) == nil ? "does not exist" : "leads out of its folder \(folder) (a symbolic link?)")
        }
        return try read(path, maxBytes: maxBytes)
    }
}
