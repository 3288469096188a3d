import Formats
import Foundation

/// A bundle repository: any folder, static file server or object store holding bundle archives
/// and `rehearse-index.json`, the index `plugins index` writes (name → versions → archive URL,
/// SHA-256, host API range, dependencies, exports).
public enum PluginRepository {
    /// The index's file name in a repository.
    public static let indexName = "rehearse-index.json"
    static let indexVersion = 1

    /// A version listed in an index.
    public struct Entry: BundleCandidate {
        /// The manifest the index repeats.
        public var manifest: PluginManifest
        /// The archive, absolute or relative to the index.
        public var url: String
        /// SHA-256 of the archive, hex.
        public var sha256: String
        /// The archive URL, for messages.
        public var location: String { url }
    }

    /// The index of every archive (`*.tar`) in `folder`, each named `base/FILE` when a base URL
    /// (http or https) is given, else by its file name (relative to the index). Sorted by name, newest first.
    public static func index(_ folder: String, baseURL: String?) throws(PluginProblem) -> String {
        // What install accepts: an http(s) URL, or names relative to the index.
        if let baseURL, !["http", "https"].contains(scheme(of: baseURL) ?? "") {
            throw PluginProblem(at: .setting(.repositoryURL, value: baseURL), problem: nil, allowed: "an http(s) URL the folder is served at")
        }
        let names: [String]
        do { names = try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.hasSuffix(".tar") }.sorted() } catch {
            throw PluginProblem("\(folder): not a readable folder")
        }
        var entries: [Entry] = []
        for name in names {
            let path = folder + "/" + name
            let bytes: [UInt8]
            do { bytes = try BoundedFile.read(path, maxBytes: PluginArchive.maxArchiveBytes) } catch { throw PluginProblem("\(path): \(error)") }
            let (manifest, _) = try PluginArchive.read(bytes, source: path)
            let url = baseURL.map { ($0.hasSuffix("/") ? $0 : $0 + "/") + name } ?? name
            entries.append(Entry(manifest: manifest, url: url, sha256: PluginArchive.sha256(bytes)))
        }
        var byName: [String: [JSON]] = [:]
        for entry in entries.sorted(by: { ($0.manifest.name, $1.manifest.version) < ($1.manifest.name, $0.manifest.version) }) {
            guard case .object(var fields) = entry.manifest.json else { continue }
            fields["url"] = .string(entry.url)
            fields["sha256"] = .string(entry.sha256)
            byName[entry.manifest.name, default: []].append(.object(fields))
        }
        return JSON.object(["indexVersion": .int(indexVersion), "bundles": .object(byName.mapValues(JSON.array))]).serialized() + "\n"
    }

    /// Reads an index; `source` names it in messages.
    public static func parseIndex(_ text: String, source: String) throws(PluginProblem) -> [String: [Entry]] {
        let json: JSON
        do { json = try JSON.parse(text, maxBytes: 16 << 20, maxDepth: 10) } catch { throw PluginProblem("\(source): \(error.problem)") }
        guard json.field("indexVersion") == .int(indexVersion), case .object(let bundles)? = json.field("bundles") else {
            throw PluginProblem("\(source): not a rehearse bundle index (expected {\"indexVersion\": 1, \"bundles\": {...}})")
        }
        var result: [String: [Entry]] = [:]
        for name in bundles.keys.sorted() {
            guard case .array(let versions) = bundles[name]! else { throw PluginProblem("\(source): bundles.\(name) is not a list") }
            for (i, item) in versions.enumerated() {
                guard case .object(var fields) = item, case .string(let url)? = fields.removeValue(forKey: "url"),
                      case .string(let sha)? = fields.removeValue(forKey: "sha256"), sha.count == 64
                else { throw PluginProblem("\(source): bundles.\(name)[\(i)] needs url and sha256 (64 hex digits)") }
                let manifest = try PluginManifest.parse(.object(fields), file: "\(source): bundles.\(name)[\(i)]")
                guard manifest.name == name else { throw PluginProblem("\(source): bundles.\(name)[\(i)] is named \(manifest.name)") }
                result[name, default: []].append(Entry(manifest: manifest, url: url, sha256: sha.lowercased()))
            }
            result[name]?.sort { $0.manifest.version > $1.manifest.version }
        }
        return result
    }

    /// One `NAME@RANGE` (or `NAME`: any version) to install.
    public struct Requirement: Sendable {
        /// The bundle.
        public var name: String
        /// The versions wanted; nil is any.
        public var range: SemVerRange?

        /// `name` within `range` (nil: any, or the lock's range when installed again).
        public init(name: String, range: SemVerRange?) {
            self.name = name
            self.range = range
        }

        /// Parses `NAME@RANGE` or `NAME`.
        public init(parsing text: String) throws(PluginProblem) {
            let parts = text.split(separator: "@", maxSplits: 1).map(String.init)
            guard let name = parts.first, PluginManifest.isBundleName(name) else {
                throw PluginProblem("'\(text)' is not NAME@RANGE, e.g. slow-boot@^1.1")
            }
            self.name = name
            range = parts.count == 2 ? try SemVerRange(parts[1]) : nil
        }
    }

    /// Where a repository is: served over HTTP(S), or a folder on this machine.
    public enum Source: Sendable, Hashable {
        /// An http(s) URL; the index and relative archive names are under it.
        case web(String)
        /// An absolute folder path; nothing outside it is read.
        case folder(String)

        /// `--repo`: an http(s) URL, a `file://` URL or a folder path (made absolute, so that the
        /// lock's `source` means the same from any folder). Any other scheme is refused.
        public init(parsing text: String) throws(PluginProblem) {
            if let scheme = PluginRepository.scheme(of: text) {
                switch scheme {
                case "http", "https": self = .web(text)
                case "file": self = .folder(absolutePath(String(text.dropFirst("file://".count))))
                default: throw PluginProblem(at: .setting(.repository, value: text), problem: "a repository is an http(s) URL or a folder, not a \(scheme): URL", allowed: nil)
                }
            } else {
                self = .folder(absolutePath(text))
            }
        }

        /// What holds the repository's file `name` (a relative name already checked).
        func location(of name: String) -> Location {
            switch self {
            case .web(let base): return .web(join(base, name))
            case .folder(let folder): return .file(folder: folder, name: name)
            }
        }
    }

    /// A file to read for an install: a URL over HTTP(S), or a file inside a folder repository.
    public enum Location: Sendable, Equatable, CustomStringConvertible {
        /// An http(s) URL.
        case web(String)
        /// `name` (relative, without `..`) inside the repository `folder`.
        case file(folder: String, name: String)

        /// The URL or the path.
        public var description: String {
            switch self {
            case .web(let url): return url
            case .file(let folder, let name): return join(folder, name)
            }
        }
    }

    /// The scheme of `text`, lowercased, when it starts with one (`https:`), else nil.
    static func scheme(of text: String) -> String? {
        guard let colon = text.firstIndex(of: ":") else { return nil }
        let name = text[..<colon]
        guard let first = name.first, first.isASCII, first.isLetter,
              name.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "+-.".contains($0)) }) else { return nil }
        return name.lowercased()
    }

    /// Where the archive an index entry names is: an http(s) URL as it is, or a name relative
    /// to the index, resolved inside the repository. Anything else (an absolute path, another
    /// scheme, `..`, `.`, an empty part, a character outside letters, digits and `._+~-`) is
    /// refused: an index can name no file outside its repository, and a remote one no local file.
    public static func archiveLocation(_ url: String, in source: Source, entry: String) throws(PluginProblem) -> Location {
        if let scheme = scheme(of: url) {
            guard scheme == "http" || scheme == "https" else {
                throw PluginProblem("\(entry): url \"\(url)\" is refused; allowed an http(s) URL or a name relative to the index inside the repository")
            }
            return .web(url)
        }
        let parts = url.split(separator: "/", omittingEmptySubsequences: false)
        let plain = parts.allSatisfy { part in
            !part.isEmpty && part != "." && part != ".." && part.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "._+~-".contains($0)) }
        }
        guard plain else {
            throw PluginProblem("\(entry): url \"\(url)\" leaves the repository or is not a plain name; allowed an http(s) URL or a name relative to the index (letters, digits and ._+~- in each part, no '..', no absolute path)")
        }
        return source.location(of: url)
    }

    /// Installs `requirements` from the repository `source` into
    /// `project/plugins/NAME-VERSION`, dependencies included, and records each in
    /// `project/rehearse.lock` with the range asked for and the repository. A requirement without
    /// a range stays inside the range the lock records for it (`^VERSION` of a lock that has
    /// none), so a new major is installed only when asked for (`NAME@^2`). `fetch` reads a
    /// location. Every archive's SHA-256 must match the index before anything is unpacked; a
    /// folder already there must hold the same files. The folder of a version replaced is
    /// removed when it still holds what the lock recorded.
    public static func install(_ requirements: [Requirement], from source: Source, project: String,
                               fetch: (Location) throws -> [UInt8]) throws(PluginProblem) -> [Change] {
        let indexLocation = source.location(of: indexName)
        let indexURL = indexLocation.description
        let index = try readIndex(source, fetch: fetch)
        let lockPath = project + "/" + PluginLock.fileName
        var lock = FileManager.default.fileExists(atPath: lockPath) ? try PluginLock.read(lockPath) : PluginLock()
        let resolver = BundleResolver<Entry>(candidates: { index[$0] ?? [] }, lookedIn: indexURL)
        var asked: [String: SemVerRange] = [:]
        for requirement in requirements {
            let range = requirement.range ?? lock.entry(named: requirement.name).map(\.allowedRange)
            try resolver.select(requirement.name, range: range, by: requirement.range == nil && range != nil ? "the lock's range" : "the install request")
            if let range = requirement.range { asked[requirement.name] = range }
        }
        // Before anything is downloaded: no locked bundle moves below its lock unless asked for
        // by a range, and no locked version comes back with other bytes.
        try checkAgainstLock(resolver.selected, lock: lock, asked: Set(asked.keys), index: index, source: source, lockPath: lockPath)
        // All or nothing: every archive is downloaded, checked and read before anything is
        // written; every new bundle is unpacked into a staging folder before any is moved into
        // place; a failure anywhere removes what this install wrote, and the lock is written last.
        var fetched: [(entry: PluginLock.Entry, files: [String: [UInt8]])] = []
        for name in resolver.selected.keys.sorted() {
            let entry = resolver.selected[name]!
            let (url, digest, manifest, files) = try download(entry, from: source, indexURL: indexURL, fetch: fetch)
            let folder = "plugins/\(manifest.name)-\(manifest.version)"
            var locked = PluginLock.Entry(name: manifest.name, version: manifest.version, source: url, archiveSHA256: digest,
                                          folder: folder, files: files.mapValues { PluginArchive.sha256($0) })
            locked.range = asked[name] ?? lock.entry(named: name)?.range ?? PluginLock.Entry.caret(manifest.version)
            locked.repository = source.description
            if FileManager.default.fileExists(atPath: project + "/" + folder) {
                let differences = PluginLock.differences(locked, project: project)
                guard differences.isEmpty else {
                    throw PluginProblem("\(project)/\(folder) already exists with other content (\(differences.joined(separator: "; "))); remove it to reinstall; nothing was installed")
                }
                fetched.append((locked, [:]))
            } else {
                fetched.append((locked, files))
            }
        }
        let placed = try place(fetched, project: project)
        var changes: [Change] = []
        let before = lock
        for (entry, _) in fetched {
            lock.entries.removeAll { $0.name == entry.name }
            lock.entries.append(entry)
        }
        do { try OutputFile.write(lock.text, to: lockPath, role: "the lock file") } catch {
            for destination in placed { try? FileManager.default.removeItem(atPath: destination) }
            throw PluginProblem("\(error); nothing was installed")
        }
        for (entry, _) in fetched {
            var change = Change(entry: entry, from: before.entry(named: entry.name)?.version)
            if let old = before.entry(named: entry.name), old.folder != entry.folder,
               FileManager.default.fileExists(atPath: project + "/" + old.folder) {
                // Only a folder still as installed goes: one edited by hand is kept and named.
                if PluginLock.differences(old, project: project).isEmpty, (try? FileManager.default.removeItem(atPath: project + "/" + old.folder)) != nil {
                    change.removedFolder = old.folder
                } else {
                    change.keptFolder = old.folder
                }
            }
            changes.append(change)
        }
        return changes
    }

    /// `name` under `base` (a folder or a URL).
    public static func join(_ base: String, _ name: String) -> String { base.hasSuffix("/") ? base + name : base + "/" + name }
}
