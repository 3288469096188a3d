import Formats
import UpgradeEngine

/// What a template holds besides the scale set it reads: nested deployments it could not read,
/// autoscale settings (which change the capacity the rehearsal keeps), and parameters a
/// parameters file gives that the template does not declare.
extension ARMTemplate {
    static let autoscaleType = "Microsoft.Insights/autoscalesettings"

    /// A nested deployment whose loop or condition could not be evaluated, with whether it
    /// holds a scale set (nil: it may; its template is linked, or a type is an expression).
    struct Unread {
        var problem: Problem
        var holdsScaleSet: Bool?

        /// The warning when another scale set was read: what it loses, said only when it is so.
        var warning: Problem {
            let loss = switch holdsScaleSet {
            case true?: "a scale set in that deployment is not read"
            case nil: "a scale set that deployment may hold (its template is linked, or a type is an expression) is not read"
            case false?: "that deployment holds no scale set"
            }
            var warning = problem
            warning.message += "; \(loss)"
            return warning
        }
    }

    /// Whether the nested deployment `item` holds a scale set, read from its types as written:
    /// true when a resource of its inline template (or of one nested in it) is one, nil when
    /// one may be (a linked template, a type that is an expression), false otherwise.
    static func holdsScaleSet(_ item: JSON, nesting: Int = 0) -> Bool? {
        guard nesting < maxNesting, let template = item.member("properties")?.member("template") else { return nil }
        // A template that is an expression (`[variables('t')]`) may hold anything.
        guard template.object != nil else { return nil }
        var items: [JSON] = []
        switch template.member("resources") {
        case .array(let list)?: items = list
        case .object?: items = Array((template.member("resources")?.object ?? [:]).values)
        case nil: return false
        default: return nil
        }
        var unknown = false
        for resource in items {
            guard case .string(let type)? = resource.member("type"), ARMEvaluator.expressionText(type) == nil else {
                unknown = true
                continue
            }
            if type.lowercased() == ScaleSetResource.type.lowercased() { return true }
            guard type.lowercased() == deploymentType.lowercased() else { continue }
            switch holdsScaleSet(resource, nesting: nesting + 1) {
            case true?: return true
            case nil: unknown = true
            case false?: break
            }
        }
        return unknown ? nil : false
    }

    /// A problem for each parameter the parameters file gives that the template does not
    /// declare (names compare ignoring case, as ARM's do), at `parameters.NAME` in that file
    /// (`parametersPath`), with the declared names allowed: ARM refuses such a deployment
    /// (InvalidTemplate), so a misspelt name never leaves its parameter at the default.
    /// A Key Vault `reference` counts as given; `$schema` and `contentVersion` are no parameters.
    /// A nested deployment's `properties` (`fieldPrefix` its path and `properties.`) is checked
    /// the same way against its inline template: ARM refuses those names too. A declared name
    /// given without `{"value": …}` or `{"reference": …}`, or given twice in two cases, is a
    /// problem as well: its value would otherwise be passed over without a word.
    static func undeclaredParameters(_ file: JSON, template: JSON, parametersPath: String?, fieldPrefix: String = "") -> [Problem] {
        let wrapped = file.member("parameters")
        guard let given = (wrapped ?? file).object else { return [] }
        let declared = (template.member("parameters")?.object ?? [:]).keys.sorted()
        let known = Set(declared.map { $0.lowercased() })
        var problems: [Problem] = []
        var seen: [String: String] = [:]
        let list = declared.isEmpty ? "none" : declared.joined(separator: ", ")
        var unreported = 0
        for name in given.keys.sorted() {
            // A document naming thousands: the first thousand, then a count, in bounded time.
            guard problems.count < maxParameterProblems else {
                unreported += 1
                continue
            }
            if wrapped == nil, ["$schema", "contentversion"].contains(name.lowercased()) { continue }
            let field = fieldPrefix + (wrapped == nil ? "" : "parameters.") + name
            let place = Location.document(path: parametersPath, field: field)
            if let other = seen[name.lowercased()] {
                problems.append(Problem(at: place, "gives the parameter \(other) again (ARM compares parameter names ignoring case); give it once"))
                continue
            }
            seen[name.lowercased()] = name
            guard !known.contains(name.lowercased()) else {
                let entry = given[name]!
                let expression = if case .string(let text) = entry { ARMEvaluator.expressionText(text) != nil } else { false }
                if entry.member("value") == nil && entry.member("reference") == nil && !expression {
                    problems.append(Problem(at: place, "is \(entry.kindName) without a value; expected {\"value\": …} or a Key Vault {\"reference\": …}"))
                }
                continue
            }
            var problem = Problem(at: .document(path: parametersPath, field: field),
                                  "is not a parameter of the template, and ARM refuses a deployment that gives one (InvalidTemplate); the template declares \(list)")
            problem.allowed = declared
            problems.append(problem)
        }
        if unreported > 0 {
            problems.append(Problem(at: .document(path: parametersPath, field: fieldPrefix + "parameters"),
                                    "gives \(unreported) more names like these (\(maxParameterProblems) are listed above)"))
        }
        return problems
    }

    /// The most parameter problems listed for one parameters object.
    static let maxParameterProblems = 1_000

    /// A warning for each autoscale setting in `template` (its resources, and those of nested
    /// deployments' inline templates): Azure changes the scale set's capacity with load between
    /// the setting's minimum and maximum, which a rehearsal does not; it keeps `capacity`.
    /// A setting whose `targetResourceUri` is written out (no expression) and names another
    /// resource, or another scale set than `scaleSet`, is not this scale set's: no warning.
    static func autoscaleWarnings(_ template: JSON, capacity: Int, scaleSet: String?, prefix: String = "", nesting: Int = 0) -> [Problem] {
        guard nesting < maxNesting else { return [] }
        var items: [(String, JSON)] = []
        switch template.member("resources") {
        case .array(let list)?: items = list.enumerated().map { ("\(prefix)resources[\($0.offset)]", $0.element) }
        case .object(let byName)?: items = byName.keys.sorted().map { ("\(prefix)resources.\($0)", byName[$0]!) }
        default: return []
        }
        var warnings: [Problem] = []
        for (path, item) in items {
            guard case .string(let type)? = item.member("type") else { continue }
            // `condition: false` deploys nothing (an expression may deploy it: warned).
            if item.member("condition") == .bool(false) { continue }
            if type.lowercased() == autoscaleType.lowercased() {
                if case .string(let target)? = item.member("properties")?.member("targetResourceUri"),
                   ARMEvaluator.expressionText(target) == nil, !targets(target, scaleSet: scaleSet) { continue }
                warnings.append(Problem(field: path, "is an autoscale setting: Azure changes the scale set's capacity with load between its profiles' minimum and maximum, which a rehearsal does not; it keeps the capacity \(capacity) (give another with capacity = N, or scale(N) at a time)"))
            } else if type.lowercased() == deploymentType.lowercased(), let inner = item.member("properties")?.member("template") {
                warnings += autoscaleWarnings(inner, capacity: capacity, scaleSet: scaleSet, prefix: "\(path).properties.template.", nesting: nesting + 1)
            }
        }
        return warnings
    }

    /// Whether the resource id `target` names a scale set, and `scaleSet` when it is known
    /// (`/subscriptions/…/providers/Microsoft.Compute/virtualMachineScaleSets/web`; case ignored).
    static func targets(_ target: String, scaleSet: String?) -> Bool {
        let parts = target.split(separator: "/").map { $0.lowercased() }
        guard let at = parts.firstIndex(of: "virtualmachinescalesets") else { return false }
        guard let scaleSet, at + 1 < parts.count else { return true }
        return parts[at + 1] == scaleSet.lowercased()
    }

    /// Records the extension resource `item` (its condition, name and properties evaluated; one
    /// whose condition is false, or whose name cannot be evaluated, is not recorded).
    static func noteChildExtension(_ item: JSON, at path: String, _ evaluator: ARMEvaluator) {
        if let condition = item.member("condition"), (try? evaluator.value(condition, at: "\(path).condition")) != .bool(true) { return }
        guard let raw = item.member("name"), case .string(let name)? = try? evaluator.value(raw, at: "\(path).name") else { return }
        let properties = item.member("properties").map { (try? evaluator.value($0, at: "\(path).properties")) ?? $0 } ?? .null
        evaluator.childExtensions.append((name, properties))
    }

    /// `resource` with the extension resources named `SCALESET/NAME` added to its
    /// `virtualMachineProfile.extensionProfile.extensions`, as Azure adds them to the model.
    static func withChildExtensions(_ resource: JSON, _ found: [(name: String, properties: JSON)], scaleSet: String?) -> JSON {
        guard let scaleSet, var top = resource.object else { return resource }
        let mine = found.filter { $0.name.lowercased().hasPrefix(scaleSet.lowercased() + "/") }
        guard !mine.isEmpty else { return resource }
        var properties = top["properties"]?.object ?? [:]
        var profile = properties["virtualMachineProfile"]?.object ?? [:]
        var extensionProfile = profile["extensionProfile"]?.object ?? [:]
        var list: [JSON] = []
        if case .array(let items)? = extensionProfile["extensions"] { list = items }
        for child in mine {
            list.append(.object(["name": .string(String(child.name.dropFirst(scaleSet.count + 1))), "properties": child.properties]))
        }
        extensionProfile["extensions"] = .array(list)
        profile["extensionProfile"] = .object(extensionProfile)
        properties["virtualMachineProfile"] = .object(profile)
        top["properties"] = .object(properties)
        return .object(top)
    }
}
