import LuaHost

/// Reads model attributes from a script's table, the way Azure's documents spell them: the image
/// as `imageReference = { publisher, offer, sku, version }` and the VM size as
/// `sku = { name = "Standard_D2s_v3" }`, kept as the attributes `imageReference.sku`,
/// `sku.name` and so on; any other attribute is a string, number or boolean. A bare `sku`,
/// `publisher`, `offer` or `imageVersion` is refused: each could mean the image or the VM.
enum ModelAttributes {
    /// The nested objects and the fields each may hold.
    static let nested: [String: [String]] = [
        "imageReference": ["publisher", "offer", "sku", "version"],
        "sku": ["name", "tier"],
    ]

    /// Bare attributes refused, with the spelling to use instead.
    static let ambiguous: [String: String] = [
        "sku": "sku is the VM size as sku = { name = \"Standard_D2s_v3\" } (az vmss show's sku.name); the image's SKU is imageReference = { sku = \"...\" }",
        "publisher": "the image publisher is imageReference = { publisher = \"...\" }",
        "offer": "the image offer is imageReference = { offer = \"...\" }",
        "imageVersion": "the image version is imageReference = { version = \"...\" } (\"latest\", or a version that pins it)",
    ]

    /// The attributes of `fields`, with every problem as (field path below the table, message).
    static func read(_ fields: [String: LuaValue]) -> (attributes: [String: String], problems: [(String, String)]) {
        var attributes: [String: String] = [:]
        var problems: [(String, String)] = []
        for key in fields.keys.sorted() {
            let value = fields[key]!
            if let allowed = nested[key], let inner = value.fields {
                for innerKey in inner.keys.sorted() {
                    guard allowed.contains(innerKey) else {
                        problems.append(("\(key).\(innerKey)", "unknown field; allowed \(allowed.joined(separator: ", "))"))
                        continue
                    }
                    switch scalar(inner[innerKey]!) {
                    case .success(let text): attributes["\(key).\(innerKey)"] = text
                    case .failure(let why): problems.append(("\(key).\(innerKey)", why.text))
                    }
                }
                continue
            }
            if let why = ambiguous[key] {
                problems.append((key, "is ambiguous: \(why)"))
                continue
            }
            if nested[key] != nil {
                problems.append((key, "expected a table (\(nested[key]!.joined(separator: ", "))), got \(value.typeName)"))
                continue
            }
            switch scalar(value) {
            case .success(let text): attributes[key] = text
            case .failure(let why): problems.append((key, why.text))
            }
        }
        return (attributes, problems)
    }

    private static func scalar(_ value: LuaValue) -> Result<String, DurationMessage> {
        switch value {
        case .string(let s): return .success(s)
        case .integer(let i): return .success(String(i))
        case .double(let d): return .success(String(d))
        case .bool(let b): return .success(String(b))
        default: return .failure(DurationMessage("a \(value.typeName) is not an attribute value; allowed a string, number or boolean"))
        }
    }

    /// The attributes as scripts see them in `vm.model`: dotted names nested again
    /// (`imageReference.sku` is `vm.model.imageReference.sku`), with `version` and
    /// `healthExtension` (whether the model has the Application Health extension).
    static func luaValue(_ attributes: [String: String], version: Int, healthExtension: Bool) -> LuaValue {
        var model: [String: LuaValue] = ["version": .integer(version), "healthExtension": .bool(healthExtension)]
        var groups: [String: [String: LuaValue]] = [:]
        for (key, value) in attributes {
            if let dot = key.firstIndex(of: "."), nested[String(key[..<dot])] != nil {
                groups[String(key[..<dot]), default: [:]][String(key[key.index(after: dot)...])] = .string(value)
            } else {
                model[key] = .string(value)
            }
        }
        for (group, fields) in groups { model[group] = .table(fields) }
        return .table(model)
    }
}
