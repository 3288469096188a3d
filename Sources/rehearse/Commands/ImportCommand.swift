import ArgumentParser
import AzureWire
import Reports

/// `rehearse import`: a starting scenario for the scale set a team already has.
struct ImportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Print a starting scenario for a scale set document: az vmss show output, an ARM template or compiled Bicep, or a Terraform plan (terraform show -json).",
        discussion: "The scenario reads the scale set from the document (scaleset { from = ... }); save it beside the document, then rehearse run it."
    )

    @Argument(help: "The document.") var file: String
    @Option(help: "With a template or plan holding several scale sets: which one (name, symbolic name or Terraform address).")
    var resource: String?
    @Option(help: "With an ARM template: its parameters file.") var parameters: String?

    func run() throws {
        let imported = try importScaleSet(file, resource: resource, parameters: parameters)
        print(StarterScenario.text(imported, path: file, resource: resource, parameters: parameters), terminator: "")
    }
}
