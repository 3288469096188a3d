public import Formats

extension PluginLock.Entry {
    /// `^VERSION`: the versions a lock entry without a recorded range may move to.
    public static func caret(_ version: SemVer) -> SemVerRange? { try? SemVerRange("^\(version)") }

    /// The range `update` and a plain `install NAME` stay inside: the recorded one, else `^VERSION`.
    public var allowedRange: SemVerRange { range ?? Self.caret(version) ?? BundleResolver<PluginBundle>.any }
}

extension PluginRepository {
    /// What an install or update did to one bundle.
    public struct Change: Sendable, Equatable {
        /// The bundle as now locked.
        public var entry: PluginLock.Entry
        /// The version locked before (nil: newly installed).
        public var from: SemVer?
        /// The folder of the version replaced, removed because it still held what the lock recorded.
        public var removedFolder: String?
        /// The folder of the version replaced, kept because its files were changed by hand.
        public var keptFolder: String?

        /// A change to `entry` from version `from`.
        public init(entry: PluginLock.Entry, from: SemVer?) {
            self.entry = entry
            self.from = from
        }

        /// The change as `--output json` gives it.
        public var json: JSON {
            .object(["name": .string(entry.name), "from": from.map { .string($0.description) } ?? .null, "to": .string(entry.version.description),
                     "range": entry.range.map { .string($0.text) } ?? .null, "folder": .string(entry.folder),
                     "removedFolder": removedFolder.map(JSON.string) ?? .null, "keptFolder": keptFolder.map(JSON.string) ?? .null])
        }

        /// One line: `slow-boot 1.0.0 -> 1.1.0 (range ^1.0.0) in plugins/…; removed plugins/…`.
        public var line: String {
            let what = from.map { $0 == entry.version ? "\(entry.name) \($0) unchanged" : "\(entry.name) \($0) -> \(entry.version)" }
                ?? "\(entry.name) \(entry.version) installed"
            var line = "\(what) (range \(entry.range?.text ?? "*")) in \(entry.folder), sha256 \(entry.archiveSHA256)"
            if let removedFolder { line += "; removed \(removedFolder)" }
            if let keptFolder { line += "; kept \(keptFolder): its files differ from the lock" }
            return line
        }
    }

    /// A locked bundle and the newer versions its repository lists.
    public struct Outdated: Sendable, Equatable {
        /// The bundle as locked.
        public var entry: PluginLock.Entry
        /// Newer versions inside its range (`plugins update` moves to the newest this host accepts), newest first.
        public var inRange: [SemVer]
        /// Newer versions outside it (`plugins install NAME@RANGE` to move), newest first.
        public var outsideRange: [SemVer]
        /// Newer versions whose host API this rehearse does not provide.
        public var incompatible: [SemVer]

        /// Whether the repository lists a newer version this host's API accepts, inside the
        /// range or outside it: what makes `plugins outdated` exit 1.
        public var isOutdated: Bool { (inRange + outsideRange).contains { !incompatible.contains($0) } }

        /// As `--output json` gives it.
        public var json: JSON {
            .object(["name": .string(entry.name), "version": .string(entry.version.description), "range": .string(entry.allowedRange.text),
                     "outdated": .bool(isOutdated),
                     "repository": entry.repository.map(JSON.string) ?? .null,
                     "inRange": .array(inRange.map { .string($0.description) }), "outsideRange": .array(outsideRange.map { .string($0.description) }),
                     "incompatible": .array(incompatible.map { .string($0.description) })])
        }
    }

    /// Reads and parses the index of `source`.
    static func readIndex(_ source: Source, fetch: (Location) throws -> [UInt8]) throws(PluginProblem) -> [String: [Entry]] {
        let location = source.location(of: indexName)
        let bytes: [UInt8]
        do { bytes = try fetch(location) } catch { throw PluginProblem("cannot read the index: \(error)") }
        return try parseIndex(String(decoding: bytes, as: UTF8.self), source: location.description)
    }

    /// The repository of each entry: `override`, else the one the lock records; an entry with
    /// neither is refused, naming it.
    static func repository(of entry: PluginLock.Entry, override: Source?, lockPath: String) throws(PluginProblem) -> Source {
        if let override { return override }
        guard let recorded = entry.repository else {
            throw PluginProblem("\(lockPath): \(entry.name) records no repository (installed by an older rehearse); give --repo")
        }
        return try Source(parsing: recorded)
    }

    /// For every entry of the lock at `project` (or only `names`), the newer versions its
    /// repository lists, inside and outside its range.
    public static func outdated(project: String, names: [String] = [], repository override: Source? = nil,
                                fetch: (Location) throws -> [UInt8]) throws(PluginProblem) -> [Outdated] {
        let lockPath = join(project, PluginLock.fileName)
        let lock = try PluginLock.read(lockPath)
        let entries = try chosen(lock, names: names, lockPath: lockPath)
        var indexes: [Source: [String: [Entry]]] = [:]
        var result: [Outdated] = []
        for entry in entries {
            let source = try repository(of: entry, override: override, lockPath: lockPath)
            if indexes[source] == nil { indexes[source] = try readIndex(source, fetch: fetch) }
            let newer = (indexes[source]![entry.name] ?? []).filter { $0.manifest.version > entry.version }
            let range = entry.allowedRange
            result.append(Outdated(entry: entry,
                                   inRange: newer.filter { range.contains($0.manifest.version) }.map(\.manifest.version),
                                   outsideRange: newer.filter { !range.contains($0.manifest.version) }.map(\.manifest.version),
                                   incompatible: newer.filter { !$0.manifest.api.contains(hostAPIVersion) }.map(\.manifest.version)))
        }
        return result
    }

    /// Moves every entry of the lock at `project` (or only `names`) to the newest version inside
    /// its range that its repository lists and this host accepts; a new major is never taken.
    public static func update(project: String, names: [String] = [], repository override: Source? = nil,
                              fetch: (Location) throws -> [UInt8]) throws(PluginProblem) -> [Change] {
        let lockPath = join(project, PluginLock.fileName)
        let lock = try PluginLock.read(lockPath)
        var bySource: [Source: [Requirement]] = [:]
        for entry in try chosen(lock, names: names, lockPath: lockPath) {
            bySource[try repository(of: entry, override: override, lockPath: lockPath), default: []].append(Requirement(name: entry.name, range: nil))
        }
        var changes: [Change] = []
        for source in bySource.keys.sorted(by: { $0.description < $1.description }) {
            changes += try install(bySource[source]!, from: source, project: project, fetch: fetch)
        }
        return changes.sorted { $0.entry.name < $1.entry.name }
    }

    /// The lock's entries named `names` (all when empty); a name not locked is refused.
    static func chosen(_ lock: PluginLock, names: [String], lockPath: String) throws(PluginProblem) -> [PluginLock.Entry] {
        for name in names where lock.entry(named: name) == nil {
            throw PluginProblem("\(lockPath) locks no bundle \(name); it locks \(lock.entries.map(\.name).sorted().joined(separator: ", "))")
        }
        return lock.entries.filter { names.isEmpty || names.contains($0.name) }.sorted { $0.name < $1.name }
    }
}

extension PluginRepository.Source: CustomStringConvertible {
    /// The URL or the absolute folder, as the lock records it.
    public var description: String {
        switch self {
        case .web(let url): return url
        case .folder(let folder): return folder
        }
    }
}
