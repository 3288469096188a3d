public import Formats
public import UpgradeEngine

/// A scale set read from a document a team already has: `az vmss show` output (or the REST
/// resource), an ARM template (or a Bicep file compiled by `az bicep build`) with its parameters,
/// or a Terraform plan (`terraform show -json`).
public struct ImportedScaleSet: Sendable {
    /// The definition the document describes.
    public var definition: ScaleSetDefinition
    /// What the document says that rehearse cannot model and that may change the answer, or
    /// values a plan does not know yet; each names its path.
    public var warnings: [Problem]
    /// Which kind of document it was.
    public var format: ScaleSetDocumentFormat
    /// The resource it came from (`name`, a template's symbolic name, a Terraform address).
    public var resource: String
    /// The whole resource as the document gives it (a template's expressions evaluated where
    /// they can be, a Terraform resource's attributes): what `diff` compares field by field.
    public var document: JSON? = nil
}

/// The documents a scale set can be imported from.
public enum ScaleSetDocumentFormat: String, Sendable {
    case azResource = "az vmss show / REST resource"
    case armTemplate = "ARM template"
    case terraformPlan = "Terraform plan"
    case restExample = "REST API example"
}

/// Reads scale set documents, every problem at once, each naming its path in the document.
public enum ScaleSetImport {
    /// What kind of document `value` is; nil when it is none of them.
    public static func format(of value: JSON) -> ScaleSetDocumentFormat? {
        if listedResources(value) != nil { return .azResource }
        guard value.object != nil else { return nil }
        if restExampleBody(value) != nil { return .restExample }
        if value.member("format_version") != nil, value.member("planned_values") != nil || value.member("resource_changes") != nil
            || value.member("values") != nil {
            return .terraformPlan
        }
        if value.member("resources") != nil, value.member("$schema") != nil || value.member("contentVersion") != nil {
            return .armTemplate
        }
        if case .string(let type)? = value.member("type"), type.lowercased() == ScaleSetResource.type.lowercased() { return .azResource }
        if value.member("virtualMachineProfile") != nil || value.field("properties")?.member("virtualMachineProfile") != nil {
            return .azResource
        }
        return nil
    }

    /// Reads the scale set `value` describes. `resource` chooses among several (a name, a
    /// template's symbolic name or a Terraform address); `parameters` is an ARM parameters file;
    /// `context` answers a template's `resourceGroup()`, `subscription()`, `deployment()`;
    /// `parametersPath` is where the parameters file is, for the problems placed in it.
    public static func read(_ value: JSON, resource: String? = nil, parameters: JSON? = nil,
                            context: ARMDeploymentContext = ARMDeploymentContext(), parametersPath: String? = nil) throws(ValidationFailure) -> ImportedScaleSet {
        let imported = try readDocument(value, resource: resource, parameters: parameters, context: context, parametersPath: parametersPath)
        // The definition is checked as a scenario's is: a rolling policy needs a health source, …
        let problems = imported.definition.validate()
        guard problems.isEmpty else { throw ValidationFailure(problems.map { Problem(field: "(\(imported.resource)) \($0.field)", $0.message) }) }
        return imported
    }

    static func readDocument(_ value: JSON, resource: String?, parameters: JSON?, context: ARMDeploymentContext,
                             parametersPath: String? = nil) throws(ValidationFailure) -> ImportedScaleSet {
        if let (items, prefix) = listedResources(value) {
            let (item, at) = try ScaleSetListing.pick(items, prefix: prefix, resource: resource)
            var reader = ScaleSetResource(prefix: at)
            let definition = reader.read(item)
            guard reader.problems.isEmpty else { throw ValidationFailure(reader.problems) }
            return ImportedScaleSet(definition: definition, warnings: reader.warnings, format: .azResource, resource: definition.name, document: item)
        }
        switch format(of: value) {
        case .azResource?:
            var reader = ScaleSetResource(prefix: "")
            let definition = reader.read(value)
            guard reader.problems.isEmpty else { throw ValidationFailure(reader.problems) }
            return ImportedScaleSet(definition: definition, warnings: reader.warnings, format: .azResource, resource: definition.name, document: value)
        case .armTemplate?:
            return try ARMTemplate.read(value, resource: resource, parameters: parameters, context: context, parametersPath: parametersPath)
        case .terraformPlan?:
            return try TerraformPlan.read(value, resource: resource)
        case .restExample?:
            let (body, prefix) = restExampleBody(value)!
            guard format(of: body) == .azResource else {
                throw ValidationFailure([Problem(field: prefix, "is a REST API example: its request is under parameters, its response under responses.200.body; neither holds a scale set (an example of another operation?)")])
            }
            var reader = ScaleSetResource(prefix: prefix)
            var definition = reader.read(body)
            guard reader.problems.isEmpty else { throw ValidationFailure(reader.problems) }
            if body.member("name") == nil, case .string(let name)? = value.member("parameters")?.member("vmScaleSetName") { definition.name = name }
            var warnings = reader.warnings
            // Examples name their resources with placeholders ("{vmss-name}").
            usableName(&definition, at: "\(prefix).name", warnings: &warnings)
            return ImportedScaleSet(definition: definition, warnings: warnings, format: .restExample, resource: definition.name, document: body)
        case nil:
            throw ValidationFailure([Problem(field: "(document)", "is not a scale set document; allowed the output of az vmss show (or the REST resource), an ARM template or a compiled Bicep file, or the output of terraform show -json")])
        }
    }

    /// The document of a REST API example (`{ "parameters": …, "responses": { "200": { "body": … } } }`,
    /// as the API specifications publish them) and its path: the response's body (200, then
    /// 201), else the request's body (`parameters.parameters`); nil when `value` is not one.
    public static func restExampleBody(_ value: JSON) -> (JSON, String)? {
        guard let responses = value.member("responses")?.object, let parameters = value.member("parameters"), parameters.object != nil else { return nil }
        for code in ["200", "201"] {
            if let body = responses[code]?.member("body"), body.object != nil { return (body, "responses.\(code).body") }
        }
        if let request = parameters.member("parameters"), request.object != nil { return (request, "parameters.parameters") }
        return (.object([:]), "responses")
    }

    /// The scale sets of a list document and the path of its list: `az vmss list` (an array of
    /// resources) or a REST list page (`{"value": [...], "nextLink": …}`); nil for any other document.
    static func listedResources(_ value: JSON) -> ([JSON], String)? {
        func scaleSets(_ items: [JSON]) -> Bool { !items.isEmpty && items.allSatisfy { format(of: $0) == .azResource } }
        if case .array(let items) = value, scaleSets(items) { return (items, "") }
        if let members = value.object, Set(members.keys).isSubset(of: ["value", "nextLink"]), case .array(let items)? = members["value"], scaleSets(items) {
            return (items, "value")
        }
        return nil
    }

    /// Replaces a name that is not a scale set name (a placeholder such as `{vmss-name}`, a
    /// template's path) by `vmss`, with a warning at `path`: a rollout does not depend on it.
    static func usableName(_ definition: inout ScaleSetDefinition, at path: String, warnings: inout [Problem]) {
        let name = definition.name
        let allowed = name.utf8.allSatisfy { b in (b >= 0x30 && b <= 0x39) || ((b | 0x20) >= 0x61 && (b | 0x20) <= 0x7A) || b == 0x2D || b == 0x5F }
        guard !allowed || name.isEmpty || name.utf8.count > 64 else { return }
        warnings.append(Problem(field: path, "\(JSON.string(name).serialized(pretty: false)) is not a scale set name (a placeholder?): the scale set is called vmss"))
        definition.name = "vmss"
    }
}
