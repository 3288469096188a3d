import ArgumentParser
import AzureWire
import Reports
import UpgradeEngine

/// `rehearse import`: a starting scenario for the scale set a team already has.
struct ImportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Print a starting scenario for a scale set document: az vmss show output, an ARM template or compiled Bicep, or a Terraform plan (terraform show -json).",
        discussion: "The scenario reads the scale set from the document (scaleset { from = ... }); save it beside the document, then rehearse run it."
    )

    @Argument(help: "The scale set document, then optionally az vmss list-instances output (the fleet as it is).") var files: [String]
    @Option(help: "With a template or plan holding several scale sets: which one (name, symbolic name or Terraform address).")
    var resource: String?
    @Option(help: "With an ARM template: its parameters file.") var parameters: String?

    func validate() throws {
        guard (1...2).contains(files.count) else {
            throw ValidationError("give the scale set document, and optionally the instance list: rehearse import vmss.json [instances.json]")
        }
    }

    func run() throws {
        let imported = try importScaleSet(files[0], resource: resource, parameters: parameters)
        var fleet: [ExistingInstance]?
        if files.count == 2 { fleet = try importFleet(files[1]) }
        print(StarterScenario.text(imported, path: files[0], resource: resource, parameters: parameters,
                                   instances: files.count == 2 ? (files[1], fleet ?? []) : nil), terminator: "")
    }
}
