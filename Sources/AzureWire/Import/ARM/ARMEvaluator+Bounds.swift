import Formats

/// The evaluator's bounds: nesting depth and the one budget every built value, search and
/// expanded copy is charged to.
extension ARMEvaluator {
    func enter() throws(ARMFailure) {
        guard depth < Self.maxDepth else {
            throw ARMFailure("the expressions nest deeper than \(Self.maxDepth) levels (across references); allowed at most \(Self.maxDepth)", limit: .nesting(Self.maxDepth))
        }
        depth += 1
    }

    func charge(_ units: Int) throws(ARMFailure) {
        budget -= max(1, units)
        guard budget >= 0 else {
            throw ARMFailure("the template's expressions, copies and nested deployments produce more than \(Self.totalBudget) values in all (a value is an element, a member, a resource copy's definition or 64 bytes of text); rehearse stops there, far past Azure's own limits (800 resources in a template, 4 MB once expanded)", limit: .values(Self.totalBudget))
        }
    }

    /// Charges one expanded instance of the resource at `path` (a copy of it, or the resource
    /// itself) its size to the budget, as the template ARM expands holds one copy of the
    /// definition per instance; a nested deployment also counts against `maxDeployments`.
    func chargeResource(_ item: JSON, at path: String, deployment: Bool) throws(ARMFailure) {
        if deployment {
            deployments += 1
            guard deployments <= Self.maxDeployments else {
                throw ARMFailure("expands to more than \(Self.maxDeployments) nested deployments (copies of copies included); Azure keeps at most \(Self.maxDeployments) deployments in a resource group's history and fails the next", path: path,
                                 limit: .deployments(Self.maxDeployments))
            }
        }
        let units: Int
        if let known = resourceUnits[path] {
            units = known
        } else {
            var measured = 0
            _ = Self.measure(item, units: &measured, limit: Self.totalBudget, depth: 0)
            units = measured
            resourceUnits[path] = units
        }
        try charge(units)
    }

    /// `value` after checking it is at most `maxValueUnits` and nests at most 128 levels, and
    /// charging its size to the budget.
    func produced(_ value: JSON) throws(ARMFailure) -> JSON {
        var units = 0
        guard Self.measure(value, units: &units, limit: Self.maxValueUnits, depth: 0) else {
            throw ARMFailure("the expression produces a value larger than \(Self.maxValueUnits) units (elements, members or 64-byte pieces of text) or nested deeper than 128 levels; allowed smaller values",
                             limit: .valueSize(Self.maxValueUnits))
        }
        try charge(units)
        return value
    }

    /// Adds `value`'s size to `units`; false once it passes `limit` or nests past 128 levels
    /// (the walk stops there, whatever the value's real size).
    static func measure(_ value: JSON, units: inout Int, limit: Int, depth: Int) -> Bool {
        guard depth < 128 else { return false }
        units += 1
        switch value {
        case .string(let s): units += s.utf8.count >> 6
        case .array(let items):
            for item in items { guard measure(item, units: &units, limit: limit, depth: depth + 1) else { return false } }
        case .object(let members):
            for item in members.values { guard measure(item, units: &units, limit: limit, depth: depth + 1) else { return false } }
        case .ordered(let fields):
            for field in fields { guard measure(field.value, units: &units, limit: limit, depth: depth + 1) else { return false } }
        default: break
        }
        return units <= limit
    }
}
