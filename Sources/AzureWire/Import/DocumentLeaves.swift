import Formats

/// A scale set document as comparable leaves: every value by its path, so that two versions
/// compare field by field whatever the document's shape. ARM's `properties` wrappers (at every
/// level, as the REST API nests them and `az` flattens them) are dropped, `az`'s
/// `typePropertiesType` is `type`; a list of objects with names is keyed by name
/// (`extensions[HealthExtension]`), other lists by position, and a Terraform block that is a
/// one-element list is its element; `null`, `{}` and `[]` are absent (ARM treats them alike).
enum DocumentLeaves {
    /// The deepest nesting followed; below it a value is one leaf (its JSON text).
    static let maxDepth = 32

    /// The leaves of `document`.
    static func leaves(_ document: JSON, terraform: Bool) -> [String: String] {
        var out: [String: String] = [:]
        walk(terraform ? document : flattenProperties(document, depth: 0), path: "", terraform: terraform, depth: 0, into: &out)
        return out
    }

    /// `value` with each object's `properties` merged into it, recursively.
    static func flattenProperties(_ value: JSON, depth: Int) -> JSON {
        guard depth < maxDepth else { return value }
        switch value {
        case .object, .ordered:
            var merged: [String: JSON] = [:]
            let fields = value.object ?? [:]
            for (key, member) in fields where key.lowercased() != "properties" {
                merged[key.lowercased() == "typepropertiestype" ? "type" : key] = flattenProperties(member, depth: depth + 1)
            }
            for (key, member) in fields where key.lowercased() == "properties" {
                for (inner, v) in member.object ?? [:] where merged[inner] == nil { merged[inner] = flattenProperties(v, depth: depth + 1) }
            }
            return .object(merged)
        case .array(let items): return .array(items.map { flattenProperties($0, depth: depth + 1) })
        default: return value
        }
    }

    static func walk(_ value: JSON, path: String, terraform: Bool, depth: Int, into out: inout [String: String]) {
        func join(_ key: String) -> String { path.isEmpty ? key : "\(path).\(key)" }
        guard depth < maxDepth else {
            out[path] = value.serialized(pretty: false)
            return
        }
        switch value {
        case .null: return
        case .string(let text): out[path] = text
        case .object, .ordered:
            for (key, member) in value.object ?? [:] { walk(member, path: join(key), terraform: terraform, depth: depth + 1, into: &out) }
        case .array(let items):
            if items.isEmpty { return }
            if items.allSatisfy({ $0.object == nil }) {
                out[path] = value.serialized(pretty: false)
                return
            }
            if terraform, items.count == 1, items[0].member("name") == nil {
                return walk(items[0], path: path, terraform: terraform, depth: depth + 1, into: &out)
            }
            let names = items.map { item -> String? in if case .string(let n)? = item.member("name") { return n } else { return nil } }
            let byName = names.allSatisfy { $0 != nil } && Set(names.map { $0!.lowercased() }).count == items.count
            for (i, item) in items.enumerated() {
                walk(item, path: "\(path)[\(byName ? names[i]! : String(i))]", terraform: terraform, depth: depth + 1, into: &out)
            }
        default: out[path] = value.serialized(pretty: false)
        }
    }
}
