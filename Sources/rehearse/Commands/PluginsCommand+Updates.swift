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

    /// Prints what an install or update did: one line each, or `{"changes": [...]}`.
    static func report(_ changes: [PluginRepository.Change], json: Bool, lockPath: String) {
        if json {
            Swift.print(JSON.object(["lock": .string(lockPath), "changes": .array(changes.map(\.json))]).serialized())
            return
        }
        for change in changes { printText(change.line) }
        printText("wrote \(lockPath)")
    }

    struct Outdated: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "outdated",
            abstract: "For each locked bundle, the newer versions its repository lists: inside its range (update takes them) and outside it (install NAME@RANGE to move).")
        @Argument(help: "Bundles to look at (default: every locked bundle).") var names: [String] = []
        @OptionGroup var options: UpdateOptions

        func run() throws {
            let found = try PluginRepository.outdated(project: options.project, names: names, repository: try options.source(), fetch: PluginsCommand.fetch)
            if options.format.json {
                Swift.print(JSON.object(["bundles": .array(found.map(\.json))]).serialized())
                return
            }
            for item in found {
                let inside = item.inRange.isEmpty ? "none" : item.inRange.map(\.description).joined(separator: ", ")
                let outside = item.outsideRange.isEmpty ? "none" : item.outsideRange.map(\.description).joined(separator: ", ")
                var line = "\(item.entry.name) \(item.entry.version) (range \(item.entry.allowedRange)): newer inside the range \(inside); outside it \(outside)"
                if !item.incompatible.isEmpty { line += "; not for this host's API \(hostAPIVersion): " + item.incompatible.map(\.description).joined(separator: ", ") }
                printText(line)
            }
        }
    }

    struct Update: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "update",
            abstract: "Move locked bundles to the newest version inside their recorded range (never a new major: install NAME@^2 for that), removing the folders replaced.")
        @Argument(help: "Bundles to update (default: every locked bundle).") var names: [String] = []
        @OptionGroup var options: UpdateOptions

        func run() throws {
            let changes = try PluginRepository.update(project: options.project, names: names, repository: try options.source(), fetch: PluginsCommand.fetch)
            PluginsCommand.report(changes, json: options.format.json, lockPath: PluginRepository.join(options.project, PluginLock.fileName))
        }
    }
}
