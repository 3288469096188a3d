import Formats
import UpgradeEngine

/// An ARM template (or a Bicep file compiled by `az bicep build`): `resources` as a list, or as
/// an object keyed by symbolic name (`"languageVersion": "2.0"`). The scale set resource's
/// `[parameters('…')]` and `[variables('…')]` are resolved from a parameters file and the
/// template's defaults and variables; any other expression is a problem naming its path.
enum ARMTemplate {
    static func read(_ template: JSON, resource chosen: String?, parameters file: JSON?) throws(ValidationFailure) -> ImportedScaleSet {
        var candidates: [(path: String, label: String, value: JSON)] = []
        switch template.member("resources") {
        case .array(let items)?:
            for (i, item) in items.enumerated() where isScaleSet(item) {
                candidates.append(("resources[\(i)]", nameText(item) ?? "resources[\(i)]", item))
            }
        case .object(let byName)?:
            for key in byName.keys.sorted() where isScaleSet(byName[key]!) {
                candidates.append(("resources.\(key)", key, byName[key]!))
            }
        default:
            throw ValidationFailure([Problem(field: "resources", "is not a list or an object of resources")])
        }
        guard !candidates.isEmpty else {
            throw ValidationFailure([Problem(field: "resources", "holds no \(ScaleSetResource.type) resource")])
        }
        let picked: (path: String, label: String, value: JSON)
        if let chosen {
            guard let match = candidates.first(where: { $0.label == chosen || nameText($0.value) == chosen }) else {
                throw ValidationFailure([Problem(field: "--resource \(chosen)", "no scale set of that name; the template has \(candidates.map(\.label).joined(separator: ", "))")])
            }
            picked = match
        } else {
            guard candidates.count == 1 else {
                throw ValidationFailure([Problem(field: "resources", "holds \(candidates.count) scale sets (\(candidates.map(\.label).joined(separator: ", "))); choose one with --resource NAME (or resource = \"NAME\")")])
            }
            picked = candidates[0]
        }
        // Only what the reader uses is resolved: an expression elsewhere in the resource (a key
        // vault reference, a resourceId) does not stop the import.
        var resolver = Resolver(template: template, parameterFile: file)
        let resolved = resolver.resolve(relevant(picked.value), at: picked.path)
        guard resolver.problems.isEmpty else { throw ValidationFailure(resolver.problems) }
        var reader = ScaleSetResource(prefix: picked.path)
        let definition = reader.read(resolved)
        guard reader.problems.isEmpty else { throw ValidationFailure(reader.problems) }
        // A name that is an expression is shown as what it resolved to.
        let label = picked.label.hasPrefix("[") ? definition.name : picked.label
        return ImportedScaleSet(definition: definition, warnings: reader.warnings, format: .armTemplate, resource: label)
    }

    /// The parts of a scale set resource the reader uses; the load balancer's probe only as
    /// present or not.
    static func relevant(_ resource: JSON) -> JSON {
        func pick(_ value: JSON?, _ keys: [String]) -> JSON? {
            guard let members = value?.object else { return value }
            var out: [String: JSON] = [:]
            for key in keys { if let v = members[key] { out[key] = v } }
            return .object(out)
        }
        var top = pick(resource, ["name", "location", "sku", "zones", "type"])?.object ?? [:]
        guard let properties = resource.member("properties") else { return .object(top) }
        var inner = pick(properties, ["orchestrationMode", "platformFaultDomainCount", "upgradePolicy", "automaticRepairsPolicy", "scaleInPolicy"])?.object ?? [:]
        if let profile = properties.member("virtualMachineProfile") {
            var kept: [String: JSON] = [:]
            if let image = profile.member("storageProfile")?.member("imageReference") { kept["storageProfile"] = .object(["imageReference": image]) }
            if let probe = profile.member("networkProfile")?.member("healthProbe"), probe != .null {
                kept["networkProfile"] = .object(["healthProbe": .object([:])])
            }
            if case .array(let extensions)? = profile.member("extensionProfile")?.member("extensions") {
                let keys = ["publisher", "type", "typeHandlerVersion", "autoUpgradeMinorVersion", "enableAutomaticUpgrade", "settings"]
                let items = extensions.map { item -> JSON in
                    var entry = pick(item, ["name"])?.object ?? [:]
                    if let props = pick(item.member("properties"), keys) { entry["properties"] = props }
                    return .object(entry)
                }
                kept["extensionProfile"] = .object(["extensions": .array(items)])
            }
            inner["virtualMachineProfile"] = .object(kept)
        }
        top["properties"] = .object(inner)
        return .object(top)
    }

    static func isScaleSet(_ item: JSON) -> Bool {
        if case .string(let type)? = item.member("type") { return type.lowercased() == ScaleSetResource.type.lowercased() }
        return false
    }

    static func nameText(_ item: JSON) -> String? {
        if case .string(let name)? = item.member("name") { return name }
        return nil
    }

    /// Resolves template expressions in a value: `[parameters('x')]`, `[variables('x')]`. A string
    /// starting `[[` is a literal `[`. Anything else in brackets is a problem at its path.
    struct Resolver {
        let template: JSON
        let parameterFile: JSON?
        var problems: [Problem] = []
        /// Variables being resolved, to refuse a variable that refers to itself.
        var resolving: Set<String> = []

        init(template: JSON, parameterFile: JSON?) {
            self.template = template
            self.parameterFile = parameterFile
        }

        mutating func resolve(_ value: JSON, at path: String) -> JSON {
            switch value {
            case .string(let text):
                guard text.hasPrefix("["), text.hasSuffix("]") else { return value }
                if text.hasPrefix("[[") { return .string(String(text.dropFirst())) }
                return expression(String(text.dropFirst().dropLast()), at: path)
            case .array(let items):
                return .array(items.enumerated().map { resolve($0.element, at: "\(path)[\($0.offset)]") })
            case .object(let members):
                var out: [String: JSON] = [:]
                for key in members.keys.sorted() { out[key] = resolve(members[key]!, at: "\(path).\(key)") }
                return .object(out)
            case .ordered(let fields):
                return .ordered(fields.map { JSONField($0.key, resolve($0.value, at: "\(path).\($0.key)")) })
            default:
                return value
            }
        }

        /// `parameters('name')` or `variables('name')`, nothing else.
        mutating func expression(_ text: String, at path: String) -> JSON {
            let trimmed = text.trimmingSpaces
            for function in ["parameters", "variables"] {
                let opening = "\(function)('"
                guard trimmed.hasPrefix(opening), trimmed.hasSuffix("')") else { continue }
                let name = String(trimmed.dropFirst(opening.count).dropLast(2))
                guard !name.isEmpty, !name.contains("'") else { break }
                return function == "parameters" ? parameter(name, at: path) : variable(name, at: path)
            }
            problems.append(Problem(field: path, "the template expression [\(text)] is not supported; rehearse resolves [parameters('name')] and [variables('name')] only: give the value itself, or a parameter"))
            return .null
        }

        mutating func parameter(_ name: String, at path: String) -> JSON {
            if let given = parameterFile.flatMap(Self.parameterValues)?.member(name) {
                if let value = given.member("value") { return value }
                if given.member("reference") != nil {
                    problems.append(Problem(field: path, "parameter \(name) is a Key Vault reference in the parameters file; give its value"))
                    return .null
                }
            }
            guard let declared = template.member("parameters")?.member(name) else {
                problems.append(Problem(field: path, "refers to parameters('\(name)'), which the template does not declare"))
                return .null
            }
            guard let fallback = declared.member("defaultValue") else {
                problems.append(Problem(field: path, "parameter \(name) has no defaultValue and the parameters file gives none; pass one with --parameters FILE"))
                return .null
            }
            return resolve(fallback, at: "parameters.\(name).defaultValue")
        }

        mutating func variable(_ name: String, at path: String) -> JSON {
            guard let value = template.member("variables")?.member(name) else {
                problems.append(Problem(field: path, "refers to variables('\(name)'), which the template does not declare"))
                return .null
            }
            guard resolving.insert(name).inserted else {
                problems.append(Problem(field: "variables.\(name)", "refers to itself"))
                return .null
            }
            defer { resolving.remove(name) }
            return resolve(value, at: "variables.\(name)")
        }

        /// A parameters file's `parameters` object (the deployment parameters schema), or the
        /// object itself when it is a bare map of names.
        static func parameterValues(_ file: JSON) -> JSON? { file.member("parameters") ?? file }
    }
}

extension String {
    /// Without leading and trailing spaces.
    var trimmingSpaces: String {
        var s = Substring(self)
        while s.first == " " { s.removeFirst() }
        while s.last == " " { s.removeLast() }
        return String(s)
    }
}
