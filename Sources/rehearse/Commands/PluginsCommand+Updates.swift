import ArgumentParser
import Formats
import Foundation
import HTTPFetch
import Plugins

extension PluginsCommand {
    /// Where `outdated` and `update` look: the lock's project and, optionally, another repository.
    struct UpdateOptions: ParsableArguments {
        @Option(help: "The project folder holding rehearse.lock.") var project = "."
        @Option(help: "The repository to ask instead of the one each bundle's lock entry records (an http(s) URL or a folder).") var repo: String?
        @OptionGroup var format: JSONOutputOptions

        func validate() throws { try format.format.refuseTable("plugins outdated and update") }

        func source() throws -> PluginRepository.Source? { try repo.map { text throws(PluginProblem) in try PluginRepository.Source(parsing: text) } }
    }

    /// Reads a location for install, outdated and update: a URL through the downloader, a file
    /// of a folder repository only inside it.
    static func fetch(_ location: PluginRepository.Location) throws -> [UInt8] {
        switch location {
        case .web(let url): return try Download.get(url, maxBytes: PluginArchive.maxArchiveBytes)
        case .file(let folder, let name): return try BoundedFile.readInside(folder, name, maxBytes: PluginArchive.maxArchiveBytes)
        }
    }

    /// The warning for each plain-HTTP repository of `sources`, in their order, each written to
    /// standard error now (a command's `--json` output repeats them under "warnings").
    static func plainHTTPWarnings(_ sources: [PluginRepository.Source]) -> [String] {
        let warnings = sources.filter(PluginRepository.isPlainHTTP).map(PluginRepository.plainHTTPWarning)
        warnings.forEach { warn($0) }
        return warnings
    }

    /// Prints what an install or update did: one line each, or `{"lock", "changes", "warnings"}`.
    /// `install --locked` writes no lock, and says which bundles were already in place.
    static func report(_ changes: [PluginRepository.Change], json: Bool, lockPath: String, warnings: [String], wroteLock: Bool) {
        if json {
            Swift.print(JSON.object(["lock": .string(lockPath), "changes": .array(changes.map(\.json)), "lockWritten": .bool(wroteLock),
                                     "warnings": .array(warnings.map(JSON.string))]).serialized())
            return
        }
        if wroteLock {
            for change in changes { printText(change.line) }
            printText("wrote \(lockPath)")
            return
        }
        for change in changes {
            let state = change.from == nil ? "installed" : "already in place"
            printText("\(change.entry.name) \(change.entry.version) \(state) in \(change.entry.folder), sha256 \(change.entry.archiveSHA256)")
        }
        printText("\(changes.count) bundle(s) exactly as \(lockPath) names them (the lock was not written)")
    }

    struct Outdated: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "outdated",
            abstract: "For each locked bundle, the newer versions its repository lists: inside its range (update takes them) and outside it (install NAME@RANGE to move).",
            discussion: """
                Exit status, for a CI step: 0 when every bundle looked at is current, 1 when a repository lists a newer \
                version this host's API accepts (inside the range or outside it), 2 on bad input (no lock, a bundle \
                not locked, a repository that cannot be read). A plain http:// repository is warned about (stderr, \
                and "warnings" in --json).
                """)
        @Argument(help: "Bundles to look at (default: every locked bundle).") var names: [String] = []
        @OptionGroup var options: UpdateOptions

        func run() throws {
            let source = try options.source()
            let warnings = PluginsCommand.plainHTTPWarnings(try PluginRepository.repositories(project: options.project, names: names, override: source))
            let found = try PluginRepository.outdated(project: options.project, names: names, repository: source, fetch: PluginsCommand.fetch)
            if options.format.json {
                Swift.print(JSON.object(["bundles": .array(found.map(\.json)), "warnings": .array(warnings.map(JSON.string))]).serialized())
            } else {
                for item in found {
                    let inside = item.inRange.isEmpty ? "none" : item.inRange.map(\.description).joined(separator: ", ")
                    let outside = item.outsideRange.isEmpty ? "none" : item.outsideRange.map(\.description).joined(separator: ", ")
                    var line = "\(item.entry.name) \(item.entry.version) (range \(item.entry.allowedRange)): newer inside the range \(inside); outside it \(outside)"
                    if !item.incompatible.isEmpty { line += "; not for this host's API \(hostAPIVersion): " + item.incompatible.map(\.description).joined(separator: ", ") }
                    printText(line)
                }
            }
            // The output above already names each newer version: exit 1 says only that there is one.
            if found.contains(where: \.isOutdated) { throw CommandFailure.shown(exitCode: 1) }
        }
    }

    struct Update: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "update",
            abstract: "Move locked bundles to the newest version inside their recorded range (never a new major: install NAME@^2 for that), removing the folders replaced.",
            discussion: """
                A bundle never moves below its lock: when its repository no longer lists the locked version and offers \
                only older ones, update refuses (exit 2) naming the bundle, the locked version and what the index \
                offers, and changes nothing. A locked version republished with other bytes is refused too.
                """)
        @Argument(help: "Bundles to update (default: every locked bundle).") var names: [String] = []
        @OptionGroup var options: UpdateOptions

        func run() throws {
            let source = try options.source()
            let warnings = PluginsCommand.plainHTTPWarnings(try PluginRepository.repositories(project: options.project, names: names, override: source))
            let changes = try PluginRepository.update(project: options.project, names: names, repository: source, fetch: PluginsCommand.fetch)
            PluginsCommand.report(changes, json: options.format.json, lockPath: PluginRepository.join(options.project, PluginLock.fileName),
                                  warnings: warnings, wroteLock: true)
        }
    }
}
