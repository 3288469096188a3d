import Formats

/// Scalars written as strings that Azure's resource provider accepts as what they stand for
/// (`"enabled": "true"` in az-generated templates, `"port": "19000"` in the official Service
/// Fabric samples): its JSON reader converts them, and the deployment succeeds. rehearse reads them
/// the same way, with a warning naming each. Only the parts whose every field is a boolean, a
/// whole number or text that is neither are converted: the upgrade policy, the repairs policy, the
/// extensions' settings, the capacity and the fault domain count.
enum LenientScalars {
    /// `resource` with those strings converted, and a warning for each, each at its path under `prefix`.
    static func normalize(_ resource: JSON, prefix: String) -> (JSON, [Problem]) {
        var warnings: [Problem] = []
        func join(_ a: String, _ b: String) -> String { a.isEmpty ? b : "\(a).\(b)" }
        func convert(_ value: JSON, _ path: String, depth: Int = 0) -> JSON {
            switch value {
            case .string(let text):
                let lower = text.lowercased()
                if lower == "true" || lower == "false" {
                    warnings.append(Problem(field: path, "\(JSON.string(text).serialized(pretty: false)) is a string; Azure reads it as the boolean \(lower), and so does rehearse"))
                    return .bool(lower == "true")
                }
                if !text.isEmpty, text.count <= 9, text.allSatisfy({ $0.isASCII && $0.isNumber }), let n = Int(text) {
                    warnings.append(Problem(field: path, "\(JSON.string(text).serialized(pretty: false)) is a string; Azure reads it as the number \(n), and so does rehearse"))
                    return .int(n)
                }
                return value
            case .object, .ordered:
                guard depth < 8 else { return value }
                var out: [String: JSON] = [:]
                let members = value.object ?? [:]
                // In key order: the warnings come out the same every run.
                for key in members.keys.sorted() { out[key] = convert(members[key]!, join(path, key), depth: depth + 1) }
                return .object(out)
            default: return value
            }
        }
        /// `object` with the member at `keys` converted (nothing when a step is missing).
        func at(_ object: JSON, _ keys: [String], _ path: String) -> JSON {
            guard let first = keys.first, var members = object.object else { return object }
            guard let key = members.keys.first(where: { $0.lowercased() == first.lowercased() }), let member = members[key] else { return object }
            members[key] = keys.count == 1 ? convert(member, join(path, key)) : at(member, Array(keys.dropFirst()), join(path, key))
            return .object(members)
        }
        var value = at(resource, ["sku", "capacity"], prefix)
        let inner = value.field("properties") == nil ? [] : ["properties"]
        let innerPath = inner.isEmpty ? prefix : join(prefix, "properties")
        for key in ["upgradePolicy", "automaticRepairsPolicy", "platformFaultDomainCount"] { value = at(value, inner + [key], prefix) }
        // Each extension's settings, in either shape (az flattens properties).
        if case .array(let items)? = value.field("properties")?.field("virtualMachineProfile")?.field("extensionProfile")?.field("extensions")
            ?? value.field("virtualMachineProfile")?.field("extensionProfile")?.field("extensions") {
            let base = join(innerPath, "virtualMachineProfile.extensionProfile.extensions")
            let converted = JSON.array(items.enumerated().map { i, item in
                item.field("properties") != nil ? at(item, ["properties", "settings"], "\(base)[\(i)]") : at(item, ["settings"], "\(base)[\(i)]")
            })
            value = replacing(value, inner + ["virtualMachineProfile", "extensionProfile", "extensions"], with: converted)
        }
        return (value, warnings)
    }

    /// `object` with the member at `keys` replaced by `new` (ARM's keys matched ignoring case).
    static func replacing(_ object: JSON, _ keys: [String], with new: JSON) -> JSON {
        guard let first = keys.first, var members = object.object,
              let key = members.keys.first(where: { $0.lowercased() == first.lowercased() }), let member = members[key] else { return object }
        members[key] = keys.count == 1 ? new : replacing(member, Array(keys.dropFirst()), with: new)
        return .object(members)
    }
}
