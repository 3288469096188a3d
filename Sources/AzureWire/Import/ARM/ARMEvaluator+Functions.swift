import Formats

/// The template functions, by family. Arguments are evaluated before the call except for the
/// functions that choose among them (`if`, `and`, `or`, `coalesce`) and the lambdas of `map`,
/// `filter`, `reduce`, `sort`, `toObject` and `mapValues`, which run once per element.
extension ARMEvaluator {
    func call(_ name: String, _ arguments: [ARMExpression]) throws(ARMFailure) -> JSON {
        let lowered = name.lowercased()
        if let value = try lazyCall(lowered, name, arguments) { return value }
        var values: [JSON] = []
        for argument in arguments { values.append(try evaluate(argument)) }
        let a = Arguments(function: name, values: values)
        if let value = try referenceCall(lowered, a) { return value }
        if let value = try stringCall(lowered, a) { return value }
        if let value = try collectionCall(lowered, a) { return value }
        if let value = try logicCall(lowered, a) { return value }
        if let value = try deploymentCall(lowered, a) { return value }
        if name.contains(".") {
            throw ARMFailure("\(name)(…) is a user-defined function, which rehearse does not evaluate; give the value itself or a parameter")
        }
        throw ARMFailure("\(name)(…) is not a template function rehearse evaluates; give the value itself or a parameter")
    }

    /// The evaluated arguments of one call, read by type with messages that name the function.
    struct Arguments {
        let function: String
        let values: [JSON]
        var count: Int { values.count }

        func expect(_ range: ClosedRange<Int>) throws(ARMFailure) {
            guard range.contains(values.count) else {
                let allowed = range.lowerBound == range.upperBound ? "\(range.lowerBound)" : range.upperBound == Int.max ? "at least \(range.lowerBound)" : "\(range.lowerBound) to \(range.upperBound)"
                throw ARMFailure("\(function)(…) takes \(allowed) argument(s), not \(values.count)")
            }
        }

        func wrong(_ i: Int, _ wanted: String) -> ARMFailure {
            ARMFailure("\(function)(…) expects \(wanted) as argument \(i + 1), not \(values[i].kindName)")
        }

        func string(_ i: Int) throws(ARMFailure) -> String {
            guard case .string(let s) = values[i] else { throw wrong(i, "a string") }
            return s
        }

        func int(_ i: Int) throws(ARMFailure) -> Int {
            switch values[i] {
            case .int(let n): return n
            case .double(let d) where d == d.rounded() && abs(d) < 9e15: return Int(d)
            default: throw wrong(i, "a whole number")
            }
        }

        func bool(_ i: Int) throws(ARMFailure) -> Bool {
            guard case .bool(let b) = values[i] else { throw wrong(i, "true or false") }
            return b
        }

        func array(_ i: Int) throws(ARMFailure) -> [JSON] {
            guard case .array(let items) = values[i] else { throw wrong(i, "an array") }
            return items
        }

        func object(_ i: Int) throws(ARMFailure) -> [String: JSON] {
            guard let members = values[i].object else { throw wrong(i, "an object") }
            return members
        }
    }

    // MARK: Functions that choose what they evaluate

    func lazyCall(_ lowered: String, _ name: String, _ arguments: [ARMExpression]) throws(ARMFailure) -> JSON? {
        switch lowered {
        case "if":
            guard arguments.count == 3 else { throw ARMFailure("if(…) takes 3 arguments, not \(arguments.count)") }
            guard case .bool(let condition) = try evaluate(arguments[0]) else { throw ARMFailure("if(…) expects true or false as argument 1") }
            return try evaluate(arguments[condition ? 1 : 2])
        case "and", "or":
            guard arguments.count >= 2 else { throw ARMFailure("\(name)(…) takes at least 2 arguments, not \(arguments.count)") }
            for (i, argument) in arguments.enumerated() {
                guard case .bool(let b) = try evaluate(argument) else { throw ARMFailure("\(name)(…) expects true or false as argument \(i + 1)") }
                if lowered == "and" && !b { return .bool(false) }
                if lowered == "or" && b { return .bool(true) }
            }
            return .bool(lowered == "and")
        case "coalesce":
            for argument in arguments {
                let value = try evaluate(argument)
                if value != .null { return value }
            }
            return .null
        case "map", "filter", "sort", "reduce", "toobject", "mapvalues":
            return try lambdaCall(lowered, name, arguments)
        case "lambda":
            throw ARMFailure("lambda(…) is allowed only as an argument of map, filter, reduce, sort, toObject or mapValues")
        default:
            return nil
        }
    }

    /// A lambda argument: its parameter names and body.
    func lambda(_ expression: ARMExpression, of function: String, parameters: ClosedRange<Int>) throws(ARMFailure) -> ([String], ARMExpression) {
        guard case .call(let name, let parts) = expression, name.lowercased() == "lambda", parts.count >= 2 else {
            throw ARMFailure("\(function)(…) expects lambda('name', …, body) as its function argument")
        }
        var names: [String] = []
        for part in parts.dropLast() {
            guard case .string(let s) = part else { throw ARMFailure("lambda(…) names its parameters with string literals") }
            names.append(s)
        }
        guard parameters.contains(names.count) else {
            throw ARMFailure("\(function)(…) expects a lambda of \(parameters.lowerBound == parameters.upperBound ? "\(parameters.lowerBound)" : "\(parameters.lowerBound) or \(parameters.upperBound)") parameter(s), not \(names.count)")
        }
        return (names, parts.last!)
    }

    /// `body` with `names` bound to `values` (extra names stay unbound).
    func apply(_ lambda: ([String], ARMExpression), _ values: [JSON]) throws(ARMFailure) -> JSON {
        var frame: [String: JSON] = [:]
        for (name, value) in zip(lambda.0, values) { frame[name.lowercased()] = value }
        lambdaFrames.append(frame)
        defer { lambdaFrames.removeLast() }
        return try evaluate(lambda.1)
    }

    func lambdaCall(_ lowered: String, _ name: String, _ arguments: [ARMExpression]) throws(ARMFailure) -> JSON {
        let counts: [String: ClosedRange<Int>] = ["map": 2...2, "filter": 2...2, "sort": 2...2, "reduce": 3...3, "toobject": 2...3, "mapvalues": 2...2]
        guard counts[lowered]!.contains(arguments.count) else { throw ARMFailure("\(name)(…) takes \(counts[lowered]!.lowerBound) argument(s), not \(arguments.count)") }
        let input = try evaluate(arguments[0])
        if lowered == "mapvalues" {
            guard let members = input.object else { throw ARMFailure("mapValues(…) expects an object as argument 1, not \(input.kindName)") }
            let f = try lambda(arguments[1], of: name, parameters: 1...1)
            var out: [String: JSON] = [:]
            for key in members.keys.sorted() { out[key] = try apply(f, [members[key]!]) }
            return .object(out)
        }
        guard case .array(let items) = input else { throw ARMFailure("\(name)(…) expects an array as argument 1, not \(input.kindName)") }
        try charge(items.count)
        switch lowered {
        case "map":
            let f = try lambda(arguments[1], of: name, parameters: 1...2)
            var out: [JSON] = []
            for (i, item) in items.enumerated() { out.append(try apply(f, [item, .int(i)])) }
            return .array(out)
        case "filter":
            let f = try lambda(arguments[1], of: name, parameters: 1...2)
            var out: [JSON] = []
            for (i, item) in items.enumerated() {
                guard case .bool(let keep) = try apply(f, [item, .int(i)]) else { throw ARMFailure("filter(…)'s lambda must answer true or false") }
                if keep { out.append(item) }
            }
            return .array(out)
        case "reduce":
            var accumulated = try evaluate(arguments[1])
            let f = try lambda(arguments[2], of: name, parameters: 2...3)
            for (i, item) in items.enumerated() { accumulated = try produced(try apply(f, [accumulated, item, .int(i)])) }
            return accumulated
        case "sort":
            let f = try lambda(arguments[1], of: name, parameters: 2...2)
            return .array(try mergeSort(items) { (a, b) throws(ARMFailure) -> Bool in
                guard case .bool(let before) = try self.apply(f, [a, b]) else { throw ARMFailure("sort(…)'s lambda must answer true or false") }
                return before
            })
        default: // toObject
            let key = try lambda(arguments[1], of: name, parameters: 1...1)
            let valueOf = arguments.count == 3 ? try lambda(arguments[2], of: name, parameters: 1...1) : nil
            var out: [String: JSON] = [:]
            for item in items {
                guard case .string(let k) = try apply(key, [item]) else { throw ARMFailure("toObject(…)'s key lambda must answer a string") }
                out[k] = try valueOf.map { (f) throws(ARMFailure) -> JSON in try apply(f, [item]) } ?? item
            }
            return .object(out)
        }
    }

    /// A stable merge sort that calls `before` O(n log n) times whatever it answers (a
    /// comparison that is not an order cannot make it loop or trap).
    func mergeSort(_ items: [JSON], _ before: (JSON, JSON) throws(ARMFailure) -> Bool) throws(ARMFailure) -> [JSON] {
        var a = items
        var b = items
        var width = 1
        while width < a.count {
            var start = 0
            while start < a.count {
                let mid = min(start + width, a.count), end = min(start + 2 * width, a.count)
                var i = start, j = mid, k = start
                while i < mid && j < end {
                    if try before(a[j], a[i]) { b[k] = a[j]; j += 1 } else { b[k] = a[i]; i += 1 }
                    k += 1
                }
                while i < mid { b[k] = a[i]; i += 1; k += 1 }
                while j < end { b[k] = a[j]; j += 1; k += 1 }
                start = end
            }
            swap(&a, &b)
            width *= 2
        }
        return a
    }

    // MARK: References and deployment

    func referenceCall(_ lowered: String, _ a: Arguments) throws(ARMFailure) -> JSON? {
        switch lowered {
        case "parameters":
            try a.expect(1...1)
            return try parameter(try a.string(0))
        case "variables":
            try a.expect(1...1)
            return try variable(try a.string(0))
        case "lambdavariables":
            try a.expect(1...1)
            let name = try a.string(0)
            for frame in lambdaFrames.reversed() { if let value = frame[name.lowercased()] { return value } }
            throw ARMFailure("lambdaVariables('\(name)') names no parameter of an enclosing lambda")
        case "copyindex":
            try a.expect(0...2)
            var loop = "", offset = 0
            if a.count >= 1 {
                if case .string(let s) = a.values[0] { loop = s } else { offset = try a.int(0) }
            }
            if a.count == 2 { offset = try a.int(1) }
            guard let index = copy[loop] ?? copy.first(where: { $0.key.lowercased() == loop.lowercased() })?.value else {
                throw ARMFailure(loop.isEmpty ? "copyIndex() is used outside a copy loop" : "copyIndex('\(loop)') names no enclosing copy loop")
            }
            let (sum, overflow) = index.addingReportingOverflow(offset)
            guard !overflow else { throw ARMFailure("copyIndex(…) + \(offset) overflows") }
            return .int(sum)
        case "reference", "listkeys", "listsecrets", "listaccountsas", "listservicesas", "listcallbackurl", "list":
            throw ARMFailure("\(a.function)(…) reads the state of a deployed resource, which a template alone does not hold; give the value as a parameter")
        case _ where lowered.hasPrefix("list"):
            throw ARMFailure("\(a.function)(…) reads the state of a deployed resource, which a template alone does not hold; give the value as a parameter")
        case "utcnow", "newguid":
            throw ARMFailure("\(a.function)() changes on every deployment; give the value as a parameter")
        case "pickzones":
            throw ARMFailure("pickZones(…) depends on the region's zones in Azure; give the zones as a parameter")
        default:
            return nil
        }
    }

    func deploymentCall(_ lowered: String, _ a: Arguments) throws(ARMFailure) -> JSON? {
        switch lowered {
        case "resourcegroup": try a.expect(0...0); return context.resourceGroupObject
        case "subscription": try a.expect(0...0); return context.subscriptionObject
        case "tenant": try a.expect(0...0); return context.tenantObject
        case "deployment": try a.expect(0...0); return context.deploymentObject(template: scope.template)
        case "environment": try a.expect(0...0); return context.environmentObject
        case "resourceid", "subscriptionresourceid", "tenantresourceid":
            try a.expect(2...Int.max)
            var strings: [String] = []
            for i in 0..<a.count { strings.append(try a.string(i)) }
            guard let typeAt = strings.firstIndex(where: { $0.contains("/") }) else {
                throw ARMFailure("\(a.function)(…) names no resource type (Namespace/type)")
            }
            let type = strings[typeAt].split(separator: "/").map(String.init)
            let names = strings[(typeAt + 1)...].flatMap { $0.split(separator: "/").map(String.init) }
            guard names.count == type.count - 1 else {
                throw ARMFailure("\(a.function)(…) of type \(strings[typeAt]) takes \(type.count - 1) name(s), not \(names.count)")
            }
            var path = "providers/\(type[0])"
            for (segment, name) in zip(type.dropFirst(), names) { path += "/\(segment)/\(name)" }
            let before = Array(strings[..<typeAt])
            switch lowered {
            case "tenantresourceid": return .string("/" + path)
            case "subscriptionresourceid": return .string("/subscriptions/\(before.first ?? context.subscriptionId)/" + path)
            default:
                let subscription = before.count == 2 ? before[0] : context.subscriptionId
                let group = before.last ?? context.resourceGroup
                return .string("/subscriptions/\(subscription)/resourceGroups/\(group)/" + path)
            }
        case "extensionresourceid":
            try a.expect(3...Int.max)
            var strings: [String] = []
            for i in 0..<a.count { strings.append(try a.string(i)) }
            // extensionResourceId(scopeId, 'Namespace/type[/child…]', name, …): one name per type segment after the namespace.
            let type = strings[1].split(separator: "/", omittingEmptySubsequences: false).map(String.init)
            let names = strings.dropFirst(2).flatMap { $0.split(separator: "/", omittingEmptySubsequences: false).map(String.init) }
            guard type.count >= 2, !type.contains(where: \.isEmpty) else {
                throw ARMFailure("extensionResourceId(…) expects a resource type Namespace/type as argument 2, not '\(strings[1])'")
            }
            guard names.count == type.count - 1 else {
                throw ARMFailure("extensionResourceId(…) of type \(strings[1]) takes \(type.count - 1) name(s), not \(names.count)")
            }
            guard !names.contains(where: \.isEmpty) else {
                throw ARMFailure("extensionResourceId(…) of type \(strings[1]) has an empty name; allowed names that are not empty")
            }
            var path = "\(strings[0])/providers/\(type[0])"
            for (segment, name) in zip(type.dropFirst(), names) { path += "/\(segment)/\(name)" }
            return .string(path)
        case "managementgroup":
            return .object(["id": .string("/providers/Microsoft.Management/managementGroups/rehearse"), "name": .string("rehearse")])
        case "uniquestring":
            try a.expect(1...Int.max)
            var strings: [String] = []
            for i in 0..<a.count { strings.append(try a.string(i)) }
            return .string(ARMHash.uniqueString(strings))
        case "guid":
            try a.expect(1...Int.max)
            var strings: [String] = []
            for i in 0..<a.count { strings.append(try a.string(i)) }
            return .string(ARMHash.guid(strings))
        default:
            return nil
        }
    }
}
