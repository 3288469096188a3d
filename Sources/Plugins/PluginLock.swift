import Crypto
import Formats
import Foundation

/// `rehearse.lock`: what `plugins install` put in the project, so that a run uses exactly those
/// versions and bytes. JSON, keys sorted, one entry per bundle.
public struct PluginLock: Sendable, Equatable {
    /// The lock file's name in a project.
    public static let fileName = "rehearse.lock"
    static let formatVersion = 1

    /// One installed bundle.
    public struct Entry: Sendable, Equatable {
        /// The bundle's name.
        public var name: String
        /// The version installed.
        public var version: SemVer
        /// Where it was installed from (the archive's URL or path).
        public var source: String
        /// SHA-256 of the archive, hex.
        public var archiveSHA256: String
        /// The folder it was unpacked into, relative to the project.
        public var folder: String
        /// SHA-256 of every file, by path relative to the folder.
        public var files: [String: String]
        /// The versions asked for (`install NAME@RANGE`, or `^VERSION` of the first install):
        /// `plugins update` moves only inside it. Nil in a lock written before ranges were kept.
        public var range: SemVerRange? = nil
        /// The repository it came from (an http(s) URL or an absolute folder), which
        /// `plugins outdated` and `plugins update` ask; nil in an older lock.
        public var repository: String? = nil
        /// One hash of all of them: `sha256:` and the hex of the sorted "hash  path" lines.
        public var contentHash: String { BundleFiles.contentHash(files) }
    }

    /// One entry per bundle.
    public var entries: [Entry]

    /// A lock of `entries`.
    public init(entries: [Entry] = []) { self.entries = entries }

    /// The version each locked bundle must have.
    var pins: [String: SemVer] { Dictionary(entries.map { ($0.name, $0.version) }, uniquingKeysWith: { a, _ in a }) }

    /// The entry of bundle `name`, if locked.
    public func entry(named name: String) -> Entry? { entries.first { $0.name == name } }

    /// Reads a lock file; every problem names the file and the field.
    public static func read(_ path: String) throws(PluginProblem) -> PluginLock {
        let data: [UInt8]
        do {
            data = try BoundedFile.read(path, maxBytes: 4 << 20)
        } catch {
            throw PluginProblem("\(path): \(error)")
        }
        let json: JSON
        do { json = try JSON.parse(String(decoding: data, as: UTF8.self), maxBytes: 4 << 20, maxDepth: 8) } catch {
            throw PluginProblem("\(path): \(error.problem)")
        }
        guard json.field("lockfileVersion") == .int(formatVersion), case .array(let items)? = json.field("bundles") else {
            throw PluginProblem("\(path): not a rehearse lock file (expected {\"lockfileVersion\": 1, \"bundles\": [...]})")
        }
        var entries: [Entry] = []
        for (i, item) in items.enumerated() {
            func text(_ key: String) throws(PluginProblem) -> String {
                guard case .string(let s)? = item.field(key) else { throw PluginProblem("\(path): bundles[\(i)].\(key) is missing or not a string") }
                return s
            }
            let name = try text("name"), versionText = try text("version")
            guard let version = SemVer(versionText) else { throw PluginProblem("\(path): bundles[\(i)].version \"\(versionText)\" is not SemVer") }
            let folder = try text("folder")
            // A folder install, verify and install --locked write or compare: a relative path of
            // plain parts (not the project itself, nothing hidden, no '.' or '..').
            let parts = folder.split(separator: "/", omittingEmptySubsequences: false)
            guard !folder.isEmpty, !folder.hasPrefix("/"), parts.allSatisfy({ !$0.isEmpty && !$0.hasPrefix(".") }) else {
                throw PluginProblem("\(path): bundles[\(i)].folder \"\(folder)\" must be a path inside the project (such as plugins/NAME-VERSION: "
                    + "no leading '/', no empty, '.', '..' or hidden part)")
            }
            guard !entries.contains(where: { $0.name == name }) else {
                throw PluginProblem("\(path): bundles[\(i)] locks \(name) a second time; a lock holds one entry per bundle")
            }
            let digest = try text("sha256")
            guard digest.count == 64, digest.allSatisfy({ "0123456789abcdef".contains($0) }) else {
                throw PluginProblem("\(path): bundles[\(i)].sha256 \"\(digest)\" is not a SHA-256 (64 lowercase hex digits)")
            }
            guard case .object(let fileMembers)? = item.field("files") else { throw PluginProblem("\(path): bundles[\(i)].files is missing") }
            var files: [String: String] = [:]
            for (file, hash) in fileMembers {
                guard case .string(let h) = hash else { throw PluginProblem("\(path): bundles[\(i)].files.\(file) is not a hash") }
                files[file] = h
            }
            var entry = Entry(name: name, version: version, source: try text("source"), archiveSHA256: digest,
                              folder: folder, files: files)
            switch item.field("range") {
            case nil, .null?: break
            case .string(let rangeText)?:
                do { entry.range = try SemVerRange(rangeText) } catch {
                    throw PluginProblem("\(path): bundles[\(i)].range: \(error.message)")
                }
                guard entry.range!.contains(version) else {
                    throw PluginProblem("\(path): bundles[\(i)] (\(name)): version \(version) is outside its range \(rangeText); the lock file was edited")
                }
            default: throw PluginProblem("\(path): bundles[\(i)].range is not a version range such as \"^1.1\"")
            }
            switch item.field("repository") {
            case nil, .null?: break
            case .string(let repository)?: entry.repository = repository
            default: throw PluginProblem("\(path): bundles[\(i)].repository is not a string")
            }
            if case .string(let recorded)? = item.field("contentHash"), recorded != entry.contentHash {
                throw PluginProblem("\(path): bundles[\(i)] (\(name)): contentHash does not match its files list; the lock file was edited")
            }
            entries.append(entry)
        }
        return PluginLock(entries: entries)
    }

    /// The lock file's text: keys sorted, entries by name.
    public var text: String {
        let bundles = entries.sorted { $0.name < $1.name }.map { e -> JSON in
            var fields: [String: JSON] = [
                "name": .string(e.name), "version": .string(e.version.description), "source": .string(e.source),
                "sha256": .string(e.archiveSHA256), "folder": .string(e.folder), "contentHash": .string(e.contentHash),
                "files": .object(e.files.mapValues(JSON.string))]
            if let range = e.range { fields["range"] = .string(range.text) }
            if let repository = e.repository { fields["repository"] = .string(repository) }
            return .object(fields)
        }
        return JSON.object(["lockfileVersion": .int(Self.formatVersion), "bundles": .array(bundles)]).serialized() + "\n"
    }

    /// What differs between `entry` and its folder under `project`: changed, missing and added
    /// files, each named. Empty when the folder is as installed.
    public static func differences(_ entry: Entry, project: String) -> [String] {
        differences(entry, folder: project + "/" + entry.folder, shownAs: entry.folder)
    }

    /// What differs between `entry` and the bundle in `folder` (named `shownAs` in messages).
    package static func differences(_ entry: Entry, folder: String, shownAs: String) -> [String] {
        let actual: [String: String]
        do { actual = try BundleFiles.hashes(folder) } catch { return ["\(folder): \(error)"] }
        var found: [String] = []
        for file in Set(entry.files.keys).union(actual.keys).sorted() {
            switch (entry.files[file], actual[file]) {
            case (let locked?, let now?) where locked != now: found.append("\(shownAs)/\(file) changed (locked sha256 \(locked), now \(now))")
            case (_?, nil): found.append("\(shownAs)/\(file) is missing")
            case (nil, _?): found.append("\(shownAs)/\(file) was added")
            default: break
            }
        }
        return found
    }
}

/// The files of a bundle folder and their hashes.
package enum BundleFiles {
    /// Regular files under `folder`, by relative path, sorted; symbolic links and other special
    /// files are refused, hidden files (`.git`, editor files) left out.
    /// Sizes are checked from the folder's listing before any file is read: no file over
    /// `PluginArchive.maxFileBytes`, all of them together at most `maxTotalBytes`.
    package static func list(_ folder: String, maxFiles: Int = 1000, maxTotalBytes: Int = PluginArchive.maxTotalBytes) throws(PluginProblem) -> [String] {
        let fm = FileManager.default
        guard let walker = fm.enumerator(atPath: folder) else { throw PluginProblem("\(folder): not a readable folder") }
        var files: [String] = []
        var total = 0
        while let relative = walker.nextObject() as? String {
            let name = (relative as NSString).lastPathComponent
            if name.hasPrefix(".") {
                walker.skipDescendants()
                continue
            }
            let path = folder + "/" + relative
            guard let attributes = try? fm.attributesOfItem(atPath: path), let type = attributes[.type] as? FileAttributeType else { continue }
            switch type {
            case .typeDirectory: continue
            case .typeRegular:
                let size = (attributes[.size] as? NSNumber)?.intValue ?? 0
                if size > PluginArchive.maxFileBytes {
                    throw PluginProblem("\(path): \(size) bytes, over the \(PluginArchive.maxFileBytes) allowed for one file of a bundle")
                }
                total += size
                if total > maxTotalBytes {
                    throw PluginProblem("\(folder): its files add up to more than the \(maxTotalBytes) bytes allowed for one bundle")
                }
                files.append(relative)
            default: throw PluginProblem("\(path): only regular files and folders may be in a bundle (this is \(type.rawValue))")
            }
            if files.count > maxFiles { throw PluginProblem("\(folder): more than \(maxFiles) files in one bundle") }
        }
        return files.sorted()
    }

    /// SHA-256 (hex) of every regular file under `folder`.
    static func hashes(_ folder: String) throws(PluginProblem) -> [String: String] {
        var hashes: [String: String] = [:]
        for file in try list(folder) {
            do {
                hashes[file] = hex(SHA256.hash(data: try BoundedFile.readInside(folder, file, maxBytes: BoundedFile.maxSourceBytes)))
            } catch {
                throw PluginProblem("\(folder)/\(file): \(error)")
            }
        }
        return hashes
    }

    static func contentHash(_ files: [String: String]) -> String {
        let lines = files.keys.sorted().map { "\(files[$0]!)  \($0)\n" }.joined()
        return "sha256:" + hex(SHA256.hash(data: Data(lines.utf8)))
    }

    static func hex<D: Sequence>(_ digest: D) -> String where D.Element == UInt8 {
        digest.map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined()
    }
}
