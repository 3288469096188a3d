import AzureWire
import Formats
import LuaHost
import UpgradeEngine

/// Turns the table given to `scaleset { ... }` into a `ScaleSetDefinition`, collecting every
/// problem (with its field path) instead of stopping at the first.
struct DefinitionReader {
    var problems: [Problem] = []
    var warnings: [Problem] = []
    /// The folder a `from` document's relative path starts from (the script's).
    var folder = "."
    /// The documents read (`from`, `parameters`), by path, for the definition's record.
    var documents: [String] = []

    static let knownKeys = ["name", "capacity", "zones", "orchestration", "model", "upgradePolicy", "healthExtension",
                            "loadBalancerProbe", "protected", "protectedFromScaleIn", "quota", "faultDomains",
                            "updateDomains", "timings", "location", "from", "resource", "parameters", "instances", "context",
                            "lifecycleHooksProfile", "automaticRepairsPolicy"]

    /// The largest document `from`, `parameters` or `instances` reads, in bytes.
    static let maxDocumentBytes = JSONDocument.maxBytes

    mutating func problem(_ field: String, _ message: String) {
        problems.append(Problem(field: "scaleset.\(field)", message))
    }

    mutating func read(_ value: LuaValue) -> ScaleSetDefinition {
        guard let fields = value.fields else {
            problem("", "expected a table, got \(value.typeName)")
            return ScaleSetDefinition(name: "vmss", capacity: 0)
        }
        for key in fields.keys.sorted() where !Self.knownKeys.contains(key) {
            problem(key, "unknown field; allowed \(Self.knownKeys.joined(separator: ", "))")
        }
        let imported = importDocument(fields)
        let name = string(fields, "name") ?? imported?.name ?? "vmss"
        var capacity = imported?.capacity ?? 0
        if let c = fields["capacity"] {
            if let i = c.intValue { capacity = i } else { problem("capacity", "\(describe(c)) is not a whole number of instances") }
        } else if imported == nil && fields["from"] == nil {
            problem("capacity", "is required: how many instances the scale set starts with")
        }
        var d = imported ?? ScaleSetDefinition(name: name, capacity: capacity)
        d.name = name
        d.capacity = capacity
        if let fleet = importFleet(fields) {
            d.fleet = fleet
            if fields["capacity"] == nil {
                // The list is the fleet as it is; a document that says otherwise is stale.
                if let imported, imported.capacity != fleet.count {
                    warnings.append(Problem(field: "scaleset.instances", "lists \(fleet.count) instance(s) where the document's capacity is \(imported.capacity): the list is taken"))
                }
                d.capacity = fleet.count
            }
        }
        if let zones = fields["zones"] {
            if case .array(let items) = zones {
                d.zones = items.enumerated().compactMap { i, item in
                    if let s = item.stringValue { return s }
                    if let n = item.intValue { return String(n) }
                    problem("zones[\(i + 1)]", "\(describe(item)) is not a zone name such as \"1\"")
                    return nil
                }
            } else {
                problem("zones", "expected a list such as { \"1\", \"2\", \"3\" }, got \(zones.typeName)")
            }
        }
        if let o = string(fields, "orchestration") {
            if let parsed = Orchestration(parsing: o) { d.orchestration = parsed } else {
                problem("orchestration", "\"\(o)\" is not an orchestration mode; allowed Uniform, Flexible")
            }
        }
        if let model = fields["model"] {
            if let attributes = model.fields {
                let (read, problems) = ModelAttributes.read(attributes)
                d.model.merge(read) { _, given in given }
                for (field, message) in problems { problem("model.\(field)", message) }
            } else {
                problem("model", "expected a table of attributes such as { image = \"v1\" }, got \(model.typeName)")
            }
        }
        if let given = fields["upgradePolicy"] {
            let (policy, legacy) = UpgradePolicy.movingLegacyFields(json(given), prefix: "scaleset.upgradePolicy")
            warnings += legacy
            do {
                d.policy = try UpgradePolicy.parse(policy)
            } catch {
                problems += error.problems.map { Problem(field: "scaleset.\($0.field)", $0.message) }
            }
        }
        var extensionRefused = false
        if let health = fields["healthExtension"] {
            do {
                let (settings, warnings) = try HealthExtensionSettings.parse(json(health))
                d.healthExtension = settings
                self.warnings += warnings.map { Problem(field: "scaleset.\($0.field)", $0.message) }
            } catch {
                problems += error.problems.map { Problem(field: "scaleset.\($0.field)", $0.message) }
                extensionRefused = true
            }
        }
        if let lb = fields["loadBalancerProbe"] {
            if let b = lb.boolValue { d.loadBalancerProbe = b } else { problem("loadBalancerProbe", "\(describe(lb)) is not true or false") }
        }
        if fields["protected"] != nil { d.protected = Set(ids(fields, "protected")) }
        if fields["protectedFromScaleIn"] != nil { d.protectedFromScaleIn = Set(ids(fields, "protectedFromScaleIn")) }
        if let quota = integer(fields, "quota") { d.quota = quota }
        if let count = integer(fields, "faultDomains") { d.faultDomainCount = count }
        if let uds = integer(fields, "updateDomains") { d.updateDomainCount = uds }
        if let location = string(fields, "location") { d.location = location }
        if let timings = fields["timings"] { d.timings = readTimings(timings) }
        if let repairs = fields["automaticRepairsPolicy"] {
            let (policy, found) = AutomaticRepairsPolicy.read(json(repairs), prefix: "scaleset.automaticRepairsPolicy")
            d.automaticRepairs = policy
            problems += found
        }
        if let hooks = fields["lifecycleHooksProfile"] {
            let (read, found) = LifecycleHooksWire.profile(json(hooks), prefix: "scaleset.lifecycleHooksProfile")
            d.lifecycleHooks = read
            problems += found
        }
        problems += d.validate(healthSourceDeclared: extensionRefused).map { Problem(field: "scaleset.\($0.field)", $0.message) }
        return d
    }

    /// `from = "vmss.json"` (with `resource` and `parameters` for a template or plan): the scale
    /// set of a document a team already has, read before the table's own fields override it.
    private mutating func importDocument(_ fields: [String: LuaValue]) -> ScaleSetDefinition? {
        for key in ["resource", "parameters", "context"] where fields[key] != nil && fields["from"] == nil {
            problem(key, "goes with from = \"FILE\": it chooses in, or completes, the document the scale set is read from")
        }
        guard let from = string(fields, "from") else { return nil }
        guard let document = readDocument(from, field: "from") else { return nil }
        var parameters: JSON?
        if let file = string(fields, "parameters") {
            guard let read = readDocument(file, field: "parameters") else { return nil }
            parameters = read
        }
        // `context = { location = "westeurope" }`: what a template's resourceGroup(),
        // subscription() and deployment() answer, as import's --context NAME=VALUE.
        var settings: [String] = []
        if let context = fields["context"] {
            guard let entries = context.fields else {
                problem("context", "\(describe(context)) is not a table such as { location = \"westeurope\" }")
                return nil
            }
            for key in entries.keys.sorted() {
                guard let value = entries[key]?.stringValue else {
                    problem("context.\(key)", "is not a string")
                    return nil
                }
                settings.append("\(key)=\(value)")
            }
        }
        do {
            let context = try ARMDeploymentContext.parse(settings, field: "scaleset.context")
            let imported = try ScaleSetImport.read(document, resource: string(fields, "resource"), parameters: parameters, context: context,
                                                   parametersPath: string(fields, "parameters"))
            warnings += imported.warnings.map { $0.at(field: "\(from): \($0.field)") }
            return imported.definition
        } catch {
            problems += error.problems.map { problem in
                // A problem placed in the parameters file (a parameter it gives) names that file.
                if case .document(let file?, let field)? = problem.place { return problem.at(field: "scaleset.parameters \(file): \(field)") }
                return problem.at(field: "scaleset.from \(from): \(problem.field)")
            }
            return nil
        }
    }

    /// `instances = "instances.json"`: the fleet as `az vmss list-instances` lists it.
    private mutating func importFleet(_ fields: [String: LuaValue]) -> [ExistingInstance]? {
        guard let file = string(fields, "instances"), let document = readDocument(file, field: "instances") else { return nil }
        do {
            return try InstanceList.read(document)
        } catch {
            problems += error.problems.map { Problem(field: "scaleset.instances \(file): \($0.field)", $0.message) }
            return nil
        }
    }

    /// A JSON document at `path` (relative to the script's folder), size-checked before it is read.
    private mutating func readDocument(_ path: String, field: String) -> JSON? {
        let full = path.hasPrefix("/") ? path : folder + "/" + path
        documents.append(full)
        do {
            return try JSONDocument.read(full, maxBytes: Self.maxDocumentBytes)
        } catch {
            problem(field, "\(path): \(error.problem)")
            return nil
        }
    }

    private mutating func readTimings(_ value: LuaValue) -> Timings {
        var t = Timings()
        guard let fields = value.fields else {
            problem("timings", "expected a table such as { upgrade = \"PT2M\" }, got \(value.typeName)")
            return t
        }
        let keys: [(String, WritableKeyPath<Timings, Millis>)] = [("upgrade", \.disruptiveUpgrade), ("inPlace", \.inPlaceUpgrade),
                                                                   ("create", \.create), ("delete", \.delete), ("rollback", \.rollback)]
        for key in fields.keys.sorted() where !keys.contains(where: { $0.0 == key }) {
            problem("timings.\(key)", "unknown field; allowed \(keys.map(\.0).joined(separator: ", "))")
        }
        for (key, path) in keys {
            guard let v = fields[key] else { continue }
            switch Self.duration(v) {
            case .success(let ms): t[keyPath: path] = ms
            case .failure(let message): problem("timings.\(key)", message)
            }
        }
        return t
    }

    /// A duration given as an ISO 8601 string or a number of seconds.
    static func duration(_ value: LuaValue) -> Result<Millis, DurationMessage> {
        switch value {
        case .string(let s):
            switch ISODuration.parse(s) {
            case .success(let ms): return .success(ms)
            case .failure(let e): return .failure(DurationMessage("\(e); allowed an ISO 8601 duration such as \"PT2M\" or a number of seconds"))
            }
        case .integer, .double:
            let seconds = value.doubleValue!
            guard seconds >= 0, seconds < 1e9 else { return .failure(DurationMessage("\(seconds) seconds is out of range; allowed 0 to 1e9")) }
            return .success(Millis((seconds * 1000).rounded()))
        default:
            return .failure(DurationMessage("\(value.typeName) is not a duration; allowed a string such as \"PT2M\" or a number of seconds"))
        }
    }

    private mutating func string(_ fields: [String: LuaValue], _ key: String) -> String? {
        guard let v = fields[key] else { return nil }
        if let s = v.stringValue { return s }
        problem(key, "\(describe(v)) is not a string")
        return nil
    }

    private mutating func integer(_ fields: [String: LuaValue], _ key: String) -> Int? {
        guard let v = fields[key] else { return nil }
        if let i = v.intValue { return i }
        problem(key, "\(describe(v)) is not a whole number")
        return nil
    }

    private mutating func ids(_ fields: [String: LuaValue], _ key: String) -> [Int] {
        guard let v = fields[key] else { return [] }
        guard case .array(let items) = v else {
            problem(key, "expected a list of instance ids such as { 7 }, got \(v.typeName)")
            return []
        }
        return items.enumerated().compactMap { i, item in
            if let id = item.intValue, id >= 0 { return id }
            problem("\(key)[\(i + 1)]", "\(describe(item)) is not an instance id")
            return nil
        }
    }

    private func describe(_ v: LuaValue) -> String {
        switch v {
        case .string(let s): return "\"\(s)\""
        case .integer(let i): return String(i)
        case .double(let d): return String(d)
        case .bool(let b): return String(b)
        default: return "a \(v.typeName)"
        }
    }
}

/// A duration that could not be read, said as a sentence.
struct DurationMessage: Error {
    let text: String
    init(_ text: String) { self.text = text }
}

extension DurationMessage: CustomStringConvertible {
    var description: String { text }
}

/// A Lua value as JSON, for the parsers that read ARM-shaped objects.
func json(_ value: LuaValue) -> JSON {
    switch value {
    case .nil: return .null
    case .bool(let b): return .bool(b)
    case .integer(let i): return .int(i)
    case .double(let d): return .double(d)
    case .string(let s): return .string(s)
    case .array(let items): return items.isEmpty ? .object([:]) : .array(items.map(json))
    case .table(let fields): return .object(fields.mapValues(json))
    }
}

extension DefinitionReader {
    mutating func problem(_ field: String, _ message: DurationMessage) { problem(field, message.text) }
}
