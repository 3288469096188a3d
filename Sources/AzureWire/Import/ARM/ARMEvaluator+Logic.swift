import Formats

/// Literals, comparisons, logic and arithmetic: `true`, `false`, `null`, `not`, `equals`, `greater`,
/// `less` and their OrEquals forms, `add`, `sub`, `mul`, `div`, `mod`, `min`, `max`, `int`, `bool`, and the values they compare.
extension ARMEvaluator {
    func logicCall(_ lowered: String, _ a: Arguments) throws(ARMFailure) -> JSON? {
        switch lowered {
        case "true": try a.expect(0...0); return .bool(true)
        case "false": try a.expect(0...0); return .bool(false)
        case "null": try a.expect(0...0); return .null
        case "not": try a.expect(1...1); return .bool(!(try a.bool(0)))
        case "equals":
            try a.expect(2...2)
            return .bool(Self.normalised(a.values[0]) == Self.normalised(a.values[1]))
        case "greater", "greaterorequals", "less", "lessorequals":
            try a.expect(2...2)
            let order: Int
            switch (a.values[0], a.values[1]) {
            case (.string(let x), .string(let y)): order = x == y ? 0 : (x < y ? -1 : 1)
            default:
                let (x, y) = (try a.int(0), try a.int(1))
                order = x == y ? 0 : (x < y ? -1 : 1)
            }
            switch lowered {
            case "greater": return .bool(order > 0)
            case "greaterorequals": return .bool(order >= 0)
            case "less": return .bool(order < 0)
            default: return .bool(order <= 0)
            }
        case "add", "sub", "mul", "div", "mod":
            try a.expect(2...2)
            let (x, y) = (try a.int(0), try a.int(1))
            let result: (partialValue: Int, overflow: Bool)
            switch lowered {
            case "add": result = x.addingReportingOverflow(y)
            case "sub": result = x.subtractingReportingOverflow(y)
            case "mul": result = x.multipliedReportingOverflow(by: y)
            default:
                guard y != 0 else { throw ARMFailure("\(a.function)(\(x), 0) divides by zero") }
                result = lowered == "div" ? x.dividedReportingOverflow(by: y) : x.remainderReportingOverflow(dividingBy: y)
            }
            guard !result.overflow else { throw ARMFailure("\(a.function)(\(x), \(y)) is outside ARM's 64-bit whole numbers") }
            return .int(result.partialValue)
        case "min", "max":
            try a.expect(1...Int.max)
            var numbers: [Int] = []
            if a.count == 1, case .array(let items) = a.values[0] {
                for item in items { guard case .int(let n) = item else { throw ARMFailure("\(a.function)(…) expects whole numbers") }; numbers.append(n) }
            } else {
                for i in 0..<a.count { numbers.append(try a.int(i)) }
            }
            guard let result = lowered == "min" ? numbers.min() : numbers.max() else { throw ARMFailure("\(a.function)(…) of an empty array") }
            return .int(result)
        case "int":
            try a.expect(1...1)
            switch a.values[0] {
            case .int(let n): return .int(n)
            case .double(let d) where d.isFinite && abs(d) < 9e15: return .int(Int(d))
            case .string(let s): guard let n = Int(s.trimmingWhitespace) else { throw ARMFailure("int('\(s.prefix(40))') is not a whole number") }; return .int(n)
            default: throw a.wrong(0, "a number or a string of one")
            }
        case "bool":
            try a.expect(1...1)
            switch a.values[0] {
            case .bool(let b): return .bool(b)
            case .int(let n): return .bool(n != 0)
            case .string(let s) where ["true", "false"].contains(s.lowercased()): return .bool(s.lowercased() == "true")
            default: throw a.wrong(0, "true, false, \"true\", \"false\" or a number")
            }
        default:
            return nil
        }
    }

    /// Numbers compare by value whether written 2 or 2.0.
    static func normalised(_ value: JSON) -> JSON {
        if case .double(let d) = value, d == d.rounded(), abs(d) < 9e15 { return .int(Int(d)) }
        if case .ordered = value { return .object(value.object ?? [:]) }
        return value
    }
}
