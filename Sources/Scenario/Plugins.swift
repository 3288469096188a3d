import Foundation
import LuaHost
import UpgradeEngine

/// Why a plugin bundle cannot be used, in one sentence.
public struct PluginProblem: Error, Equatable, CustomStringConvertible {
    public let message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// The host API version bundles declare a range against.
public let hostAPIVersion = SemVer(1, 0, 0)

/// A plugin bundle's manifest, `rehearse-plugin.json`: data only, read without running any
/// plugin code.
public struct PluginManifest: Sendable {
    public static let fileName = "rehearse-plugin.json"
    /// The largest manifest read, in bytes (checked before reading).
    public static let maxBytes = 64 * 1024

    /// The bundle's name, which is also its `require` name: lowercase letters, digits, '-'.
    public var name: String
    public var version: SemVer
    /// The host API versions it works with, e.g. ">=1.0.0 <2.0.0".
    public var api: SemVerRange
    public var description: String
    /// The module `require "<name>"` loads, relative to the bundle (default "init").
    public var entry: String
    /// What the bundle offers scenario scripts (e.g. "phase", "fault", "health"), for listings.
    public var provides: [String]

    /// Parses a manifest, reporting every problem at once.
    public static func parse(_ text: String, file: String) throws(PluginProblem) -> PluginManifest {
        let json: JSON
        do {
            json = try JSON.parse(text, maxBytes: 64 * 1024, maxDepth: 8)
        } catch {
            throw PluginProblem("\(file): the manifest \(error.problem)")
        }
        guard let fields = json.object else { throw PluginProblem("\(file): the manifest is \(json.kindName); expected an object") }
        var problems: [String] = []
        let known = ["name", "version", "api", "description", "entry", "provides"]
        for key in fields.keys.sorted() where !known.contains(key) {
            problems.append("unknown field \"\(key)\"; allowed \(known.joined(separator: ", "))")
        }
        func string(_ key: String, required: Bool) -> String? {
            switch fields[key] {
            case .string(let s)?: return s
            case nil: if required { problems.append("\"\(key)\" is missing") }
            case let other?: problems.append("\"\(key)\" is \(other.kindName); expected a string")
            }
            return nil
        }
        let name = string("name", required: true) ?? ""
        if !name.isEmpty && !name.allSatisfy({ ($0.isASCII && ($0.isLowercase || $0.isNumber)) || $0 == "-" }) {
            problems.append("name \"\(name)\" is not allowed; use lowercase letters, digits and '-'")
        }
        let versionText = string("version", required: true)
        let version = versionText.flatMap { SemVer($0) }
        if let versionText, version == nil { problems.append("version \"\(versionText)\" is not SemVer (MAJOR.MINOR.PATCH)") }
        var api: SemVerRange?
        if let apiText = string("api", required: true) {
            do { api = try SemVerRange(apiText) } catch { problems.append("api: \(error.message)") }
        }
        let entry = string("entry", required: false) ?? "init"
        if entry.contains("..") || entry.hasPrefix("/") || entry.isEmpty {
            problems.append("entry \"\(entry)\" must be a module name inside the bundle")
        }
        var provides: [String] = []
        if let p = fields["provides"] {
            if case .array(let items) = p, items.allSatisfy({ if case .string = $0 { return true } else { return false } }) {
                provides = items.compactMap { if case .string(let s) = $0 { return s } else { return nil } }
            } else {
                problems.append("\"provides\" must be a list of strings")
            }
        }
        let description = string("description", required: true) ?? ""
        guard problems.isEmpty, let version, let api else {
            throw PluginProblem("\(file): " + problems.joined(separator: "; "))
        }
        return PluginManifest(name: name, version: version, api: api, description: description, entry: entry, provides: provides)
    }
}

/// A bundle found on the plugin path.
public struct PluginBundle: Sendable {
    public var manifest: PluginManifest
    /// The bundle's folder.
    public var folder: String

    /// Whether this host can load it.
    public var isCompatible: Bool { manifest.api.contains(hostAPIVersion) }
}

/// Finds bundles in `--plugin-path` folders, then `REHEARSE_PLUGIN_PATH` (colon-separated),
/// then `./plugins`. The first bundle of a name wins; later ones are reported as shadowed.
public struct PluginCatalog: Sendable {
    public private(set) var bundles: [PluginBundle] = []
    /// Manifests that could not be read, and shadowed duplicates.
    public private(set) var problems: [String] = []
    public let searchPath: [String]

    /// The search path for the given `--plugin-path` folders and environment.
    public static func searchPath(explicit: [String], environment: [String: String] = ProcessInfo.processInfo.environment) -> [String] {
        var path = explicit
        if let env = environment["REHEARSE_PLUGIN_PATH"] { path += env.split(separator: ":").map(String.init) }
        path.append("plugins")
        return path
    }

    /// Folders that claim each bundle name, in plugin-path order. Two folders claiming one name
    /// is an error when a script requires that name (a folder cannot silently take over another).
    public private(set) var claims: [String: [String]] = [:]

    /// Reads every manifest on `searchPath` (each at most `PluginManifest.maxBytes`, checked
    /// before reading, and refused when it is a symbolic link leading out of its bundle). No
    /// module of any bundle is read.
    public init(searchPath: [String]) {
        self.searchPath = searchPath
        let fm = FileManager.default
        var seenFolders: Set<String> = []
        for root in searchPath {
            var isDirectory: ObjCBool = false
            guard fm.fileExists(atPath: root, isDirectory: &isDirectory), isDirectory.boolValue,
                  let entries = try? fm.contentsOfDirectory(atPath: root) else { continue }
            for entry in entries.sorted() {
                let folder = root.hasSuffix("/") ? root + entry : root + "/" + entry
                let manifestPath = folder + "/" + PluginManifest.fileName
                guard BoundedFile.realPath(manifestPath) != nil, let real = BoundedFile.realPath(folder) else { continue }
                // The same folder reached twice (./plugins and its absolute path) is one bundle.
                guard seenFolders.insert(real).inserted else { continue }
                do {
                    let data = try BoundedFile.readInside(folder, PluginManifest.fileName, maxBytes: PluginManifest.maxBytes)
                    let manifest = try PluginManifest.parse(String(decoding: data, as: UTF8.self), file: manifestPath)
                    if let first = claims[manifest.name]?.first {
                        problems.append("\(folder): bundle \"\(manifest.name)\" is also claimed by \(first); a script that requires it is refused")
                    } else {
                        bundles.append(PluginBundle(manifest: manifest, folder: folder))
                    }
                    claims[manifest.name, default: []].append(folder)
                } catch let refusal as BoundedFile.Refusal {
                    problems.append("manifest \(refusal)")
                } catch {
                    problems.append("\(error)")
                }
            }
        }
    }

    /// The bundle called `name`, if any.
    public func bundle(named name: String) -> PluginBundle? { bundles.first { $0.manifest.name == name } }

    /// Resolves `require "<bundle>"` (the entry module) and `require "<bundle>.<module>"`
    /// (a file inside the bundle): nil when no bundle has that name.
    func resolve(_ name: String) throws -> (source: String, path: String)? {
        let head = String(name.split(separator: ".", maxSplits: 1).first ?? "")
        guard let bundle = bundle(named: head) else { return nil }
        if let folders = claims[head], folders.count > 1 {
            throw LuaArgumentError(position: 1, problem: "bundle \(head) is claimed by \(folders.count) folders on the plugin path: \(folders.joined(separator: " and ")); remove or rename all but one")
        }
        guard bundle.isCompatible else {
            throw LuaArgumentError(position: 1, problem: "bundle \(head) \(bundle.manifest.version) needs host API \(bundle.manifest.api), and this rehearse provides \(hostAPIVersion)")
        }
        let rest = name.count > head.count ? String(name.dropFirst(head.count + 1)) : bundle.manifest.entry
        let found = try ModuleFinder(folders: [bundle.folder]).find(rest)
        return (found.source, found.displayPath)
    }

    /// Checks every bundle: manifest read, API compatible, every Lua file compiles (without
    /// running it). Returns one line per problem.
    public func check() -> [String] {
        var found = problems
        for bundle in bundles {
            let label = "\(bundle.manifest.name) \(bundle.manifest.version) (\(bundle.folder))"
            if !bundle.isCompatible {
                found.append("\(label): needs host API \(bundle.manifest.api), this rehearse provides \(hostAPIVersion)")
            }
            do {
                _ = try ModuleFinder(folders: [bundle.folder]).find(bundle.manifest.entry)
            } catch {
                found.append("\(label): entry module \"\(bundle.manifest.entry)\" not found")
            }
            let files = (FileManager.default.enumerator(atPath: bundle.folder)?.allObjects as? [String] ?? []).filter { $0.hasSuffix(".lua") }.sorted()
            for file in files {
                let path = bundle.folder + "/" + file
                do {
                    let data = try BoundedFile.readInside(bundle.folder, file, maxBytes: BoundedFile.maxSourceBytes)
                    let state = try LuaState(limits: LuaLimits(instructions: 1_000_000, memoryBytes: 16 << 20))
                    _ = try state.load(String(decoding: data, as: UTF8.self), chunkName: path)
                } catch let refusal as BoundedFile.Refusal {
                    found.append("\(label): \(refusal)")
                } catch {
                    found.append("\(label): \(error)")
                }
            }
        }
        return found
    }
}

