import Formats
import UpgradeEngine

/// An ARM template (or a Bicep file compiled by `az bicep build`): `resources` as a list, or as
/// an object keyed by symbolic name (`"languageVersion": "2.0"`); resource `copy` loops and
/// `condition`s; nested deployments (`Microsoft.Resources/deployments`, as Bicep modules
/// compile) with inline templates in either expression scope. The template's expressions are
/// evaluated by `ARMEvaluator`, lazily: only the fields the scale set reader uses, so an
/// expression elsewhere (a key vault reference, a script's URI, a location built from a
/// parameter nobody gave) never stops an import. A field the rollout depends on that cannot be
/// evaluated is a problem naming its path; one it does not (name, location, image) is left out.
enum ARMTemplate {
    static let deploymentType = "Microsoft.Resources/deployments"
    /// An extension of a scale set deployed as a resource of its own.
    static let childExtensionType = "Microsoft.Compute/virtualMachineScaleSets/extensions"
    /// The deepest nesting of inline deployments followed.
    static let maxNesting = 10

    /// A scale set resource found in the template, with what evaluates it.
    struct Candidate {
        var path: String
        var label: String
        var name: String?
        var resource: JSON
        var scope: ARMScope
        var copy: [String: Int]
        /// Why its `condition` could not be evaluated, if it could not.
        var condition: ARMFailure?
        /// Why its `name` could not be evaluated, if it could not.
        var nameFailure: ARMFailure?
        /// The nested deployments around it, outermost first, each `NAME/` (its path with the
        /// copy when its name does not evaluate): what tells copies of one scale set apart.
        var owners = ""
    }

    static func read(_ template: JSON, resource chosen: String?, parameters file: JSON?,
                     context: ARMDeploymentContext, parametersPath: String? = nil) throws(ValidationFailure) -> ImportedScaleSet {
        // Names given that the template (or a nested one) does not declare: reported with every
        // problem of the scale set the template holds, not instead of them.
        var undeclared = file.map { undeclaredParameters($0, template: template, parametersPath: parametersPath) } ?? []
        let top = ARMScope(template: template, path: "", given: ARMScope.given(byFile: file))
        let evaluator = ARMEvaluator(scope: top, context: context)
        var candidates: [Candidate] = []
        var problems: [Problem] = []
        var unread: [Unread] = []
        collect(template, scope: top, copy: [:], prefix: "", evaluator, nesting: 0, into: &candidates, problems: &problems, undeclared: &undeclared,
                unread: &unread)
        // Azure's limits and nesting stop the walk: what it found then is no answer.
        guard problems.isEmpty else { throw ValidationFailure(problems) }
        guard !candidates.isEmpty || undeclared.isEmpty else { throw ValidationFailure(undeclared) }
        // A nested deployment whose loop or condition cannot be evaluated may hold the scale
        // set: a problem when no other one is found, a warning otherwise.
        guard !candidates.isEmpty || unread.isEmpty else { throw ValidationFailure(unread.map(\.problem)) }
        guard !candidates.isEmpty else {
            throw ValidationFailure([Problem(field: "resources", "holds no \(ScaleSetResource.type) resource (nested deployments with inline templates included); a template that only links to others (templateLink) cannot be read")])
        }
        // Copies of one scale set in copies of a nested deployment share a label: each is told
        // apart by the deployments around it (`d-1/web`).
        let labels = Dictionary(candidates.map { ($0.label, 1) }, uniquingKeysWith: +)
        for index in candidates.indices where labels[candidates[index].label, default: 0] > 1 && !candidates[index].owners.isEmpty {
            candidates[index].label = candidates[index].owners + candidates[index].label
        }
        // Deployments of one name (or names that meet at a `/`) can still leave two alike: the
        // second and later are numbered (`d0/web#2`), so every label chooses one scale set.
        var seen: [String: Int] = [:]
        for index in candidates.indices {
            let count = seen[candidates[index].label.lowercased(), default: 0] + 1
            seen[candidates[index].label.lowercased()] = count
            if count > 1 { candidates[index].label += "#\(count)" }
        }
        let picked: Candidate
        if let chosen {
            // A label chooses one; a scale set's name chooses only when one scale set has it.
            let byName = candidates.filter { $0.name?.lowercased() == chosen.lowercased() }
            let match = candidates.first { $0.label == chosen } ?? candidates.first { $0.label.lowercased() == chosen.lowercased() }
                ?? (byName.count == 1 ? byName[0] : nil)
            if match == nil, byName.count > 1 {
                var problem = Problem(at: .setting(.resource, value: chosen), "names \(byName.count) scale sets (\(byName.map(\.label).joined(separator: ", "))); choose one by its label")
                problem.allowed = byName.map(\.label)
                throw ValidationFailure(undeclared + [problem])
            }
            guard let match else {
                var problem = Problem(at: .setting(.resource, value: chosen), "no scale set of that name; the template has \(candidates.map(\.label).joined(separator: ", "))")
                problem.allowed = candidates.map(\.label)
                throw ValidationFailure(undeclared + [problem])
            }
            picked = match
        } else {
            guard candidates.count == 1 else {
                var problem = Problem(field: "resources", "holds \(candidates.count) scale sets (\(candidates.map(\.label).joined(separator: ", "))); choose one")
                problem.remedy = Remedy(.resource, placeholder: "NAME", scriptForm: "resource = \"NAME\"")
                problem.allowed = candidates.map(\.label)
                throw ValidationFailure(undeclared + [problem])
            }
            picked = candidates[0]
        }
        if let failure = picked.condition {
            throw ValidationFailure(undeclared + [problem(failure, at: "\(picked.path).condition")])
        }
        evaluator.scope = picked.scope
        evaluator.copy = picked.copy
        var projection = Projection(evaluator: evaluator)
        let resolved = projection.resource(picked.resource, at: picked.path)
        var reader = ScaleSetResource(prefix: picked.path)
        var definition = reader.read(resolved)
        // Every problem at once, but none caused by another: a field that could not be
        // evaluated is not also reported missing.
        let caused = reader.problems.filter { problem in projection.unevaluated.contains { problem.field == $0 || problem.field.hasPrefix($0 + ".") } }
        var found = undeclared + projection.problems + reader.problems.filter { !caused.contains($0) }
        var warnings = reader.warnings
        if let failure = picked.nameFailure {
            // A name that waits on a parameter: say which, not that its path is no name.
            let source = failure.path.isEmpty ? "" : "\(failure.path) "
            // The way to give the value is the command line's to spell (the remedy).
            var warning = Problem(field: "\(picked.path).name", "could not be evaluated (\(source)\(failure.message)): the scale set is called vmss; to name it, give the parameter's value in a parameters file")
            warning.remedy = Remedy(.templateParameters, placeholder: "FILE", scriptForm: "parameters = \"FILE\"")
            warning.source = failure.path.isEmpty ? nil : failure.path
            warnings.append(warning)
            definition.name = "vmss"
        } else {
            if picked.name == nil { definition.name = picked.label }
            ScaleSetImport.usableName(&definition, at: "\(picked.path).name", warnings: &warnings)
        }
        // A profile that could not be evaluated may hold the health source: a problem when the
        // scale set needs one and has none, otherwise a warning.
        if !projection.deferred.isEmpty {
            if found.isEmpty && definition.validate().isEmpty {
                warnings += projection.deferred.map { Problem(field: $0.field, "\($0.message); a health extension or probe in it is not read") }
            } else {
                found += projection.deferred
            }
        }
        guard found.isEmpty else { throw ValidationFailure(found) }
        warnings += unread.map(\.warning) + autoscaleWarnings(template, capacity: definition.capacity, scaleSet: picked.name)
        var imported = ImportedScaleSet(definition: definition, warnings: warnings, format: .armTemplate, resource: picked.label)
        imported.document = withChildExtensions(projection.whole(picked.resource, at: picked.path), evaluator.childExtensions, scaleSet: picked.name)
        return imported
    }

    /// A problem for `failure`, placed where it arose and saying which field needed it.
    /// When an input would have answered, the message ends with "pass one" and the problem
    /// carries that input as its remedy (the command line spells it).
    static func problem(_ failure: ARMFailure, at path: String) -> Problem {
        let readFor = failure.path.isEmpty || failure.path == path ? "" : " (read for \(path))"
        var problem = Problem(field: failure.path.isEmpty ? path : failure.path,
                              failure.message + readFor + (failure.remedy == nil ? "" : "; pass one"))
        problem.remedy = failure.remedy
        problem.limit = failure.limit
        problem.cycle = failure.cycle
        return problem
    }

    /// The resource at `field` takes the template at `prefix` past Azure's limit of resources.
    static func pastLimit(at field: String, prefix: String) -> Problem {
        var problem = Problem(field: field, "brings the template at \(prefix.isEmpty ? "the top" : prefix.dropLast()) past \(ARMEvaluator.maxResourcesPerTemplate) resources once its copy loops are expanded; Azure allows at most \(ARMEvaluator.maxResourcesPerTemplate) resources in a template, copies included")
        problem.limit = .resourcesPerTemplate(ARMEvaluator.maxResourcesPerTemplate)
        return problem
    }

    /// Every scale set in `template`'s resources, with nested deployments' inline templates.
    static func collect(_ template: JSON, scope: ARMScope, copy: [String: Int], prefix: String, owners: String = "", _ evaluator: ARMEvaluator,
                        nesting: Int, into candidates: inout [Candidate], problems: inout [Problem], undeclared: inout [Problem],
                        unread: inout [Unread]) {
        var items: [(path: String, symbolic: String?, value: JSON)] = []
        switch template.member("resources") {
        case .array(let list)?: items = list.enumerated().map { ("\(prefix)resources[\($0.offset)]", nil, $0.element) }
        case .object(let byName)?: items = byName.keys.sorted().map { ("\(prefix)resources.\($0)", $0, byName[$0]!) }
        case nil: return
        default:
            problems.append(Problem(field: "\(prefix)resources", "is not a list or an object of resources"))
            return
        }
        // Azure's own limits on what a template expands to: at most 800 resources in one template,
        // copies included, and 800 deployments in a resource group's history; every resource
        // instance is also charged its size to the evaluator's one budget.
        var expanded = 0
        for (path, symbolic, item) in items {
            guard !evaluator.walkStopped else { return }
            guard case .string(let type)? = item.member("type") else { continue }
            let isScaleSet = type.lowercased() == ScaleSetResource.type.lowercased()
            let isDeployment = type.lowercased() == deploymentType.lowercased()
            guard item.member("existing") != .bool(true) else { continue }
            evaluator.scope = scope
            evaluator.copy = copy
            if type.lowercased() == childExtensionType.lowercased(), item.member("copy") == nil { noteChildExtension(item, at: path, evaluator) }
            guard isScaleSet || isDeployment else {
                // Every other resource counts towards the limit too: its copies where their count
                // evaluates (a count Azure refuses is named), else one (it is not read, so a count
                // that needs a deployment to evaluate is not a problem).
                var count = 1
                if let loop = item.member("copy"), var raw = try? evaluator.value(loop.member("count") ?? .null, at: "\(path).copy.count") {
                    // A count written 2.0 is 2 here: this resource is only counted, and a count
                    // its own reader might take is not refused for it.
                    if case .double(let d) = raw, d == d.rounded(), abs(d) <= 1e6 { raw = .int(Int(d)) }
                    do {
                        count = try evaluator.loopCount(raw, at: "\(path).copy.count")
                    } catch {
                        problems.append(problem(error, at: "\(path).copy.count"))
                        continue
                    }
                }
                expanded += count
                if expanded > ARMEvaluator.maxResourcesPerTemplate {
                    evaluator.walkStopped = true
                    problems.append(pastLimit(at: item.member("copy") == nil ? path : "\(path).copy.count", prefix: prefix))
                    return
                }
                continue
            }
            var indexes: [Int?] = [nil]
            var loopName = ""
            if let loop = item.member("copy") {
                if case .string(let name)? = loop.member("name") { loopName = name }
                do {
                    indexes = Array(0..<(try evaluator.loopCount(loop.member("count") ?? .null, at: "\(path).copy.count")))
                } catch {
                    if isScaleSet {
                        problems.append(problem(error, at: "\(path).copy.count"))
                    } else {
                        unread.append(Unread(problem: problem(error, at: "\(path).copy.count"), holdsScaleSet: holdsScaleSet(item)))
                    }
                    continue
                }
            }
            expanded += indexes.count
            guard expanded <= ARMEvaluator.maxResourcesPerTemplate else {
                evaluator.walkStopped = true
                problems.append(pastLimit(at: item.member("copy") == nil ? path : "\(path).copy.count", prefix: prefix))
                return
            }
            for index in indexes {
                guard !evaluator.walkStopped else { return }
                do {
                    try evaluator.chargeResource(item, at: path, deployment: isDeployment)
                } catch {
                    evaluator.walkStopped = true
                    problems.append(problem(error, at: path))
                    return
                }
                var loopCopy = copy
                if let index {
                    loopCopy[""] = index
                    if !loopName.isEmpty { loopCopy[loopName] = index }
                }
                evaluator.scope = scope
                evaluator.copy = loopCopy
                let at = index.map { "\(path)[copy \($0)]" } ?? path
                var conditionFailure: ARMFailure?
                if let condition = item.member("condition") {
                    do {
                        let value = try evaluator.value(condition, at: "\(path).condition")
                        guard case .bool(let deployed) = value else {
                            problems.append(Problem(field: "\(path).condition", "\(value.serialized(pretty: false)) is not true or false"))
                            continue
                        }
                        if !deployed { continue }
                    } catch {
                        conditionFailure = error
                    }
                }
                if isScaleSet {
                    var name: String?
                    var nameFailure: ARMFailure?
                    if let raw = item.member("name") {
                        do {
                            if case .string(let text) = try evaluator.value(raw, at: "\(path).name") { name = text }
                        } catch {
                            nameFailure = error
                        }
                    }
                    candidates.append(Candidate(path: path, label: symbolic.map { s in index.map { "\(s)[\($0)]" } ?? s } ?? name ?? at, name: name,
                                                resource: item, scope: scope, copy: loopCopy, condition: conditionFailure, nameFailure: nameFailure,
                                                owners: owners))
                    continue
                }
                if let conditionFailure {
                    unread.append(Unread(problem: problem(conditionFailure, at: "\(path).condition"), holdsScaleSet: holdsScaleSet(item)))
                    continue
                }
                guard let properties = item.member("properties"), let inner = properties.member("template"), inner.object != nil else { continue }
                guard nesting < maxNesting else {
                    problems.append(Problem(field: "\(path).properties.template", "nests deployments deeper than \(maxNesting) levels"))
                    continue
                }
                let innerPrefix = "\(path).properties.template."
                var owner = at
                if let raw = item.member("name"), case .string(let text)? = try? evaluator.value(raw, at: "\(path).name") { owner = text }
                let innerOwners = owners + owner + "/"
                if case .string(let s)? = properties.member("expressionEvaluationOptions")?.member("scope"), s.lowercased() == "inner" {
                    // What the deployment passes its template: ARM binds only an object of
                    // names; each name must be one the template declares. Reported once however
                    // many copies (of this deployment or of those around it) pass it, and beside
                    // every problem of the template itself.
                    let passed = properties.member("parameters") ?? .null
                    var found: [Problem] = []
                    if let declarations = inner.member("parameters"), declarations.object == nil {
                        found.append(Problem(field: "\(innerPrefix)parameters", "is \(declarations.kindName); expected an object declaring the template's parameters by name"))
                    }
                    switch passed {
                    case .object: found += undeclaredParameters(.object(["parameters": passed]), template: inner, parametersPath: nil, fieldPrefix: "\(path).properties.")
                    case .null: break
                    case .string(let text) where text.hasPrefix("["): break
                    default: found += [Problem(field: "\(path).properties.parameters", "is \(passed.kindName); expected an object of the template's parameters, each {\"value\": …} or {\"reference\": …}")]
                    }
                    if let first = found.first, !undeclared.contains(first) { undeclared += found }
                    var given: [String: ARMScope.Given] = [:]
                    for (name, entry) in properties.member("parameters")?.object ?? [:] {
                        if let value = entry.member("value") {
                            given[name] = .expression(value, scope: scope, copy: loopCopy, path: "\(path).properties.parameters.\(name).value")
                        } else if case .string(let text) = entry, let expression = ARMEvaluator.expressionText(text) {
                            // Compiled Bicep passes a parameter as one expression that ARM evaluates to
                            // {"value": …} (`[if(c, createObject('value', a), createObject('value', b))]`):
                            // its value is that expression's `value`.
                            given[name] = .expression(.string("[\(expression).value]"), scope: scope, copy: loopCopy, path: "\(path).properties.parameters.\(name)")
                        } else if entry.member("reference") != nil {
                            given[name] = .keyVault
                        } else {
                            given[name] = .malformed
                        }
                    }
                    let innerScope = ARMScope(template: inner, path: innerPrefix, given: given)
                    collect(inner, scope: innerScope, copy: [:], prefix: innerPrefix, owners: innerOwners, evaluator, nesting: nesting + 1, into: &candidates, problems: &problems,
                            undeclared: &undeclared, unread: &unread)
                } else {
                    collect(inner, scope: scope, copy: loopCopy, prefix: innerPrefix, owners: innerOwners, evaluator, nesting: nesting + 1, into: &candidates, problems: &problems,
                            undeclared: &undeclared, unread: &unread)
                }
            }
        }
    }
}
