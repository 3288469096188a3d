public import Formats
import UpgradeEngine

/// A scale set as a Terraform plan changes it: `resource_changes[].change.before` and `after`
/// (`terraform show -json` of a saved plan), each read as `TerraformPlan` reads a resource, with
/// the plan's actions (`["update"]`, `["create"]`, `["delete", "create"]`).
public struct ScaleSetChange: Sendable {
    /// The scale set before the change; nil when the plan creates it.
    public var before: ImportedScaleSet?
    /// The scale set after the change; nil when the plan deletes it.
    public var after: ImportedScaleSet?
    /// Terraform's actions for the resource.
    public var actions: [String]
    /// The resource's address.
    public var address: String
}

extension ScaleSetImport {
    /// Whether `value` is a Terraform plan with `resource_changes` (the shape `diff` reads both
    /// sides from).
    public static func isTerraformChange(_ value: JSON) -> Bool {
        if format(of: value) == .terraformPlan, case .array? = value.member("resource_changes") { return true } else { return false }
    }

    /// The change a Terraform plan makes to one scale set: `resource` chooses among several by
    /// address; every problem names its path.
    public static func terraformChange(_ plan: JSON, resource chosen: String?) throws(ValidationFailure) -> ScaleSetChange {
        guard case .array(let changes)? = plan.member("resource_changes") else {
            throw ValidationFailure([Problem(field: "resource_changes", "is missing: a plan saved with terraform plan -out and shown with terraform show -json holds it")])
        }
        var found: [(index: Int, address: String, type: String, change: JSON)] = []
        for (i, change) in changes.enumerated() {
            guard case .string(let type)? = change.member("type"), TerraformPlan.types.contains(type), case .string(let address)? = change.member("address"),
                  let body = change.member("change"), body.object != nil else { continue }
            found.append((i, address, type, body))
        }
        guard !found.isEmpty else { throw ValidationFailure([Problem(field: "resource_changes", "holds no \(TerraformPlan.types.joined(separator: ", ")) resource")]) }
        let picked = found[try TerraformPlan.pick(found.map(\.address), chosen: chosen, field: "resource_changes")]
        var actions: [String] = []
        if case .array(let items)? = picked.change.member("actions") { actions = items.compactMap { if case .string(let s) = $0 { return s } else { return nil } } }
        var problems: [Problem] = []
        func side(_ key: String) -> ImportedScaleSet? {
            guard let values = picked.change.member(key), values.object != nil else { return nil }
            var reader = TerraformPlan.Reader(path: "resource_changes[\(picked.index)].change.\(key)", flexible: picked.type.contains("orchestrated"))
            let definition = reader.read(values)
            if key == "after", let unknown = picked.change.member("after_unknown") { reader.noteUnknown(unknown, at: "") }
            problems += reader.problems
            return ImportedScaleSet(definition: definition, warnings: reader.warnings, format: .terraformPlan, resource: picked.address, document: values)
        }
        let before = side("before"), after = side("after")
        guard problems.isEmpty else { throw ValidationFailure(problems) }
        return ScaleSetChange(before: before, after: after, actions: actions, address: picked.address)
    }
}
