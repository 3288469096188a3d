import Formats

/// Choosing one scale set from a list document (`az vmss list`, a REST list page).
enum ScaleSetListing {
    /// The scale set `resource` names among `items` (the only one when nil), with its path.
    static func pick(_ items: [JSON], prefix: String, resource: String?) throws(ValidationFailure) -> (JSON, String) {
        let names = items.map { item -> String in if case .string(let n)? = item.member("name") { return n } else { return "" } }
        func path(_ i: Int) -> String { "\(prefix)[\(i)]" }
        if let resource {
            guard let i = names.firstIndex(where: { $0.lowercased() == resource.lowercased() }) else {
                var problem = Problem(at: .setting(.resource, value: resource), "no scale set of that name; the list has \(names.joined(separator: ", "))")
                problem.allowed = names
                throw ValidationFailure([problem])
            }
            return (items[i], path(i))
        }
        guard items.count == 1 else {
            var problem = Problem(field: prefix.isEmpty ? "(list)" : prefix, "lists \(items.count) scale sets (\(names.joined(separator: ", "))); choose one")
            problem.remedy = Remedy(.resource, placeholder: "NAME", scriptForm: "resource = \"NAME\"")
            problem.allowed = names
            throw ValidationFailure([problem])
        }
        return (items[0], path(0))
    }
}
