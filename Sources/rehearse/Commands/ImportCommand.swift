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
    @OptionGroup var format: OutputOption

    @Option(name: .customLong("save-in"), help: "The folder the scenario will be saved in (default: the current folder): the document paths in it are written relative to that folder.")
    var saveIn: String?

    func validate() throws {
        try format.refuseTable("import")
        guard (1...2).contains(files.count) else {
            throw ValidationError("give the scale set document, and optionally the instance list: rehearse import vmss.json [instances.json]")
        }
    }

    func run() throws {
        // The two documents are told apart by what they hold, in either order.
        let (document, list) = try ordered(files)
        let imported = try reading.read(document)
        var fleet: [ExistingInstance]?
        if let list {
            let listed = try importFleet(list)
            if listed.count != imported.definition.capacity {
                warn("lists \(listed.count) instance(s) where \(document) says the capacity is \(imported.definition.capacity): the scenario takes the list", location: .file(list))
            }
            fleet = listed
        }
        // The definition an import makes; the Lua starter is its rendering.
        let path = relative(document), parametersPath = reading.parameters.map(relative)
        let definition = ScenarioDefinition(imported: imported, path: path, parameters: parametersPath, fleet: fleet)
        let instances = list.map { (path: relative($0), fleet: fleet ?? []) }
        let text = StarterScenario.text(definition, imported: imported, path: path, resource: reading.resource, parameters: parametersPath,
                                        instances: instances, context: reading.context)
        guard format.output == .json else { return print(text, terminator: "") }
        // For a program: what the document says, its warnings (also on standard error) and the scenario.
        let warnings = imported.warnings.map { JSON.object(["field": .string($0.field), "message": .string($0.message)]) }
        print(JSON.ordered([JSONField("document", StarterScenario.summary(imported, path: path, instances: instances)),
                            JSONField("warnings", .array(warnings)), JSONField("scenario", .string(text))]).serialized(pretty: true))
    }

    /// The scale set document and the instance list among `files`, by content: a second file is
    /// the list when it reads as one and the first does not, else the first is.
    func ordered(_ files: [String]) throws -> (document: String, list: String?) {
        guard files.count == 2 else {
            if InstanceList.matches(try readJSONDocument(files[0])) {
                throw CommandFailure([Diagnostic("is an instance list (az vmss list-instances), which describes the fleet, not the scale set; give the scale set document first: rehearse import vmss.json \(files[0])", location: .file(files[0]))], exitCode: 2)
            }
            return (files[0], nil)
        }
        let first = try readJSONDocument(files[0]), second = try readJSONDocument(files[1])
        switch (InstanceList.matches(first), InstanceList.matches(second)) {
        case (true, false): return (files[1], files[0])
        case (false, true): return (files[0], files[1])
        case (true, true):
            throw CommandFailure([Diagnostic("both files are instance lists (az vmss list-instances); give the scale set document too (az vmss show, a template or a plan)", location: .file(files[1]))], exitCode: 2)
        case (false, false):
            throw CommandFailure([Diagnostic("neither file is an instance list; allowed a scale set document and the output of az vmss list-instances, in either order", location: .file(files[1]))], exitCode: 2)
        }
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
