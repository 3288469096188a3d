import ArgumentParser
import Formats
import Foundation
import HTTPFetch
import Plugins
import Scenario
import UpgradeEngine

/// `rehearse plugins …`: what is on the plugin path, and the bundle life cycle (pack, index,
/// install, verify).
struct PluginsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "plugins",
        abstract: "List, show, check, pack, index, install, update and verify plugin bundles.",
        subcommands: [List.self, Show.self, Check.self, Pack.self, Index.self, Install.self, Outdated.self, Update.self, Verify.self]
    )

    struct PathOptions: ParsableArguments {
        @Option(name: .customLong("plugin-path"), help: "A folder of plugin bundles, searched before REHEARSE_PLUGIN_PATH and ./plugins (repeatable).")
        var pluginPath: [String] = []
        @Option(help: "A lock file whose pins decide the versions shown as chosen (default: ./rehearse.lock when it exists).")
        var lock: String?

        /// The catalog of the plugin path; every `--plugin-path` must be a folder.
        func catalog() throws -> PluginCatalog {
            try checkPluginPaths(pluginPath)
            return PluginCatalog(searchPath: PluginCatalog.searchPath(explicit: pluginPath))
        }

        func lockFile() throws -> PluginLock? {
            let path = lock ?? (FileManager.default.fileExists(atPath: PluginLock.fileName) ? PluginLock.fileName : nil)
            guard let path else { return nil }
            return try PluginLock.read(path)
        }
    }

    typealias Output = OutputFormat

    /// Runs `body`: a bundle problem exits 2 with its own message, any other error (a file that
    /// cannot be written) exits 2 saying it could not `what`.
    static func reportingProblems(_ what: String, _ body: () throws -> Void) throws {
        do {
            try body()
        } catch let problem as PluginProblem {
            throw problem
        } catch let refused as OutputFileError {
            throw InputError(.command(what), problem: refused.description)
        } catch {
            throw InputError(.command(what), problem: "cannot \(what): \(error.localizedDescription)")
        }
    }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "list", abstract: "Every bundle: versions found, the one a script gets and why, exports, dependencies, folders.")
        @OptionGroup var path: PathOptions
        @Option(help: "text or json.") var output: Output = .text

        func run() throws {
            let catalog = try path.catalog()
            let summaries = BundleSummary.all(catalog, lock: try path.lockFile())
            if output == .json {
                print(JSON.object(["hostAPI": .string(hostAPIVersion.description), "searchPath": .array(catalog.searchPath.map(JSON.string)),
                                   "bundles": .array(summaries.map(\.json)), "problems": .array(catalog.problems.map(JSON.string))]).serialized())
                return
            }
            for summary in summaries { summary.lines.forEach(printText) }
            if summaries.isEmpty { printText("no bundles on the plugin path: \(catalog.searchPath.joined(separator: ", "))") }
            for problem in catalog.problems { warn(problem) }
        }
    }

    struct Show: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "show", abstract: "One bundle: every version found, the one chosen and why, exports, dependencies.")
        @Argument(help: "The bundle's name.") var name: String
        @OptionGroup var path: PathOptions
        @Option(help: "text or json.") var output: Output = .text

        func run() throws {
            let catalog = try path.catalog()
            guard let summary = BundleSummary.all(catalog, lock: try path.lockFile()).first(where: { $0.name == name }) else {
                throw InputError(.command("plugins show"), name, problem: "no bundle of that name on the plugin path (\(catalog.searchPath.joined(separator: ", ")))",
                                      allowed: catalog.names.joined(separator: ", "))
            }
            if output == .json { print(summary.json.serialized()) } else { summary.lines.forEach(printText) }
        }
    }

    struct Check: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "check", abstract: "Check every bundle as a run meets it: manifest, API range, Lua files, entry module loaded in the sandbox, dependencies, exports; exit 2 on any problem.")
        @OptionGroup var path: PathOptions
        @Option(help: "text or json.") var output: Output = .text

        func run() throws {
            let catalog = try path.catalog()
            let findings = catalog.check()
            if output == .json {
                print(JSON.object(["bundles": .int(catalog.bundles.count), "findings": .array(findings.map { f in
                    .object(["kind": .string(f.kind.rawValue), "bundle": f.bundle.map(JSON.string) ?? .null,
                             "folder": f.folder.map(JSON.string) ?? .null, "message": .string(f.message)])
                })]).serialized())
            } else {
            }
            guard findings.isEmpty else { throw CommandFailure(output == .json ? [] : findings.map { Diagnostic($0.description) }, exitCode: 2) }
            if output == .text { printText("\(catalog.bundles.count) bundle(s) ok") }
        }
    }

    struct Pack: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "pack", abstract: "Pack a bundle folder into NAME-VERSION.tar (the same files give the same bytes) and print its sha256.")
        @Argument(help: "The bundle's folder.") var folder: String
        @Option(name: .customLong("into"), help: "The folder to write the archive into.") var destination = "."

        func run() throws {
            try PluginsCommand.reportingProblems("write the archive") {
                let (manifest, bytes) = try PluginArchive.pack(folder)
                let path = PluginRepository.join(destination, PluginArchive.fileName(manifest))
                try OutputFile.write(bytes, to: path, role: "the archive")
                printText("\(PluginArchive.sha256(bytes))  \(path)")
            }
        }
    }

    struct Index: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "index", abstract: "Write rehearse-index.json for the bundle archives in a folder: it becomes a bundle repository.")
        @Argument(help: "The folder holding NAME-VERSION.tar archives.") var repository: String
        @Option(help: "The URL the folder is served at (archive URLs are relative to the index without it).") var url: String?

        func run() throws {
            try PluginsCommand.reportingProblems("write the index") {
                let text = try PluginRepository.index(repository, baseURL: url)
                let path = PluginRepository.join(repository, PluginRepository.indexName)
                try OutputFile.write(text, to: path, role: "the index")
                printText(path)
            }
        }
    }

    struct Install: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "install",
            abstract: "Install bundles (NAME@RANGE) and their dependencies from a repository into ./plugins, recording them and the range in rehearse.lock; NAME alone stays inside the range locked.",
            discussion: """
                A locked bundle never moves below its lock unless asked for with a range, and a locked version whose \
                archive has another sha256 than the lock records is refused (exit 2; the lock is not rewritten).
                --locked (for CI) installs exactly what rehearse.lock names, with its hashes, from each bundle's \
                recorded repository (or --repo); it names no bundle and never writes the lock. It exits 2 when the \
                lock is missing or anything would differ from it: a version the repository no longer lists or \
                lists with other bytes, an archive whose files are not the lock's, a folder already there that differs.
                A plain http:// repository is warned about (stderr, and "warnings" in --json).
                """)
        @Argument(help: "What to install, e.g. 'slow-boot@^1.1' (none with --locked).") var requirements: [String] = []
        @Option(help: "The repository: an http(s) URL or a folder holding rehearse-index.json (with --locked, default: each bundle's recorded one).") var repo: String?
        @Flag(name: .customLong("locked"), help: "Install exactly what rehearse.lock names, with its hashes; fail (exit 2) when the lock is missing or anything would differ; never write the lock.")
        var locked = false
        @Option(help: "The project folder (plugins/ and rehearse.lock go there).") var project = "."
        @OptionGroup var format: JSONOutputOptions

        func validate() throws { try format.format.refuseTable("plugins install") }

        func run() throws {
            let lockPath = PluginRepository.join(project, PluginLock.fileName)
            let source = try repo.map { text throws(PluginProblem) in try PluginRepository.Source(parsing: text) }
            if locked {
                guard requirements.isEmpty else {
                    throw InputError(option: "--locked", problem: "--locked installs exactly what \(lockPath) names; it takes no bundle (given \(requirements.joined(separator: " ")))",
                                     allowed: "plugins install --locked [--repo URL|DIR] [--project DIR], or plugins install NAME@RANGE… without --locked")
                }
                let warnings = PluginsCommand.plainHTTPWarnings(try PluginRepository.repositories(project: project, override: source))
                let changes = try PluginRepository.installLocked(project: project, repository: source, fetch: PluginsCommand.fetch)
                PluginsCommand.report(changes, json: format.json, lockPath: lockPath, warnings: warnings, wroteLock: false)
                return
            }
            guard let source else {
                throw InputError(option: "--repo", problem: "plugins install needs a repository", allowed: "--repo URL|DIR, or --locked to install what rehearse.lock names")
            }
            let wanted = try requirements.map { text throws(PluginProblem) in try PluginRepository.Requirement(parsing: text) }
            guard !wanted.isEmpty else { throw PluginProblem("name at least one bundle, e.g. slow-boot@^1.1 (or give --locked)") }
            let warnings = PluginsCommand.plainHTTPWarnings([source])
            let changes = try PluginRepository.install(wanted, from: source, project: project, fetch: PluginsCommand.fetch)
            PluginsCommand.report(changes, json: format.json, lockPath: lockPath, warnings: warnings, wroteLock: true)
        }
    }

    struct Verify: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "verify", abstract: "Recompute every locked bundle's file hashes; exit 1 naming each file that differs.")
        @Option(help: "The project folder holding rehearse.lock.") var project = "."

        func run() throws {
            let path = PluginRepository.join(project, PluginLock.fileName)
            let lock: PluginLock
            lock = try PluginLock.read(path)
            var differences: [String] = []
            for entry in lock.entries { differences += PluginLock.differences(entry, project: project) }
            guard differences.isEmpty else { throw CommandFailure(differences.map { Diagnostic($0, exitCode: 1) }, exitCode: 1) }
            printText("\(lock.entries.count) locked bundle(s) match \(path)")
        }
    }
}

/// One bundle name as `plugins list` and `plugins show` present it.
struct BundleSummary {
    var name: String
    var versions: [PluginBundle]
    var chosen: PluginBundle?
    /// Why that one, or why none.
    var reason: String

    static func all(_ catalog: PluginCatalog, lock: PluginLock?) -> [BundleSummary] {
        catalog.names.map { name in
            let resolver = catalog.resolver(lock: lock)
            do {
                let chosen = try resolver.select(name, by: "a script")
                let pinned = lock?.entry(named: name) != nil
                return BundleSummary(name: name, versions: catalog.versions(of: name), chosen: chosen,
                                     reason: pinned ? "pinned by the lock file" : "the newest version this host's API \(hostAPIVersion) accepts, with its dependencies met")
            } catch {
                return BundleSummary(name: name, versions: catalog.versions(of: name), chosen: nil, reason: "\(error)")
            }
        }
    }

    var json: JSON {
        .object(["name": .string(name), "chosen": chosen.map { .string($0.manifest.version.description) } ?? .null, "reason": .string(reason),
                 "versions": .array(versions.map { b in
                     .object(["version": .string(b.manifest.version.description), "folder": .string(b.folder), "api": .string(b.manifest.api.text),
                              "compatible": .bool(b.isCompatible), "description": .string(b.manifest.description), "entry": .string(b.manifest.entry),
                              "dependencies": .object(Dictionary(uniqueKeysWithValues: b.manifest.dependencies.map { ($0.name, JSON.string($0.range.text)) })),
                              "exports": .object(b.manifest.exports.mapValues(JSON.string)),
                              "options": b.manifest.options.map { options -> JSON in JSON.array(options.map { o -> JSON in
                                  JSON.object(["name": .string(o.name), "type": .string(o.kind.rawValue), "default": o.defaultValue ?? .null, "doc": .string(o.doc),
                                               "exports": o.exports.map { JSON.array($0.map(JSON.string)) } ?? .null])
                              }) } ?? .null])
                 })])
    }

    /// The lines `list` and `show` print for this bundle.
    var lines: [String] {
        var lines = ["\(name): " + (chosen.map { "\($0.manifest.version) chosen (\(reason))" } ?? "no version usable: \(reason)")]
        for b in versions {
            let m = b.manifest
            lines.append("  \(m.version)\(b.folder == chosen?.folder ? " *" : "")  api \(m.api)\(b.isCompatible ? "" : " (INCOMPATIBLE with \(hostAPIVersion))")  \(b.folder)")
            lines.append("    \(m.description)")
            if !m.dependencies.isEmpty { lines.append("    depends on " + m.dependencies.map { "\($0.name) \($0.range)" }.joined(separator: ", ")) }
            for export in m.exports.keys.sorted() { lines.append("    \(export): \(m.exports[export]!)") }
            if let options = m.options {
                for o in options { lines.append("    option \(o.summary)\(o.exports.map { " for " + $0.joined(separator: ", ") } ?? ""): \(o.doc)") }
            } else {
                lines.append("    options not declared: what scripts pass its functions is not checked")
            }
        }
        return lines
    }
}
