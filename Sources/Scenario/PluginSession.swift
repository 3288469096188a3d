import Formats
import LuaHost
import Plugins

/// The bundles of one load or run: the catalog (read on first use, so a script that requires no
/// bundle reads none), the lock file, the versions chosen so far, and every module read.
final class PluginSession {
    let searchPath: [String]
    let lockPath: String?
    private var built: PluginCatalog?
    private var resolver: BundleResolver<PluginBundle>?
    private var lock: PluginLock?
    private var verified: Set<String> = []
    /// Every module read, by the name it was required as.
    private(set) var loaded: [String: LuaProgram.ModuleSource] = [:]
    /// Every bundle chosen, in the order first required.
    private(set) var chosen: [LuaProgram.BundleChoice] = []

    init(searchPath: [String], lockPath: String?) {
        self.searchPath = searchPath
        self.lockPath = lockPath
    }

    var catalog: PluginCatalog {
        if let built { return built }
        let catalog = PluginCatalog(searchPath: searchPath)
        built = catalog
        return catalog
    }

    /// The plugin path's folders (absolute), and as text with the bundles on it, for a `module
    /// not found` message.
    var searched: (folders: [String], text: String) {
        let names = catalog.names
        let folders = catalog.searchPath.map(absolutePath)
        return (folders, folders.joined(separator: ", ") + (names.isEmpty ? "" : "; bundles: " + names.joined(separator: ", ")))
    }

    /// `require "<bundle>"` (its entry module) or `require "<bundle>.<module>"` (a file inside
    /// it): nil when no bundle has that name. The version is the resolver's choice; a locked
    /// bundle must have exactly the files the lock recorded.
    func require(_ name: String) throws -> (source: String, path: String)? {
        let head = String(name.split(separator: ".", maxSplits: 1).first ?? "")
        guard !catalog.versions(of: head).isEmpty else { return nil }
        do {
            if resolver == nil {
                if let lockPath { lock = try PluginLock.read(lockPath) }
                resolver = catalog.resolver(lock: lock)
            }
            let bundle = try resolver!.select(head, by: "the scenario")
            let entry = lock?.entry(named: head)
            if let entry, verified.insert(head).inserted {
                let changes = PluginLock.differences(entry, folder: bundle.folder, shownAs: bundle.folder)
                guard changes.isEmpty else {
                    verified.remove(head)
                    throw PluginProblem("bundle \(bundle.manifest.label) differs from \(lockPath ?? PluginLock.fileName): \(changes.joined(separator: "; "))")
                }
            }
            if !chosen.contains(where: { $0.name == head }) {
                chosen.append(LuaProgram.BundleChoice(name: head, version: bundle.manifest.version.description, folder: bundle.folder,
                                                              locked: entry != nil))
            }
            let rest = name.count > head.count ? String(name.dropFirst(head.count + 1)) : bundle.manifest.entry
            let found = try ModuleFinder(folders: [bundle.folder]).find(rest)
            // The entry module of a bundle that declares its options checks what scripts pass.
            let source = name == head ? BundleOptionGuard.wrap(found.source, manifest: bundle.manifest) : found.source
            loaded[name] = LuaProgram.ModuleSource(source: source, path: found.displayPath)
            return (source, found.displayPath)
        } catch let problem as PluginProblem {
            // rehearse's own sentence (a tampered bundle names the file and both hashes), not
            // wrapped in Lua's "bad argument #1 to 'require'".
            throw LuaError(kind: .runtime, message: problem.message)
        }
    }
}
