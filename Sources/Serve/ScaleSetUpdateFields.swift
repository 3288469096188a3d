import Formats
import UpgradeEngine

/// Every field of a PUT or PATCH of the scale set, or of a PUT of one of its VMs, is either
/// applied or refused, never dropped (issue 55): a field the update applies is read by its route
/// (`ScaleSetUpdate`, the VM's `protectionPolicy`); any other must say what GET shows (a client
/// that read the resource and sends it back), else it is refused, 400 `InvalidParameter` naming
/// its path.
struct UpdateFields {
    /// The fields (paths from the body's root, any case) whose value the route reads and applies.
    let applied: Set<String>
    /// Read-only fields: the platform sets them and ignores what a request says (ARM's rule for
    /// read-only properties), so a value read earlier and sent back is no change; so is every
    /// `provisioningState` (the extensions' too).
    let readOnly: Set<String>
    /// What the route applies, as the refusal names it.
    let appliedText: String

    /// The scale set's PUT and PATCH.
    static let scaleSet = UpdateFields(
        applied: ["sku.capacity", "sku.name", "sku.tier", "properties.upgradePolicy", "properties.lifecycleHooksProfile",
                  "properties.virtualMachineProfile.storageProfile.imageReference.publisher",
                  "properties.virtualMachineProfile.storageProfile.imageReference.offer",
                  "properties.virtualMachineProfile.storageProfile.imageReference.sku",
                  "properties.virtualMachineProfile.storageProfile.imageReference.version"],
        readOnly: ["id", "name", "type", "etag", "properties.provisioningState", "properties.timeCreated", "properties.uniqueId",
                   "properties.virtualMachineProfile.storageProfile.imageReference.exactVersion"],
        appliedText: "sku.capacity, sku.name, sku.tier, upgradePolicy, lifecycleHooksProfile and imageReference's publisher, offer, sku and version")

    /// A VM's PUT (`az vmss update --instance-id … --protect-from-scale-in`).
    static let vm = UpdateFields(
        applied: ["properties.protectionPolicy.protectFromScaleIn", "properties.protectionPolicy.protectFromScaleSetActions"],
        readOnly: ["id", "name", "type", "etag", "instanceId", "properties.latestModelApplied", "properties.vmId", "properties.provisioningState",
                   "properties.instanceView", "properties.storageProfile.imageReference.exactVersion"],
        appliedText: "properties.protectionPolicy's protectFromScaleIn and protectFromScaleSetActions")

    /// Every field of `body` that is neither applied, read-only, nor what `served` (the resource
    /// as GET shows it now) says; each a problem naming its path, in sorted order.
    func problems(_ body: JSON, served: JSON) -> [Problem] {
        var found: [Problem] = []
        walk(body, served: served, path: "", into: &found)
        return found
    }

    private func walk(_ value: JSON, served: JSON?, path: String, into found: inout [Problem]) {
        let lowered = path.lowercased()
        if applied.contains(where: { $0.lowercased() == lowered }) {
            // A null where GET shows a value would remove it: nothing the update applies.
            if value == .null, let served, served != .null {
                found.append(Problem(field: path, "null would remove it (GET shows \(served.brief(120))), which rehearse serve does not apply; send a value, or leave it out"))
            }
            return
        }
        if readOnly.contains(where: { $0.lowercased() == lowered }) || lowered.hasSuffix(".provisioningstate") { return }
        if case .object(let members) = value {
            for key in members.keys.sorted() {
                walk(members[key]!, served: served?.member(key), path: path.isEmpty ? key : "\(path).\(key)", into: &found)
            }
            return
        }
        // A list as GET shows it, item by item (a client drops an item's read-only members).
        if case .array(let items) = value, case .array(let shown)? = served, items.count == shown.count, !items.isEmpty {
            for (index, item) in items.enumerated() { walk(item, served: shown[index], path: "\(path)[\(index)]", into: &found) }
            return
        }
        // Nothing asked: a null or an empty list where GET shows nothing.
        if served == nil && (value == .null || value == .array([])) { return }
        if let served, value == served { return }
        let shown = served.map { "GET shows \($0.brief(120))" } ?? "GET shows nothing there"
        found.append(Problem(field: path, "\(value.brief(120)) is not applied by rehearse serve (\(shown)); it applies \(appliedText); send any other field as GET shows it, or leave it out"))
    }
}
