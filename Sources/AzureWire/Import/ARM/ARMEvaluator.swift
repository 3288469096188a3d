import Formats

/// Where a template's `parameters(…)` and `variables(…)` are looked up: the template (the
/// document's, or a nested deployment's inline template with the inner expression scope), the
/// values given for its parameters, and the values already computed (each parameter and
/// variable is evaluated at most once).
final class ARMScope {
    /// A value given for a parameter.
    enum Given {
        /// From a parameters file: taken as written, never evaluated.
        case literal(JSON)
        /// A Key Vault reference in a parameters file: no value rehearse can read.
        case keyVault
        /// Given without `{"value": …}` or `{"reference": …}`: refused where it is given.
        case malformed
        /// A nested deployment's `properties.parameters.NAME.value`, evaluated in the scope (and
        /// copy loop) of the deployment that passes it, at `path`.
        case expression(JSON, scope: ARMScope, copy: [String: Int], path: String)
    }

    /// The template object.
    let template: JSON
    /// The template's path in the document, ending with a dot (empty at the top).
    let path: String
    /// Values given for parameters, by name as written.
    let given: [String: Given]
    /// Evaluated parameters (`p:name`) and variables (`v:name`), failures included.
    var memo: [String: Result<JSON, ARMFailure>] = [:]
    /// The references being evaluated, outermost first (to name a cycle).
    var resolving: [String] = []

    init(template: JSON, path: String, given: [String: Given]) {
        self.template = template
        self.path = path
        self.given = given
    }

    /// The given value of parameter `name` (names compare ignoring case, as ARM's do).
    func value(of name: String) -> Given? {
        if let exact = given[name] { return exact }
        return given.first { $0.key.lowercased() == name.lowercased() }?.value
    }

    /// The values a parameters file gives: its `parameters` object (the deployment parameters
    /// schema) or the object itself when it is a bare map of names.
    static func given(byFile file: JSON?) -> [String: Given] {
        guard let members = (file?.member("parameters") ?? file)?.object else { return [:] }
        var out: [String: Given] = [:]
        for (name, entry) in members {
            if let value = entry.member("value") { out[name] = .literal(value) } else if entry.member("reference") != nil { out[name] = .keyVault } else { out[name] = .malformed }
        }
        return out
    }
}

/// Evaluates ARM template expressions, lazily: only the values asked for, each parameter and
/// variable once. Bounded whatever the template: references nest at most `maxReferenceDepth`
/// deep (a chain of 20,000 variables is refused, not followed down the stack), a reference to
/// itself (directly or through others) is a cycle named with its path, every value produced is
/// at most `maxValueUnits` (a string of 1 MiB counts 16,384 units, an array its elements) and
/// all of them together at most `totalBudget` units (about 256 MiB of text or 4 million
/// elements), so a template whose values double at every level stops in milliseconds and
/// memory stays bounded.
final class ARMEvaluator {
    /// The deepest chain of parameter and variable references followed.
    static let maxReferenceDepth = 64
    /// The deepest nesting of expression evaluation (calls inside calls, across references).
    static let maxDepth = 192
    /// The largest value one expression may produce, in units (an element, a member, or 64
    /// bytes of a string each count one).
    static let maxValueUnits = 1 << 18
    /// The longest string an expression may produce, in bytes.
    static let maxStringBytes = 1 << 20
    /// The units all expressions of one import may produce together.
    static let totalBudget = 4 << 20

    let context: ARMDeploymentContext
    /// The scope expressions are evaluated in now.
    var scope: ARMScope
    /// Copy loop indexes by loop name; the resource's own loop is also under "".
    var copy: [String: Int] = [:]
    /// Lambda parameters in effect, innermost last.
    var lambdaFrames: [[String: JSON]] = []
    /// Units left to produce.
    var budget = ARMEvaluator.totalBudget
    /// Whether the budget ran out: every evaluation after it fails for that one reason.
    var exhausted: Bool { budget < 0 }
    var depth = 0
    var referenceDepth = 0
    /// The most resources one template may hold once its copy loops are expanded (Azure: 800, copies included).
    static let maxResourcesPerTemplate = 800
    /// The most nested deployments one import may expand: Azure keeps at most 800 deployments
    /// in a resource group's history and fails the next one.
    static let maxDeployments = 800
    /// Nested deployment instances expanded so far.
    var deployments = 0
    /// The units of each resource definition charged per instance, by its path (measured once).
    var resourceUnits: [String: Int] = [:]
    /// Whether the walk of the template's resources stopped at a limit (the problem is said once).
    var walkStopped = false
    /// The scale set extension resources (`…/virtualMachineScaleSets/extensions`, as the Azure
    /// Verified Module deploys them in nested deployments) the walk found deployed: each one's
    /// evaluated name (`SCALESET/EXTENSION`) and properties, part of the scale set's model.
    var childExtensions: [(name: String, properties: JSON)] = []

    init(scope: ARMScope, context: ARMDeploymentContext) {
        self.scope = scope
        self.context = context
    }

    // MARK: Values of a document

    /// `raw` with every expression in it evaluated (strings `[…]`, arrays, objects and their
    /// property `copy` loops); a failure names `path`, or the deeper path where it arose.
    func value(_ raw: JSON, at path: String) throws(ARMFailure) -> JSON {
        try enter()
        defer { depth -= 1 }
        switch raw {
        case .string(let text):
            guard let expression = Self.expressionText(text) else { return .string(Self.literal(text)) }
            do {
                return try produced(try evaluate(try ARMExpression.parse(expression)))
            } catch {
                throw error.placed(at: path)
            }
        case .array(let items):
            try charge(items.count)
            var out: [JSON] = []
            out.reserveCapacity(items.count)
            for (i, item) in items.enumerated() { out.append(try value(item, at: "\(path)[\(i)]")) }
            return .array(out)
        case .object, .ordered:
            let members = raw.object ?? [:]
            try charge(members.count)
            var out: [String: JSON] = [:]
            for key in members.keys.sorted() {
                if key.lowercased() == "copy", let loops = Self.propertyLoops(members[key]!) {
                    for (name, loop) in loops { out[name] = try propertyLoop(loop, name: name, at: "\(path).copy") }
                    continue
                }
                out[key] = try value(members[key]!, at: "\(path).\(key)")
            }
            return .object(out)
        default:
            return raw
        }
    }

    /// `raw` evaluated when it is itself an expression; an array or object as written (its
    /// members are evaluated when read).
    func shallow(_ raw: JSON, at path: String) throws(ARMFailure) -> JSON {
        if case .string(let text) = raw, Self.expressionText(text) != nil { return try value(raw, at: path) }
        return raw
    }

    /// The expression in a template string (`[…]`, not `[[…`), or nil for a literal.
    static func expressionText(_ text: String) -> String? {
        guard text.hasPrefix("["), text.hasSuffix("]"), text.count >= 2, !text.hasPrefix("[[") else { return nil }
        return String(text.dropFirst().dropLast())
    }

    /// A literal template string: `[[…]` stands for `[…]`.
    static func literal(_ text: String) -> String {
        text.hasPrefix("[[") && text.hasSuffix("]") ? String(text.dropFirst()) : text
    }

    /// The property loops of an object's `copy` member (`[{ "name", "count", "input" }]`), or
    /// nil when it is not one (a field that happens to be called copy).
    static func propertyLoops(_ value: JSON) -> [(String, JSON)]? {
        guard case .array(let items) = value, !items.isEmpty else { return nil }
        var out: [(String, JSON)] = []
        for item in items {
            guard case .string(let name)? = item.member("name"), item.member("count") != nil, item.member("input") != nil else { return nil }
            out.append((name, item))
        }
        return out
    }

    /// A property loop's array: `input` evaluated with `copyIndex('name')` from 0 to `count`.
    func propertyLoop(_ loop: JSON, name: String, at path: String) throws(ARMFailure) -> JSON {
        let count = try loopCount(loop.member("count") ?? .null, at: "\(path).count")
        let saved = copy[name]
        defer { copy[name] = saved }
        var items: [JSON] = []
        for i in 0..<count {
            copy[name] = i
            items.append(try value(loop.member("input") ?? .null, at: "\(path).input"))
        }
        return try produced(.array(items))
    }

    /// A copy loop's `count`: a whole number from 0 to 800 (ARM's own limit).
    func loopCount(_ raw: JSON, at path: String) throws(ARMFailure) -> Int {
        let count = try value(raw, at: path)
        guard case .int(let n) = count, (0...800).contains(n) else {
            throw ARMFailure("\(count.serialized(pretty: false)) is not a copy count; allowed a whole number from 0 to 800", path: path)
        }
        return n
    }

    // MARK: References

    /// `parameters('name')`: the given value, else the declared default.
    func parameter(_ name: String) throws(ARMFailure) -> JSON {
        let key = "p:" + name.lowercased()
        return try memoised(key, label: "parameters('\(name)')") { () throws(ARMFailure) -> JSON in
            let at = "\(self.scope.path)parameters.\(name)"
            guard let declared = self.scope.template.member("parameters")?.member(name) else {
                let names = self.scope.template.member("parameters")?.object?.keys.sorted() ?? []
                throw ARMFailure("parameters('\(name)') is not declared; the template declares \(names.isEmpty ? "none" : names.joined(separator: ", "))",
                                 path: "\(self.scope.path)parameters")
            }
            switch self.scope.value(of: name) {
            case .literal(let value)?: return value
            case .keyVault?:
                throw ARMFailure("is a Key Vault reference in the parameters file, which rehearse cannot read; give its value", path: at)
            case .malformed?:
                var failure = ARMFailure("is given without a value", path: at)
                failure.reported = true
                throw failure
            case .expression(let raw, let outer, let outerCopy, let path)?:
                let (savedScope, savedCopy, savedFrames) = (self.scope, self.copy, self.lambdaFrames)
                defer { (self.scope, self.copy, self.lambdaFrames) = (savedScope, savedCopy, savedFrames) }
                (self.scope, self.copy, self.lambdaFrames) = (outer, outerCopy, [])
                return try self.value(raw, at: path)
            case nil:
                // A nullable parameter (languageVersion 2.0; Bicep's `param x type?`) with no
                // value and no default is null, not missing.
                if declared.member("defaultValue") == nil, declared.member("nullable") == .bool(true) { return .null }
                guard let fallback = declared.member("defaultValue") else {
                    // A nested deployment's inline template takes its values from the deployment's
                    // `properties.parameters`, not from the parameters file.
                    if self.scope.path.hasSuffix("properties.template.") {
                        let passing = self.scope.path.dropLast("template.".count) + "parameters.\(name)"
                        throw ARMFailure("has no defaultValue and the nested deployment passes no value; give one at \(passing) ({\"value\": ...})",
                                         path: at)
                    }
                    throw ARMFailure("has no defaultValue and no value is given", path: at,
                                     remedy: Remedy(.templateParameters, placeholder: "FILE", scriptForm: "parameters = \"FILE\""))
                }
                let (savedCopy, savedFrames) = (self.copy, self.lambdaFrames)
                defer { (self.copy, self.lambdaFrames) = (savedCopy, savedFrames) }
                (self.copy, self.lambdaFrames) = ([:], [])
                return try self.value(fallback, at: "\(at).defaultValue")
            }
        }
    }

    /// `variables('name')`, including the variables a top-level `copy` loop declares.
    func variable(_ name: String) throws(ARMFailure) -> JSON {
        let key = "v:" + name.lowercased()
        return try memoised(key, label: "variables('\(name)')") { () throws(ARMFailure) -> JSON in
            let variables = self.scope.template.member("variables")
            // A variable sees no copy loop and no lambda of the expression that refers to it.
            let (savedCopy, savedFrames) = (self.copy, self.lambdaFrames)
            defer { (self.copy, self.lambdaFrames) = (savedCopy, savedFrames) }
            (self.copy, self.lambdaFrames) = ([:], [])
            if let raw = variables?.member(name), name.lowercased() != "copy" {
                return try self.value(raw, at: "\(self.scope.path)variables.\(name)")
            }
            if let copyMember = variables?.member("copy"), let loops = Self.propertyLoops(copyMember),
               let loop = loops.first(where: { $0.0.lowercased() == name.lowercased() }) {
                return try self.propertyLoop(loop.1, name: loop.0, at: "\(self.scope.path)variables.copy")
            }
            let names = variables?.object?.keys.sorted() ?? []
            throw ARMFailure("variables('\(name)') is not declared; the template declares \(names.isEmpty ? "none" : names.joined(separator: ", "))",
                             path: "\(self.scope.path)variables")
        }
    }

    /// The value under `key` in the current scope, computed once by `compute`; a reference to a
    /// value still being computed is a cycle, and references nest at most `maxReferenceDepth`.
    func memoised(_ key: String, label: String, _ compute: () throws(ARMFailure) -> JSON) throws(ARMFailure) -> JSON {
        let scope = self.scope
        if let known = scope.memo[key] { return try known.get() }
        if let start = scope.resolving.firstIndex(of: key) {
            let chain = (scope.resolving[start...] + [key]).map(Self.describeKey)
            var failure = ARMFailure("refers to itself: \(chain.joined(separator: " → ")); allowed references that end in a value", path: "\(scope.path)\(Self.section(key))")
            failure.cycle = chain
            throw failure
        }
        guard referenceDepth < Self.maxReferenceDepth else {
            throw ARMFailure("\(label) is reached through more than \(Self.maxReferenceDepth) nested references; allowed chains of at most \(Self.maxReferenceDepth)",
                             path: "\(scope.path)\(Self.section(key))", limit: .referenceDepth(Self.maxReferenceDepth))
        }
        referenceDepth += 1
        scope.resolving.append(key)
        defer {
            referenceDepth -= 1
            scope.resolving.removeLast()
        }
        let result: Result<JSON, ARMFailure>
        do { result = .success(try compute()) } catch { result = .failure(error) }
        scope.memo[key] = result
        return try result.get()
    }

    static func describeKey(_ key: String) -> String {
        let name = key.dropFirst(2)
        return key.hasPrefix("p:") ? "parameters('\(name)')" : "variables('\(name)')"
    }

    static func section(_ key: String) -> String {
        "\(key.hasPrefix("p:") ? "parameters" : "variables").\(key.dropFirst(2))"
    }

    // MARK: Expressions

    /// The value of `expression` in the current scope.
    func evaluate(_ expression: ARMExpression) throws(ARMFailure) -> JSON {
        try enter()
        defer { depth -= 1 }
        switch expression {
        case .string(let s): return .string(s)
        case .number(let n): return .int(n)
        case .member(let base, let name): return try Self.property(try evaluate(base), name)
        case .index(let base, let index): return try Self.element(try evaluate(base), try evaluate(index))
        case .call(let name, let arguments):
            try charge(1)
            return try produced(try call(name, arguments))
        }
    }

    /// `value.name`: an object's member, compared ignoring case.
    static func property(_ value: JSON, _ name: String) throws(ARMFailure) -> JSON {
        guard let members = value.object else {
            throw ARMFailure("cannot read .\(name) of \(value.kindName); allowed on an object")
        }
        if let found = value.member(name) { return found }
        let keys = members.keys.sorted()
        throw ARMFailure("the object has no property \(name); it has \(keys.isEmpty ? "none" : keys.prefix(12).joined(separator: ", "))")
    }

    /// `value[index]`: an array's element or an object's member.
    static func element(_ value: JSON, _ index: JSON) throws(ARMFailure) -> JSON {
        switch (value, index) {
        case (.array(let items), .int(let i)):
            guard items.indices.contains(i) else {
                throw ARMFailure("index \(i) is outside the array of \(items.count) element(s)")
            }
            return items[i]
        case (_, .string(let key)) where value.object != nil: return try property(value, key)
        default:
            throw ARMFailure("cannot index \(value.kindName) with \(index.kindName); allowed an array with a whole number or an object with a string")
        }
    }
}

extension ARMFailure {
    /// The failure with `path` as its place when it has none yet.
    func placed(at path: String) -> ARMFailure {
        var out = self
        if out.path.isEmpty { out.path = path }
        return out
    }
}
