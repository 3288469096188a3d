import Formats
import LuaHost
public import Plugins
import UpgradeEngine

/// One thing `plugins check` found wrong with a bundle.
public struct PluginFinding: Equatable, Sendable, CustomStringConvertible {
    /// What kind of finding.
    public enum Kind: String, Sendable {
        /// A manifest that cannot be read, or a version claimed by two folders.
        case manifest
        /// A file a bundle may not hold (a link, a special file), or a folder that cannot be read.
        case file
        /// The bundle needs another host API.
        case incompatible
        /// A Lua file that does not compile.
        case compile
        /// A module the bundle requires (its entry, or one of its own files) is not there.
        case missingModule
        /// A declared dependency no version on the plugin path satisfies.
        case missingDependency
        /// The code requires another bundle its manifest does not list in `dependencies`.
        case undeclaredRequire
        /// The manifest declares an export the entry module does not return.
        case missingExport
        /// The entry module fails when it runs (an error, the budget, the memory cap).
        case load
    }

    /// What kind of finding.
    public var kind: Kind
    /// `name version`, or nil for a manifest that could not be read.
    public var bundle: String?
    /// The bundle's folder, when known.
    public var folder: String?
    /// What is wrong and where.
    public var message: String

    public var description: String {
        (bundle.map { "\($0)" + (folder.map { " (\($0))" } ?? "") + ": " } ?? "") + message
    }
}

extension PluginCatalog {
    /// Checks every bundle as a run would meet it: the manifest, the host API, that every Lua
    /// file compiles, and then its entry module loaded in the sandbox (a fresh state each, with
    /// a budget of 10 million instructions and 16 MiB): every module it requires must exist,
    /// every other bundle it requires must be a declared dependency that some version on the
    /// plugin path satisfies, and it must return a table holding every declared export.
    public func check() -> [PluginFinding] {
        var found = problems.map { PluginFinding(kind: .manifest, bundle: nil, folder: nil, message: $0) }
        for bundle in bundles {
            let m = bundle.manifest
            func add(_ kind: PluginFinding.Kind, _ message: String) {
                found.append(PluginFinding(kind: kind, bundle: m.label, folder: bundle.folder, message: message))
            }
            if !bundle.isCompatible { add(.incompatible, "needs host API \(m.api), this rehearse provides \(hostAPIVersion)") }
            do {
                for file in try BundleFiles.list(bundle.folder) where file.hasSuffix(".lua") {
                    do {
                        let data = try BoundedFile.readInside(bundle.folder, file, maxBytes: BoundedFile.maxSourceBytes)
                        let state = try LuaState(limits: LuaLimits(instructions: 1_000_000, memoryBytes: 16 << 20))
                        let chunk = bundle.folder + "/" + file
                        switch LuaSourceText.decode(data) {
                        case .success(let text): _ = try state.load(text, chunkName: chunk)
                        case .failure(let bad): add(.compile, bad.message(chunk))
                        }
                    } catch let refusal as BoundedFile.Refusal {
                        add(.compile, "\(refusal)")
                    } catch {
                        add(.compile, "\(error)")
                    }
                }
            } catch {
                add(.file, error.message)
            }
            for dependency in m.dependencies {
                let resolver = self.resolver(lock: nil)
                do { try resolver.select(dependency.name, range: dependency.range, by: m.label) } catch {
                    add(.missingDependency, error.message)
                }
            }
            found += loadEntry(bundle)
        }
        return found
    }

    /// Runs `bundle`'s entry module in a fresh sandbox and reports what a run would meet.
    private func loadEntry(_ bundle: PluginBundle) -> [PluginFinding] {
        let m = bundle.manifest
        var found: [PluginFinding] = []
        func add(_ kind: PluginFinding.Kind, _ message: String) {
            found.append(PluginFinding(kind: kind, bundle: m.label, folder: bundle.folder, message: message))
        }
        let declared = Set(m.dependencies.map(\.name))
        let resolver = self.resolver(lock: nil)
        // The bundle itself is the version under check, whatever else the path holds.
        let catalog = self
        var options = LuaSandboxOptions(print: { _ in })
        options.resolveModule = { name in
            if let builtin = BuiltinLibrary.modules[name] { return (builtin, "(builtin)/\(name).lua") }
            let head = String(name.split(separator: ".", maxSplits: 1).first ?? "")
            let folder: String
            if head == m.name {
                folder = bundle.folder
            } else {
                guard declared.contains(head) else {
                    let known = !catalog.versions(of: head).isEmpty
                    add(.undeclaredRequire, "requires \"\(name)\", \(known ? "a bundle" : "a module") its manifest does not list in dependencies")
                    throw LuaArgumentError(position: 1, problem: "\(head) is not a declared dependency of \(m.label)")
                }
                do { folder = try resolver.select(head, by: m.label).folder } catch {
                    throw LuaArgumentError(position: 1, problem: "\(error)")
                }
            }
            let rest = name.count > head.count ? String(name.dropFirst(head.count + 1)) : (head == m.name ? m.entry : resolver.selected[head]!.manifest.entry)
            do {
                let module = try ModuleFinder(folders: [folder]).find(rest)
                return (module.source, module.displayPath)
            } catch {
                add(.missingModule, "requires \"\(name)\": \(error)")
                throw error
            }
        }
        let returned: [LuaValue]
        do {
            let state = try LuaState(limits: LuaLimits(instructions: 10_000_000, memoryBytes: 16 << 20))
            try state.openSandbox(options)
            // Required as a script would, then only the names of what it returns come back.
            let probe = """
                local m = require("\(m.name)")
                if type(m) ~= "table" then return type(m) end
                local names = {}
                for k in pairs(m) do if type(k) == "string" then names[#names + 1] = k end end
                return names
                """
            returned = try state.run(probe, chunkName: "=plugins check")
        } catch {
            // A missing module or undeclared require is already reported; anything else is a load failure.
            if found.isEmpty { add(.load, "loading the entry module failed: \(error)") }
            return found
        }
        if let kind = returned.first?.stringValue {
            add(.missingExport, "the entry module returns a \(kind), not a table; the manifest declares exports \(m.exports.keys.sorted().joined(separator: ", "))")
            return found
        }
        var exports: Set<String> = []
        if case .array(let items)? = returned.first { exports = Set(items.compactMap(\.stringValue)) }
        for name in m.exports.keys.sorted() where !exports.contains(name) {
            add(.missingExport, "the manifest declares export \"\(name)\", which the entry module does not return (it returns \(exports.sorted().joined(separator: ", ")))")
        }
        return found
    }
}
