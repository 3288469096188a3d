import Formats
public import UpgradeEngine

/// What changes between two versions of one scale set, field by field as the whole documents
/// say (every part of `virtualMachineProfile`, modelled by rehearse or not), each classified by
/// `ChangeClassifier`'s table, and what Azure (and for a Terraform plan, azurerm) does about it in
/// the mode the new version has.
public struct ScaleSetDiff: Equatable, Sendable {
    /// One field that differs, with both values as text (nil: absent), its class and why.
    public struct Change: Equatable, Sendable {
        /// The field's path as the document names it (`virtualMachineProfile.osProfile.customData`,
        /// or a Terraform attribute such as `source_image_reference.version`).
        public var field: String
        /// What a change of it is.
        public var kind: ChangeClass
        /// The value before; nil when absent.
        public var before: String?
        /// The value after; nil when absent.
        public var after: String?
        /// Why, one sentence, and the source that says so.
        public var why: String
        /// The page or code the sentence is from.
        public var source: String
        /// Terraform: azurerm rolls the instances itself on apply under Manual for this field.
        public var terraformRolls: Bool
    }

    /// What follows from the change in the new version's mode.
    public enum Consequence: String, Equatable, Sendable, CaseIterable {
        /// Rolling: a rolling upgrade of every instance starts now.
        case rollingUpgradeNow = "rollingUpgradeNow"
        /// Manual: the model changes, and the instances wait until someone upgrades them.
        case waitsForManualUpgrade = "waitsForManualUpgrade"
        /// Manual under Terraform with azurerm's defaults: `terraform apply` itself updates and
        /// reimages each out-of-date instance, one at a time.
        case terraformRollsEachInstance = "terraformRollsEachInstance"
        /// Automatic: every instance is upgraded at once.
        case allAtOnce = "allAtOnce"
        /// Zones are added in place; existing instances stay.
        case zonesAddedInPlace = "zonesAddedInPlace"
        /// Only how the next upgrade goes changes; no instance restarts.
        case nextUpgradePolicyOnly = "nextUpgradePolicyOnly"
        /// Only the scale set resource changes (tags, repairs, …); no instance restarts.
        case scaleSetOnly = "scaleSetOnly"
        /// Instances are created or deleted.
        case capacityChange = "capacityChange"
        /// The scale set is replaced (deleted and created again).
        case replacement = "replacement"
        /// Nothing the fleet would notice.
        case none = "none"
    }

    /// Every field that differs, model first, then in path order.
    public var changes: [Change]
    /// What follows, in the order it happens.
    public var consequences: [Consequence]
    /// The model fields that change, as `update_model` takes them (a key absent after is "").
    public var modelChanges: [String: String]
    /// Whether the model change takes instances down (anything but extensions and data disks).
    public var disruptive: Bool
    /// The fields whose change replaces the scale set (empty when it is not replaced, or when a
    /// Terraform plan replaces it for no field rehearse knows: then `actions` say why).
    public var replacedBy: [Change]
    /// Fields that would force a new scale set, which this Terraform plan updates in place
    /// anyway (its `actions` are respected, never overruled).
    public var keptByPlan: [Change]
    /// A Terraform plan's actions for the resource; nil for two documents.
    public var actions: [String]?

    /// Whether the model changes.
    public var modelChange: Bool { changes.contains { $0.kind.isModel } }

    /// The difference from `before` to `after` (two versions of one scale set, each with its
    /// whole document); `actions`: a Terraform plan's actions for the resource, which decide
    /// whether it is replaced (never overruled by the table).
    public init(before: ImportedScaleSet, after: ImportedScaleSet, actions: [String]? = nil) {
        let terraform = before.format == .terraformPlan || after.format == .terraformPlan
        let table = terraform ? ChangeClassifier.terraform : ChangeClassifier.arm
        let old = DocumentLeaves.leaves(before.document ?? .null, terraform: terraform)
        let new = DocumentLeaves.leaves(after.document ?? .null, terraform: terraform)
        var found: [Change] = []
        // Two kinds of document (az vmss show against a template): what the platform fills in
        // (defaults, computed fields) is absent from the template without being removed, so a
        // field absent from AFTER is a change only when its whole extension is gone.
        let mixed = before.format != after.format
        for field in Set(old.keys).union(new.keys).sorted() where old[field] != new[field] {
            if mixed, new[field] == nil, !Self.wholeExtensionRemoved(field, from: new) { continue }
            // Name and location tell the scale set apart (checked before a diff is made).
            if !terraform, ["name", "location"].contains(field.lowercased()) { continue }
            let rule = ChangeClassifier.rule(for: field, in: table)
            guard rule.kind != .nothing else { continue }
            var change = Change(field: field, kind: rule.kind, before: old[field], after: new[field], why: rule.why, source: rule.source,
                                terraformRolls: rule.terraformRolls)
            if rule.kind == .zonesAdded {
                let removed = Set(before.definition.zones).subtracting(after.definition.zones)
                if !removed.isEmpty {
                    change.kind = .replacement
                    // The zones are the field's values; the sentence holds no document text.
                    change.why = terraform
                        ? "a zone is removed: azurerm forces a new scale set when a zone is removed"
                        : "a zone is removed: Azure adds zones to a scale set but does not remove them"
                }
            }
            found.append(change)
        }
        // Zones compare as a set, whatever their order.
        if Set(before.definition.zones) == Set(after.definition.zones) { found.removeAll { $0.field.lowercased() == "zones" } }
        changes = found.filter { $0.kind.isModel } + found.filter { !$0.kind.isModel }
        var model: [String: String] = [:]
        for change in found where change.kind.isModel { model[Self.modelKey(change.field, terraform: terraform)] = change.after ?? "" }
        // Extensions and data disks are one in-place attribute each, whatever leaves changed.
        for key in ["extensions", "dataDisks"] where model[key] != nil {
            model[key] = found.filter { Self.modelKey($0.field, terraform: terraform) == key }.map { "\($0.field)=\($0.after ?? "")" }.joined(separator: " ")
        }
        modelChanges = model
        disruptive = ChangeRules.isDisruptive(from: [:], to: model)
        self.actions = actions
        let forced = found.filter { $0.kind == .replacement }
        let replaced: Bool
        if let actions {
            replaced = actions.contains("delete") && actions.contains("create")
            replacedBy = replaced ? forced : []
            keptByPlan = replaced ? [] : forced
        } else {
            replaced = !forced.isEmpty
            replacedBy = forced
            keptByPlan = []
        }
        consequences = Self.consequences(found, mode: after.definition.policy.mode, replaced: replaced, terraform: terraform,
                                         capacity: before.definition.capacity != after.definition.capacity)
    }

    static func consequences(_ found: [Change], mode: UpgradeMode, replaced: Bool, terraform: Bool, capacity: Bool) -> [Consequence] {
        guard !replaced else { return [.replacement] }
        var follows: [Consequence] = []
        if capacity { follows.append(.capacityChange) }
        if found.contains(where: { $0.kind == .zonesAdded }) { follows.append(.zonesAddedInPlace) }
        if found.contains(where: { $0.kind.isModel }) {
            switch mode {
            case .rolling: follows.append(.rollingUpgradeNow)
            case .manual: follows.append(terraform && found.contains { $0.kind.isModel && $0.terraformRolls } ? .terraformRollsEachInstance : .waitsForManualUpgrade)
            case .automatic: follows.append(.allAtOnce)
            }
        } else if found.contains(where: { $0.kind == .policy }) {
            follows.append(.nextUpgradePolicyOnly)
        }
        if follows.isEmpty, found.contains(where: { $0.kind == .scaleSetLevel || $0.kind == .tags || $0.kind == .replacement }) { follows.append(.scaleSetOnly) }
        return follows.isEmpty ? [.none] : follows
    }

    /// The engine's model attribute for a changed model field: the image and the size as the
    /// starters name them, extensions and data disks as one in-place attribute each, anything
    /// else by its path (a restart).
    static func modelKey(_ field: String, terraform: Bool) -> String {
        let bare = field.replacingBrackets().lowercased()
        if terraform {
            if bare.hasPrefix("extension") { return "extensions" }
            if bare.hasPrefix("data_disk") { return "dataDisks" }
            if bare == "sku" { return "sku.name" }
            if bare.hasPrefix("source_image_reference.") { return "imageReference." + bare.dropFirst("source_image_reference.".count) }
            if bare == "source_image_id" { return "imageReference.id" }
            return field
        }
        if bare.hasPrefix("virtualmachineprofile.extensionprofile") { return "extensions" }
        if bare.hasPrefix("virtualmachineprofile.storageprofile.datadisks") { return "dataDisks" }
        if bare.hasPrefix("virtualmachineprofile.storageprofile.imagereference.") {
            return "imageReference." + field.split(separator: ".").last!
        }
        if bare == "sku.name" || bare == "sku.tier" { return bare == "sku.name" ? "sku.name" : "sku.tier" }
        return field
    }

    /// Whether `field` lies in an extension (`…extensions[NAME]…`) none of whose fields `leaves` has.
    static func wholeExtensionRemoved(_ field: String, from leaves: [String: String]) -> Bool {
        let marker = Array("extensions[")
        let characters = Array(field)
        guard let start = (0...max(0, characters.count - marker.count)).first(where: { characters.count >= marker.count && Array(characters[$0..<$0 + marker.count]) == marker }),
              let close = characters[(start + marker.count)...].firstIndex(of: "]") else { return false }
        let prefix = String(characters[...close])
        return !leaves.keys.contains { $0.hasPrefix(prefix) }
    }

    /// Why `after` is not another version of `before`: another name or location (each named),
    /// or nil when it is the same scale set. Terraform plans change one address, so only two
    /// documents are compared.
    public static func otherScaleSet(before: ImportedScaleSet, after: ImportedScaleSet) -> String? {
        var differences: [String] = []
        if before.definition.name.lowercased() != after.definition.name.lowercased() {
            differences.append("name \(before.definition.name) → \(after.definition.name)")
        }
        // Azure names a region either way: "West Europe" is westeurope.
        func place(_ s: String) -> String { String(s.lowercased().filter { !$0.isWhitespace }) }
        // Only locations the documents write are compared (a missing one is no other place).
        if case .string(let first)? = before.document?.member("location"), case .string(let second)? = after.document?.member("location"),
           place(first) != place(second) {
            differences.append("location \(first) → \(second)")
        }
        return differences.isEmpty ? nil : differences.joined(separator: ", ")
    }
}
