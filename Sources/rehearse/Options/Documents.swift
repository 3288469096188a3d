import ArgumentParser
import AzureWire
import Formats
import Scenario
import UpgradeEngine

/// A JSON document named on the command line, size-checked before it is read; exit 2 naming
/// the file (and, for bad JSON, the line and column) otherwise.
func readJSONDocument(_ path: String, maxBytes: Int = JSONDocument.maxBytes) throws -> JSON {
    do {
        return try JSONDocument.read(path, maxBytes: maxBytes)
    } catch {
        throw InputError(.file(path), problem: error.problem)
    }
}

/// The scale set a document describes (az vmss show, an ARM template or compiled Bicep with an
/// optional parameters file, a Terraform plan); its warnings printed; exit 2 listing every
/// problem, each with its path in the document, otherwise.
func importScaleSet(_ path: String, resource: String?, parameters: String?, context settings: [String] = []) throws -> ImportedScaleSet {
    let document = try readJSONDocument(path)
    let values = try parameters.map { try readJSONDocument($0) }
    let imported: ImportedScaleSet
    do {
        let context = try ARMDeploymentContext.parse(settings, field: "--context", option: .deploymentContext)
        imported = try ScaleSetImport.read(document, resource: resource, parameters: values, context: context, parametersPath: parameters)
    } catch {
        throw CommandFailure(error.problems.map { Diagnostic(Diagnostics.message($0), location: inDocument(path, $0)) },
                             header: error.problems.count > 1 ? "\(path): " : nil, exitCode: 2)
    }
    // One resource check for every kind of document: a template or plan refuses a name it does
    // not hold; a resource document (az vmss show, REST) holds one scale set, named once.
    if let resource, [.azResource, .restExample].contains(imported.format), resource.lowercased() != imported.resource.lowercased() {
        throw InputError(option: "--resource", ScriptText.escaped(resource), problem: "names no scale set of \(path): it is one resource, "
                             + "\(ScriptText.escaped(imported.resource)) (\(imported.format.rawValue))",
                         allowed: "its name, \(ScriptText.escaped(imported.resource)), or no --resource")
    }
    for warning in imported.warnings { warn(Diagnostics.message(warning), location: inDocument(path, warning)) }
    return imported
}

/// The fleet `az vmss list-instances` lists; exit 2 with every problem's path otherwise.
func importFleet(_ path: String) throws -> [ExistingInstance] {
    let document = try readJSONDocument(path)
    do {
        return try InstanceList.read(document)
    } catch {
        throw CommandFailure(error.problems.map { Diagnostic(Diagnostics.message($0), location: inDocument(path, $0)) }, exitCode: 2)
    }
}

/// Where `problem` is, in the document at `path`: its field, or the option (and value) that chose from it.
func inDocument(_ path: String, _ problem: Problem) -> Location {
    if case .document(nil, let field) = problem.location { return .document(path: path, field: field) }
    // A problem placed in another file (a parameter the parameters file gives) names that file.
    if case .document(let other?, let field) = problem.location { return .document(path: other, field: field) }
    // An option's value that chose nothing in the document (`--resource nosuch`) is the option's problem.
    switch problem.location {
    case .setting, .option: return problem.location
    default: return .document(path: path, field: Diagnostics.text(of: problem.location))
    }
}

/// How a scale set document is read (`import`, `validate`): which resource of a template or plan,
/// an ARM template's parameters file, and what its deployment functions answer.
struct DocumentArguments: ParsableArguments {
    @Option(help: "With a template or plan holding several scale sets: which one (name, symbolic name or Terraform address).")
    var resource: String?
    @Option(help: "With an ARM template: its parameters file.") var parameters: String?
    @Option(help: "With an ARM template: what resourceGroup(), subscription() and deployment() answer, NAME=VALUE (repeatable; subscriptionId, tenantId, resourceGroup, location, deploymentName).")
    var context: [String] = []

    /// The scale set the document at `path` describes, read with these options (`importScaleSet`).
    func read(_ path: String) throws -> ImportedScaleSet {
        try importScaleSet(path, resource: resource, parameters: parameters, context: context)
    }
}
