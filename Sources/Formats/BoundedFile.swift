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
        /// Why, with its figures.
        public var reason: Reason

        /// Why a file was not read.
        public enum Reason: Equatable, Sendable {
            /// The system refused to open or read it (its `strerror` text).
            case unreadable(String)
            /// A FIFO, device, folder or socket.
            case notRegular
            /// Larger than the bound, before anything was read.
            case tooLarge(bytes: Int, limit: Int)
            /// It grew past the bound while it was read.
            case grew(limit: Int)
            /// The relative path climbs out of its folder (`..`) or is absolute.
            case leavesFolder(String)
            /// A symbolic link leads out of its folder.
            case leadsOutOfFolder(String)
            /// Nothing is there.
            case missing
        }

        /// A refusal of `path` for `reason`.
        public init(path: String, _ reason: Reason) {
            self.path = path
            self.reason = reason
        }

        /// What is wrong, e.g. "is 1073741824 bytes; at most 65536 are read".
        public var problem: String {
            switch reason {
            case .unreadable(let text): "cannot be read: \(text)"
            case .notRegular: "is not a regular file"
            case .tooLarge(let bytes, let limit): "is \(bytes) bytes; at most \(limit) are read"
            case .grew(let limit): "grew past \(limit) bytes while being read"
            case .leavesFolder(let folder): "leaves its folder \(folder)"
            case .leadsOutOfFolder(let folder): "leads out of its folder \(folder) (a symbolic link?)"
            case .missing: "does not exist"
            }
        }

        public var description: String { "\(path) \(problem)" }
    }

    /// The bytes of the regular file at `path`, refused (without reading it) when it is larger
    /// than `maxBytes` bytes or not a regular file.
    public static func read(_ path: String, maxBytes: Int) throws(Refusal) -> [UInt8] {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else { throw Refusal(path: path, .unreadable(String(cString: strerror(errno)))) }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw Refusal(path: path, .unreadable(String(cString: strerror(errno)))) }
        guard (info.st_mode & S_IFMT) == S_IFREG else { throw Refusal(path: path, .notRegular) }
        guard Int(info.st_size) <= maxBytes else {
            throw Refusal(path: path, .tooLarge(bytes: Int(info.st_size), limit: maxBytes))
        }
        var bytes = [UInt8](repeating: 0, count: Int(info.st_size) + 1)
        var count = 0
        while count < bytes.count {
            let n = readInto(&bytes, from: fd, at: count)
            if n < 0 && errno == EINTR { continue }
            guard n >= 0 else { throw Refusal(path: path, .unreadable(String(cString: strerror(errno)))) }
            if n == 0 { break }
            count += n
        }
        guard count <= maxBytes else { throw Refusal(path: path, .grew(limit: maxBytes)) }
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
            throw Refusal(path: path, .leavesFolder(folder))
        }
        guard isInside(path, folder: folder) else {
            throw Refusal(path: path, realPath(path) == nil ? .missing : .leadsOutOfFolder(folder))
        }
        return try read(path, maxBytes: maxBytes)
    }
}
