import ArgumentParser
import Formats
import Foundation
import LuaHost
import Plugins
import Scenario
import UpgradeEngine

/// `rehearse api generate`: the editor and lint files, from the API described in the code.
struct APICommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "api",
        abstract: "Generate the LuaLS definitions, scripts/.luarc.json and .luacheckrc from the scripting API.",
        subcommands: [Generate.self]
    )

    struct Generate: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "generate", abstract: "Write scripts/types/*.lua, scripts/.luarc.json and .luacheckrc under --root, with a definition file for every bundle in ROOT/plugins.")
        @Option(help: "The project root.") var root = "."

        func run() throws {
            let catalog = PluginCatalog(searchPath: [root + "/plugins"])
            do {
                for path in try ScriptingAPI.write(root: root, bundles: catalog.bundles.map(\.manifest)) { printText(path) }
            } catch {
                throw InputError(.command("api generate"), problem: "cannot write the generated files: \(error)")
            }
        }
    }
}
