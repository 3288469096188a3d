import ArgumentParser
import Formats
import Foundation
import AzureWire
import Reports
import Scenario
import UpgradeEngine

/// `rehearse import`: a starting scenario for the scale set a team already has.
struct ImportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Print a starting scenario for a scale set document: az vmss show output, an ARM template or compiled Bicep, or a Terraform plan (terraform show -json).",
        discussion: "The scenario reads the scale set from the document (scaleset { from = ... }); a path relative to the script's folder: save it in the current folder, or name the folder with --save-in, then rehearse run it."
    )

    @Argument(help: "The scale set document, then optionally az vmss list-instances output (the fleet as it is).") var files: [String]
    @OptionGroup var reading: DocumentArguments

    @Option(name: .customLong("save-in"), help: "The folder the scenario will be saved in (default: the current folder): the document paths in it are written relative to that folder.")
    var saveIn: String?

    func validate() throws {
        guard (1...2).contains(files.count) else {
            throw ValidationError("give the scale set document, and optionally the instance list: rehearse import vmss.json [instances.json]")
        }
    }

    func run() throws {
        let imported = try reading.read(files[0])
        var fleet: [ExistingInstance]?
        if files.count == 2 {
            let listed = try importFleet(files[1])
            if listed.count != imported.definition.capacity {
                warn("lists \(listed.count) instance(s) where \(files[0]) says the capacity is \(imported.definition.capacity): the scenario takes the list", location: .file(files[1]))
            }
            fleet = listed
        }
        // The definition an import makes; the Lua starter is its rendering.
        let path = relative(files[0]), parametersPath = reading.parameters.map(relative)
        let definition = ScenarioDefinition(imported: imported, path: path, parameters: parametersPath, fleet: fleet)
        print(StarterScenario.text(definition, imported: imported, path: path, resource: reading.resource, parameters: parametersPath,
                                   instances: files.count == 2 ? (relative(files[1]), fleet ?? []) : nil, context: reading.context), terminator: "")
    }

    /// `file` (as given, from the current folder) as a path from the `--save-in` folder; an
    /// absolute path, or any path without --save-in, as given.
    func relative(_ file: String) -> String {
        guard let saveIn, !file.hasPrefix("/") else { return file }
        let current = URL(fileURLWithPath: FileManager.default.currentDirectoryPath, isDirectory: true)
        let target = URL(fileURLWithPath: file, relativeTo: current).standardizedFileURL.pathComponents
        let folder = URL(fileURLWithPath: saveIn, isDirectory: true, relativeTo: current).standardizedFileURL.pathComponents
        var common = 0
        while common < min(target.count - 1, folder.count), target[common] == folder[common] { common += 1 }
        return (Array(repeating: "..", count: folder.count - common) + target[common...]).joined(separator: "/")
    }
}
