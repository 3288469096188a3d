import Formats
import Foundation

/// What keeps a lock's promise: no locked bundle moves below its lock or comes back with other
/// bytes, `install --locked` puts exactly the lock in place and writes nothing else, and a plain
/// HTTP repository is named as the risk it is.
extension PluginRepository {
    /// Refuses, before anything is downloaded, a choice that breaks the lock at `lockPath`: a
    /// locked bundle chosen at a lower version than locked when its name was not `asked` for
    /// with a range (`update` and a plain `install NAME` never go backwards: an index that no
    /// longer lists the locked version must not undo it), and a locked version whose archive in
    /// the index has another SHA-256 than the lock records (a version, once published, is
    /// those bytes). Names are walked in order, so the first problem is the same on every run.
    static func checkAgainstLock(_ selected: [String: Entry], lock: PluginLock, asked: Set<String>, index: [String: [Entry]],
                                 source: Source, lockPath: String) throws(PluginProblem) {
        let indexURL = source.location(of: indexName).description
        for name in selected.keys.sorted() {
            guard let chosen = selected[name], let locked = lock.entry(named: name) else { continue }
            if chosen.manifest.version == locked.version, chosen.sha256 != locked.archiveSHA256 {
                throw changedArchive(locked, chosen, in: source, lockPath: lockPath)
            }
            if chosen.manifest.version < locked.version, !asked.contains(name) {
                let listed = (index[name] ?? []).map(\.manifest.version)
                let lists = listed.contains(locked.version)
                    ? "lists \(locked.version), but the bundles chosen with it need \(chosen.manifest.version)"
                    : "no longer lists \(locked.version); the newest it offers inside \(locked.allowedRange) is \(chosen.manifest.version)"
                throw PluginProblem("\(name) is locked at \(locked.version) in \(lockPath); \(indexURL) \(lists) (it lists "
                    + "\(listed.map(\.description).joined(separator: ", "))): a locked bundle never moves below its lock "
                    + "(install '\(name)@\(chosen.manifest.version)' to go back on purpose); nothing was changed")
            }
        }
    }

    /// The refusal of a locked version whose archive in the index (`entry` of `source`) changed:
    /// bundle, version, both digests, and the archive's URL or path.
    static func changedArchive(_ locked: PluginLock.Entry, _ entry: Entry, in source: Source, lockPath: String) -> PluginProblem {
        let repositorySHA256 = entry.sha256
        let url = (try? archiveLocation(entry.url, in: source, entry: entry.manifest.label))?.description ?? entry.url
        return PluginProblem("\(locked.name) \(locked.version) changed in the repository: \(lockPath) records sha256 \(locked.archiveSHA256), "
            + "the repository now has \(repositorySHA256) (\(url)); a published version must keep its bytes, so nothing was installed "
            + "and the lock is unchanged (if the new archive is meant, remove \(locked.name) from the lock and install it again)")
    }

    /// Downloads the archive of the index entry `entry` of `source`, checks its SHA-256 against
    /// the index and that it holds the version the index names; its URL, digest, manifest and files.
    static func download(_ entry: Entry, from source: Source, indexURL: String, fetch: (Location) throws -> [UInt8])
        throws(PluginProblem) -> (url: String, digest: String, manifest: PluginManifest, files: [String: [UInt8]]) {
        let location = try archiveLocation(entry.url, in: source, entry: "\(indexURL): \(entry.manifest.label)")
        let url = location.description
        let bytes: [UInt8]
        do { bytes = try fetch(location) } catch { throw PluginProblem("cannot download \(entry.manifest.label): \(error); nothing was installed") }
        let digest = PluginArchive.sha256(bytes)
        guard digest == entry.sha256 else {
            throw PluginProblem("\(url): sha256 \(digest) does not match the index's \(entry.sha256); nothing was installed")
        }
        let (manifest, files) = try PluginArchive.read(bytes, source: url)
        guard manifest.label == entry.manifest.label else {
            throw PluginProblem("\(url): the archive holds \(manifest.label), the index says \(entry.manifest.label); nothing was installed")
        }
        return (url, digest, manifest, files)
    }

    /// Unpacks every bundle that has files into its folder under `project`, all or nothing: each
    /// into a staging folder first, then all moved into place; a failure removes what was
    /// written (and a plugins/ folder made here, if empty). Returns the folders placed.
    static func place(_ bundles: [(entry: PluginLock.Entry, files: [String: [UInt8]])], project: String) throws(PluginProblem) -> [String] {
        var staged: [(staging: String, destination: String)] = []
        var placed: [String] = []
        let pluginsFolder = project + "/plugins"
        let pluginsExisted = FileManager.default.fileExists(atPath: pluginsFolder)
        func undo() {
            for (staging, _) in staged { try? FileManager.default.removeItem(atPath: staging) }
            for destination in placed { try? FileManager.default.removeItem(atPath: destination) }
            if !pluginsExisted, (try? FileManager.default.contentsOfDirectory(atPath: pluginsFolder))?.isEmpty == true {
                try? FileManager.default.removeItem(atPath: pluginsFolder)
            }
        }
        do {
            for (entry, files) in bundles where !files.isEmpty {
                let staging = pluginsFolder + "/.\(entry.name)-\(entry.version).partial-\(ProcessInfo.processInfo.processIdentifier)"
                try? FileManager.default.removeItem(atPath: staging)
                staged.append((staging, project + "/" + entry.folder))
                try PluginArchive.unpack(files, into: staging)
            }
            for (staging, destination) in staged {
                do {
                    try FileManager.default.createDirectory(atPath: (destination as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
                    try FileManager.default.moveItem(atPath: staging, toPath: destination)
                } catch {
                    throw PluginProblem("cannot move the bundle into \(destination): \(error.localizedDescription)")
                }
                placed.append(destination)
            }
        } catch let problem as PluginProblem {
            undo()
            throw PluginProblem("\(problem.message); nothing was installed")
        } catch {
            undo()
            throw PluginProblem("\(error); nothing was installed")
        }
        return placed
    }

    /// `plugins install --locked`: puts exactly what the lock at `project` names in place, from
    /// each entry's repository (or `override`), never writing the lock. Refused, with nothing
    /// written, when the lock is missing, when a repository does not list a locked version or
    /// lists it with other bytes, when an archive's files are not the lock's, when a locked
    /// version needs another host API, or when a folder already there differs from the lock.
    /// A change per bundle: `from` is its version when its folder was already in place, nil
    /// when it was unpacked now.
    public static func installLocked(project: String, repository override: Source? = nil,
                                     fetch: (Location) throws -> [UInt8]) throws(PluginProblem) -> [Change] {
        let lockPath = join(project, PluginLock.fileName)
        guard FileManager.default.fileExists(atPath: lockPath) else {
            throw PluginProblem("\(lockPath) does not exist: install --locked installs exactly what a lock names and never writes one; "
                + "run plugins install NAME@RANGE once and keep rehearse.lock with the project")
        }
        let lock = try PluginLock.read(lockPath)
        var indexes: [Source: [String: [Entry]]] = [:]
        var bundles: [(entry: PluginLock.Entry, files: [String: [UInt8]])] = []
        var manifests: [PluginManifest] = []
        for locked in lock.entries.sorted(by: { $0.name < $1.name }) {
            let source = try repository(of: locked, override: override, lockPath: lockPath)
            if indexes[source] == nil { indexes[source] = try readIndex(source, fetch: fetch) }
            let indexURL = source.location(of: indexName).description
            let listed = indexes[source]![locked.name] ?? []
            guard let entry = listed.first(where: { $0.manifest.version == locked.version }) else {
                let versions = listed.isEmpty ? "no version of it" : listed.map(\.manifest.version.description).joined(separator: ", ")
                throw PluginProblem("\(locked.name) \(locked.version) is locked in \(lockPath), but \(indexURL) does not list that version "
                    + "(it lists \(versions)); nothing was installed")
            }
            guard entry.sha256 == locked.archiveSHA256 else {
                throw changedArchive(locked, entry, in: source, lockPath: lockPath)
            }
            guard entry.manifest.api.contains(hostAPIVersion) else {
                throw PluginProblem("\(locked.name) \(locked.version) is locked, but it needs host API \(entry.manifest.api) and this rehearse "
                    + "provides \(hostAPIVersion); nothing was installed")
            }
            manifests.append(entry.manifest)
            if FileManager.default.fileExists(atPath: project + "/" + locked.folder) {
                let differences = PluginLock.differences(locked, project: project)
                guard differences.isEmpty else {
                    throw PluginProblem("\(locked.folder) differs from \(lockPath) (\(differences.joined(separator: "; "))); install --locked "
                        + "changes no folder already there: remove it and run again; nothing was installed")
                }
                bundles.append((locked, [:]))
                continue
            }
            let (url, _, _, files) = try download(entry, from: source, indexURL: indexURL, fetch: fetch)
            let hashes = files.mapValues { PluginArchive.sha256($0) }
            guard hashes == locked.files else {
                let named = Set(hashes.keys).union(locked.files.keys).sorted().filter { hashes[$0] != locked.files[$0] }
                throw PluginProblem("\(url): its files differ from what \(lockPath) records for \(locked.name) \(locked.version) "
                    + "(\(named.joined(separator: ", "))); nothing was installed")
            }
            bundles.append((locked, files))
        }
        try checkDependencies(of: manifests, lock: lock, lockPath: lockPath)
        _ = try place(bundles, project: project)
        return bundles.map { Change(entry: $0.entry, from: $0.files.isEmpty ? $0.entry.version : nil) }
    }

    /// Refuses a lock whose bundles do not meet each other's dependencies (each of `manifests`,
    /// in order, its dependencies by name): a run would fail to resolve what it installs.
    static func checkDependencies(of manifests: [PluginManifest], lock: PluginLock, lockPath: String) throws(PluginProblem) {
        for manifest in manifests {
            for dependency in manifest.dependencies.sorted(by: { $0.name < $1.name }) {
                let locked = lock.entry(named: dependency.name)
                guard let locked, dependency.range.contains(locked.version) else {
                    let has = locked.map { "locks \(dependency.name) \($0.version)" } ?? "does not lock \(dependency.name)"
                    throw PluginProblem("\(manifest.label) depends on \(dependency.name) \(dependency.range), but \(lockPath) \(has); "
                        + "the lock cannot be installed as it is (plugins install NAME@RANGE makes a consistent one); nothing was installed")
                }
            }
        }
    }

    /// Whether `source` is a plain `http:` URL: nothing checks what it serves on the way.
    public static func isPlainHTTP(_ source: Source) -> Bool {
        guard case .web(let url) = source else { return false }
        return scheme(of: url) == "http"
    }

    /// The warning for a plain-HTTP repository, naming it: only the lock's SHA-256 protects
    /// what it serves.
    public static func plainHTTPWarning(_ source: Source) -> String {
        "\(source) is a plain http:// repository: what it serves can be changed on the way, and only the sha256 recorded in "
            + "rehearse.lock checks it (a bundle not locked yet is taken as it arrives); serve the repository over https"
    }

    /// The repositories `outdated`, `update` and `install --locked` ask for the lock at
    /// `project` (its entries named `names`, all when empty): `override`, else each entry's own,
    /// once each, sorted. An entry with neither is refused, naming it.
    public static func repositories(project: String, names: [String] = [], override: Source? = nil) throws(PluginProblem) -> [Source] {
        let lockPath = join(project, PluginLock.fileName)
        guard FileManager.default.fileExists(atPath: lockPath) else { return override.map { [$0] } ?? [] }
        let lock = try PluginLock.read(lockPath)
        var found: Set<Source> = []
        for entry in try chosen(lock, names: names, lockPath: lockPath) { found.insert(try repository(of: entry, override: override, lockPath: lockPath)) }
        return found.sorted { $0.description < $1.description }
    }
}
