public import Foundation
import Formats

/// A version of a bundle that could be chosen: one found in a folder, or one listed in a
/// repository's index.
public protocol BundleCandidate: Sendable {
    var manifest: PluginManifest { get }
    /// Where it is (a folder, an archive URL), for messages.
    var location: String { get }
}

/// A bundle found on the plugin path.
public struct PluginBundle: BundleCandidate {
    /// What its manifest says.
    public var manifest: PluginManifest
    /// The bundle's folder.
    public var folder: String
    /// The folder, for messages.
    public var location: String { folder }

    /// Whether this host can load it.
    public var isCompatible: Bool { manifest.api.contains(hostAPIVersion) }
}

/// Finds bundles in `--plugin-path` folders, then `REHEARSE_PLUGIN_PATH` (colon-separated),
/// then `./plugins`. Several versions of a bundle may sit side by side (`plugins install` puts
/// each in `plugins/NAME-VERSION`); which one a script gets is the resolver's choice.
public struct PluginCatalog: Sendable {
    /// Every bundle found, in plugin-path order.
    public private(set) var bundles: [PluginBundle] = []
    /// Manifests that could not be read, and versions claimed by two folders.
    public private(set) var problems: [String] = []
    /// The folders searched, in order.
    public let searchPath: [String]
    /// Folders claiming the same name and version: the resolver refuses that version.
    public private(set) var duplicates: [String: [String]] = [:]

    /// The search path for the given `--plugin-path` folders and environment.
    public static func searchPath(explicit: [String], environment: [String: String] = ProcessInfo.processInfo.environment) -> [String] {
        var path = explicit
        if let env = environment["REHEARSE_PLUGIN_PATH"] { path += env.split(separator: ":").map(String.init) }
        path.append("plugins")
        return path
    }

    /// Reads every manifest on `searchPath` (each at most `PluginManifest.maxBytes`, checked
    /// before reading, and refused when it is a symbolic link leading out of its bundle). No
    /// module of any bundle is read.
    public init(searchPath: [String]) {
        self.searchPath = searchPath
        let fm = FileManager.default
        var seenFolders: Set<String> = []
        var claims: [String: [String]] = [:]
        for root in searchPath {
            var isDirectory: ObjCBool = false
            guard fm.fileExists(atPath: root, isDirectory: &isDirectory), isDirectory.boolValue,
                  let entries = try? fm.contentsOfDirectory(atPath: root), let rootReal = BoundedFile.realPath(root) else { continue }
            // Hidden entries (an install's unfinished `.NAME-VERSION.partial-…`) are no bundles.
            for entry in entries.sorted() where !entry.hasPrefix(".") {
                let folder = root.hasSuffix("/") ? root + entry : root + "/" + entry
                let manifestPath = folder + "/" + PluginManifest.fileName
                guard BoundedFile.realPath(manifestPath) != nil, let real = BoundedFile.realPath(folder) else { continue }
                // A bundle is a folder inside its root: one reached through a symbolic link that
                // leads out would have its files checked against the wrong place.
                guard real.hasPrefix(rootReal.hasSuffix("/") ? rootReal : rootReal + "/") else {
                    problems.append("\(folder): a bundle folder must be a folder inside \(root), not a symbolic link leading to \(real); it is not used")
                    continue
                }
                // The same folder reached twice (./plugins and its absolute path) is one bundle.
                guard seenFolders.insert(real).inserted else { continue }
                do {
                    let data = try BoundedFile.readInside(folder, PluginManifest.fileName, maxBytes: PluginManifest.maxBytes)
                    let manifest = try PluginManifest.parse(String(decoding: data, as: UTF8.self), file: manifestPath)
                    let key = manifest.label
                    if let first = claims[key]?.first {
                        problems.append("\(folder): bundle \(key) is also in \(first); a script that needs that version is refused")
                    }
                    claims[key, default: []].append(folder)
                    bundles.append(PluginBundle(manifest: manifest, folder: folder))
                } catch let refusal as BoundedFile.Refusal {
                    problems.append("manifest \(refusal)")
                } catch {
                    problems.append("\(error)")
                }
            }
        }
        duplicates = claims.filter { $0.value.count > 1 }
    }

    /// The versions of `name` found, newest first (the first found of equal versions first).
    public func versions(of name: String) -> [PluginBundle] {
        bundles.enumerated().filter { $0.element.manifest.name == name }
            .sorted { $0.element.manifest.version != $1.element.manifest.version ? $0.element.manifest.version > $1.element.manifest.version : $0.offset < $1.offset }
            .map(\.element)
    }

    /// The names of the bundles found, sorted.
    public var names: [String] { Set(bundles.map(\.manifest.name)).sorted() }
}

/// Chooses one version of each bundle a run (or an install) needs: the newest that this host's
/// API accepts, that the lock file pins (when it pins one) and that every constraint in play
/// accepts (the dependencies of the bundles chosen so far). A choice that leaves a dependency
/// unsatisfiable is undone and the next version tried. A failure names every version found,
/// why each was turned down, and every constraint involved.
public final class BundleResolver<Candidate: BundleCandidate> {
    let candidates: (String) -> [Candidate]
    let pins: [String: SemVer]
    /// Versions claimed twice ("name version" → where): refused.
    let ambiguous: [String: [String]]
    /// Where the search looked, for "not found" messages.
    let lookedIn: String
    /// The version chosen for each bundle name so far.
    public private(set) var selected: [String: Candidate] = [:]
    /// Every constraint on a bundle: who set it and the range.
    private var constraints: [String: [(by: String, range: SemVerRange)]] = [:]
    /// Candidate versions tried so far; backtracking over many bundles with many versions can
    /// take exponential time, so the search gives up past `maxTries`.
    private var tries = 0
    /// The search gave up: every level rethrows at once instead of trying further versions.
    private var gaveUp = false
    /// Versions one resolution may try.
    public static var maxTries: Int { 10_000 }
    /// The longest account of a deeper failure a message quotes.
    static var quotedFailure: Int { 300 }

    /// A resolver over `candidates` (the versions of a name, newest first), pinned to `pins`, refusing the `ambiguous` versions; `lookedIn` names where candidates come from.
    public init(candidates: @escaping (String) -> [Candidate], pins: [String: SemVer] = [:], ambiguous: [String: [String]] = [:],
                lookedIn: String) {
        self.candidates = candidates
        self.pins = pins
        self.ambiguous = ambiguous
        self.lookedIn = lookedIn
    }

    /// Chooses `name` (and, transitively, its dependencies) under `range`, required by `by`.
    @discardableResult
    public func select(_ name: String, range: SemVerRange? = nil, by: String) throws(PluginProblem) -> Candidate {
        constraints[name, default: []].append((by, range ?? Self.any))
        if let chosen = selected[name] {
            if let broken = constraints[name]!.first(where: { !$0.range.contains(chosen.manifest.version) }) {
                // A refused requirement leaves nothing behind (a script may catch the error).
                defer { constraints[name]!.removeLast() }
                throw PluginProblem("\(broken.by) needs \(name) \(broken.range), but \(chosen.manifest.label) was already chosen (\(constraintText(name)))",
                                    resolution: .conflict(name: name, chosen: chosen.manifest.label, by: broken.by, range: "\(broken.range)"))
            }
            return chosen
        }
        let found = candidates(name)
        guard !found.isEmpty else {
            throw PluginProblem("\(by) needs bundle \(name)\(range.map { " \($0)" } ?? ""), which is not in \(lookedIn)", resolution: .missing(name: name))
        }
        var turnedDown: [String] = []
        var typed: [PluginResolution.TurnedDown] = []
        for candidate in found {
            tries += 1
            if tries > Self.maxTries {
                gaveUp = true
                throw PluginProblem("resolving bundle versions gave up after trying \(Self.maxTries) versions (while choosing \(name) for \(by)); pin versions in rehearse.lock or narrow the dependency ranges",
                                    resolution: .gaveUp(tries: Self.maxTries))
            }
            let m = candidate.manifest
            var reasons: [PluginResolution.Reason] = []
            if !m.api.contains(hostAPIVersion) { reasons.append(.hostAPI(needs: "\(m.api)", provides: "\(hostAPIVersion)")) }
            if let pin = pins[name], pin != m.version { reasons.append(.pinned("\(pin)")) }
            for c in constraints[name]! where !c.range.contains(m.version) { reasons.append(.constraint(by: c.by, range: "\(c.range)")) }
            if let places = ambiguous[m.label] { reasons.append(.claimed(folders: places)) }
            var quoted: String?
            if reasons.isEmpty {
                let savedSelected = selected, savedConstraints = constraints
                selected[name] = candidate
                do {
                    for dependency in m.dependencies { try select(dependency.name, range: dependency.range, by: m.label) }
                    return candidate
                } catch {
                    selected = savedSelected
                    constraints = savedConstraints
                    if gaveUp { throw error }
                    // Quoted, not nested whole: a deep conflict would repeat itself at every level.
                    quoted = error.message.count > Self.quotedFailure ? error.message.prefix(Self.quotedFailure) + "…" : error.message
                    reasons.append(.dependencies(error.resolution))
                }
            }
            typed.append(PluginResolution.TurnedDown(label: m.label, folder: candidate.location, reasons: reasons))
            turnedDown.append("\(m.label) (\(candidate.location)): \(reasons.map { Self.sentence($0, name: name, quoted: quoted) }.joined(separator: "; "))")
        }
        constraints[name]!.removeLast()
        throw PluginProblem("no version of \(name) fits; " + turnedDown.joined(separator: "; ")
                            + " [constraints: \(by) needs \(range ?? Self.any)\(constraints[name]!.isEmpty ? "" : "; " + constraintText(name))]",
                            resolution: .noVersionFits(name: name, typed))
    }

    /// `reason` as the failure's sentence says it; `quoted`, the deeper failure's (bounded) text.
    private static func sentence(_ reason: PluginResolution.Reason, name: String, quoted: String?) -> String {
        switch reason {
        case .hostAPI(let needs, let provides): return "needs host API \(needs), this rehearse provides \(provides)"
        case .pinned(let version): return "rehearse.lock pins \(name) \(version)"
        case .constraint(let by, let range): return "\(by) needs \(range)"
        case .claimed(let folders): return "claimed by \(folders.count) folders: \(folders.joined(separator: " and "))"
        case .dependencies: return "its dependencies cannot be met: \(quoted ?? "")"
        }
    }

    private func constraintText(_ name: String) -> String {
        constraints[name, default: []].map { "\($0.by) needs \(name) \($0.range)" }.joined(separator: "; ")
    }

    // swiftlint:disable:next force_try
    static var any: SemVerRange { try! SemVerRange("*") }
}

extension PluginCatalog {
    /// A resolver over this catalog's bundles, pinned to `lock`'s versions.
    public func resolver(lock: PluginLock?) -> BundleResolver<PluginBundle> {
        BundleResolver(candidates: { self.versions(of: $0) }, pins: lock?.pins ?? [:], ambiguous: duplicates,
                       lookedIn: "the plugin path (\(searchPath.map(absolutePath).joined(separator: ", ")))")
    }
}

/// `path` made absolute against the current folder and tidied (`a/./b/../c` is `a/c`), for
/// messages and records that must mean the same thing read from any folder.
package func absolutePath(_ path: String) -> String {
    let base = path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
    return URL(fileURLWithPath: base).standardizedFileURL.path
}
