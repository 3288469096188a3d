import Glibc

/// A file a user named for rehearse to write (`--report`, `--junit`, `--runs`, `--events`, the
/// plugin lock, an installed bundle's files), opened the one way such a path is opened:
/// - `-` is standard output;
/// - a symbolic link is followed: its final target is written or replaced, the link stays a link;
/// - a character device (`/dev/null`) or a FIFO is written into, never replaced (a FIFO with no
///   reader is refused at once instead of waited for), and so is whatever a path through /proc
///   names (`/dev/stdout` and `/dev/fd/3` write into the process's own descriptor);
/// - a regular file, or a path where nothing is yet, is written into a temporary file in the
///   same folder that `commit()` renames over it: a reader sees the old file or the new one,
///   never half of one, and a run that ends before `commit()` leaves the old file as it was;
/// - anything else (a folder, a socket, a block device) is refused.
///
/// A `followable` file (serve's `--events`) is written, until `commit()`, into `PATH.partial`:
/// a reader can follow that name (`tail -F`) while the file grows, one write per line, and the
/// old file at PATH is still left as it was by a run that does not commit.
///
/// A failed write is remembered and reported by `commit()`, never ignored.
public final class OutputFile {
    /// The path as given.
    public let path: String
    /// What the file is, for messages: `the events file`, `the JUnit file`.
    public let role: String
    private var fd: Int32
    /// Where the bytes go: into the descriptor itself, or into a temporary file renamed onto
    /// `destination` by `commit()`.
    private let destination: String?
    private var temporary: String?
    private var owned: Bool
    /// The first write error, as `strerror` says it.
    public private(set) var failure: String?

    /// Opens `path` for writing `role` (`the events file`); throws naming both, what is wrong
    /// and, for a path of the wrong kind, what is allowed. `followable`: a regular file is
    /// written into `PATH.partial` until `commit()`.
    public init(path: String, role: String, followable: Bool = false) throws(OutputFileError) {
        self.path = path
        self.role = role
        func refuse(_ problem: String) -> OutputFileError { OutputFileError(path: path, description: "\(role) \(path) \(problem); allowed \(OutputFileError.allowed)") }
        func cannot(_ verb: String, _ reason: String) -> OutputFileError { OutputFileError(path: path, description: "cannot \(verb) \(role) \(path): \(reason)") }
        if path == "-" {
            fd = STDOUT_FILENO
            owned = false
            destination = nil
            return
        }
        let target: String, throughProc: Bool, descriptor: Int32?
        do { (target, throughProc, descriptor) = try Self.followingLinks(path) } catch { throw cannot("open", error.description) }
        // `/dev/stdout`, `/dev/fd/3`: the descriptor itself, sharing its offset with what the
        // process writes there (a new open of a redirected file would write over it from 0).
        if let descriptor {
            let copy = dup(descriptor)
            guard copy >= 0 else { throw cannot("open", Self.reason()) }
            fd = copy
            owned = true
            destination = nil
            return
        }
        var info = stat()
        let exists = stat(path, &info) == 0
        // Any other path through /proc (`/proc/1234/fd/1`) names a file some process has open:
        // written into, whatever it is, never replaced.
        if exists && (!Self.isRegular(info) || throughProc) {
            let kind = info.st_mode & S_IFMT
            guard kind == S_IFCHR || kind == S_IFIFO || kind == S_IFREG else { throw refuse(Self.describe(kind)) }
            // Non-blocking, so that a FIFO nobody reads is refused at once (ENXIO) instead of
            // blocking forever; blocking again once open, so writes wait for a slow reader.
            let opened = open(path, O_WRONLY | O_CLOEXEC | O_NONBLOCK)
            guard opened >= 0 else {
                throw cannot("open", errno == ENXIO ? "a FIFO with no reader (start the reader first)" : Self.reason())
            }
            _ = fcntl(opened, F_SETFL, fcntl(opened, F_GETFL) & ~O_NONBLOCK)
            fd = opened
            owned = true
            destination = nil
            return
        }
        let existing: stat? = exists ? info : nil
        let opened: Int32, name: String
        do { (opened, name) = try followable ? Self.partialFile(for: target) : Self.temporaryFile(beside: target) } catch {
            throw cannot("open", error.description)
        }
        if let existing {
            // The new file keeps the old one's permissions (and, where allowed, its owner).
            _ = fchmod(opened, existing.st_mode & 0o7777)
            _ = fchown(opened, existing.st_uid, existing.st_gid)
        }
        fd = opened
        owned = true
        destination = target
        temporary = name
    }

    deinit {
        if owned { close(fd) }
        if let temporary { unlink(temporary) }
    }

    /// Writes `bytes`; after a failure it writes nothing more.
    public func write(_ bytes: some Collection<UInt8>) {
        guard failure == nil else { return }
        switch writeFully(bytes, to: fd) {
        case nil: break
        case .error?: failure = Self.reason()
        case .nothingWritten?: failure = "nothing could be written"
        }
    }

    /// Writes `text` as UTF-8.
    public func write(_ text: String) { write(text.utf8) }

    /// Writes one line (a newline is added).
    public func writeLine(_ line: String) {
        var bytes = Array(line.utf8)
        bytes.append(0x0A)
        write(bytes)
    }

    /// Finishes the file: closes it and, for a regular file, renames the new content over the
    /// old. Throws when a write, the close or the rename failed (e.g. `/dev/full`: no space
    /// left); the old file is then as it was.
    public func commit() throws(OutputFileError) {
        if owned {
            owned = false
            if close(fd) != 0 && failure == nil { failure = Self.reason() }
        }
        if failure == nil, let temporary, let destination {
            if rename(temporary, destination) == 0 { self.temporary = nil } else { failure = Self.reason() }
        }
        if let failure { throw OutputFileError(path: path, description: "cannot write \(role) \(path): \(failure)") }
    }

    /// Writes `bytes` to `path` and commits them: the whole file or, on failure, nothing.
    public static func write(_ bytes: some Collection<UInt8>, to path: String, role: String) throws(OutputFileError) {
        let file = try OutputFile(path: path, role: role)
        file.write(bytes)
        try file.commit()
    }

    /// Writes `text` as UTF-8 to `path` and commits it.
    public static func write(_ text: String, to path: String, role: String) throws(OutputFileError) { try write(text.utf8, to: path, role: role) }

    /// The path a chain of symbolic links starting at `path` ends at (it may not exist yet);
    /// whether the chain went through /proc, whose links name open files, not paths; and the
    /// descriptor of this process it names, when one of its steps is `/proc/self/fd/N` or
    /// `/dev/fd/N` (`/dev/stdout` is a link to `/proc/self/fd/1`).
    static func followingLinks(_ path: String) throws(Reason) -> (path: String, throughProc: Bool, descriptor: Int32?) {
        var current = path
        var throughProc = false
        for _ in 0..<40 {
            for prefix in ["/proc/self/fd/", "/dev/fd/"] where current.hasPrefix(prefix) {
                if let n = Int32(current.dropFirst(prefix.count)), n >= 0 { return (current, true, n) }
            }
            throughProc = throughProc || current.hasPrefix("/proc/")
            var info = stat()
            guard lstat(current, &info) == 0 else {
                if errno == ENOENT { return (current, throughProc, nil) }
                throw Reason(reason())
            }
            guard (info.st_mode & S_IFMT) == S_IFLNK else { return (current, throughProc, nil) }
            var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
            let length = readlink(current, &buffer, buffer.count - 1)
            guard length >= 0 else { throw Reason(reason()) }
            let link = String(decoding: buffer[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
            current = link.hasPrefix("/") ? link : folder(of: current) + "/" + link
        }
        throw Reason("a chain of more than 40 symbolic links")
    }

    /// A new file beside `target` (same folder, so that the rename is atomic), with a name no
    /// other writer uses: `.NAME.rehearse-PID-RANDOM`.
    static func temporaryFile(beside target: String) throws(Reason) -> (Int32, String) {
        let folder = folder(of: target)
        let name = target.split(separator: "/").last.map(String.init) ?? "output"
        for _ in 0..<100 {
            let candidate = "\(folder)/.\(name).rehearse-\(getpid())-\(String(UInt32.random(in: 0...UInt32.max), radix: 16))"
            let opened = open(candidate, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o666)
            if opened >= 0 { return (opened, candidate) }
            guard errno == EEXIST else { throw Reason(reason()) }
        }
        throw Reason("no free temporary name in \(folder)")
    }

    /// `TARGET.partial`, new: a regular file left there by a run that never committed is
    /// replaced; anything else at that name (a link, a folder) is refused, never written through.
    static func partialFile(for target: String) throws(Reason) -> (Int32, String) {
        let name = target + ".partial"
        var info = stat()
        if lstat(name, &info) == 0 {
            guard isRegular(info) else { throw Reason("\(name), where it writes the file as it grows, \(describe(info.st_mode & S_IFMT)); remove it") }
            guard unlink(name) == 0 else { throw Reason(reason()) }
        }
        let opened = open(name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o666)
        guard opened >= 0 else { throw Reason(reason()) }
        return (opened, name)
    }

    static func folder(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    static func isRegular(_ info: stat) -> Bool { (info.st_mode & S_IFMT) == S_IFREG }

    static func describe(_ kind: mode_t) -> String {
        switch kind {
        case S_IFDIR: return "is a folder"
        case S_IFSOCK: return "is a socket"
        case S_IFBLK: return "is a block device"
        default: return "is not a file that can be written"
        }
    }

    static func reason() -> String { String(cString: strerror(errno)) }

    /// Why a step failed, as `strerror` or the step says it.
    struct Reason: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }
}

/// Why an output file could not be opened or written: one sentence naming what the file is, the
/// path, the reason and, for a path of the wrong kind, what is allowed.
public struct OutputFileError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The path as given.
    public var path: String
    /// `cannot write the events file /dev/full: No space left on device`.
    public var description: String
    /// What an output path may be.
    public static let allowed = "a regular file (replaced whole), a symbolic link to one, a FIFO, a character device, or - for standard output"
}

/// Standard output and standard error as the command writes them: every byte, or none when the
/// stream is gone (a closed pipe, a full disk, a closed descriptor), which loses the text and
/// never the process (Foundation's `FileHandle.write` traps when a write fails).
public enum StandardStream {
    case output, error

    /// Writes `text` whole; a failed write is ignored.
    public func write(_ text: String) {
        _ = writeFully(text.utf8, to: self == .output ? 1 : 2)
    }
}
