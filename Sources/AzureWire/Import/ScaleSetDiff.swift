import Formats
public import UpgradeEngine

/// What changes between two versions of one scale set, and what Azure does about it in the
/// mode the new version has: a model change (image, size, the health extension) starts a rolling
/// upgrade now (Rolling), waits for the instances to be upgraded by hand (Manual) or upgrades
/// every instance at once (Automatic); a policy change applies to the next upgrade only; a
/// capacity change creates or deletes instances; zones or orchestration replace the scale set.
public struct ScaleSetDiff: Equatable, Sendable {
    /// One field that differs, with both values as text (nil: absent).
    public struct Change: Equatable, Sendable {
        /// The field's path, as ARM names it (`virtualMachineProfile.storageProfile.imageReference.version`).
        public var field: String
        /// What part of the scale set it is.
        public var kind: Kind
        /// The value before; nil when absent.
        public var before: String?
        /// The value after; nil when absent.
        public var after: String?
    }

    /// What part of the scale set a field is.
    public enum Kind: String, Equatable, Sendable {
        /// The VM model: image, size, extensions (instances change when upgraded).
        case model
        /// The upgrade policy: how the next upgrade goes.
        case policy
        /// How many instances.
        case capacity
        /// Zones, orchestration, fault domains: Azure cannot change them in place.
        case placement
    }

    /// What follows from the change in the new version's mode.
    public enum Consequence: String, Equatable, Sendable, CaseIterable {
        /// Rolling: a rolling upgrade of every instance starts now.
        case rollingUpgradeNow = "rollingUpgradeNow"
        /// Manual: the model changes, and the instances wait until someone upgrades them.
        case waitsForManualUpgrade = "waitsForManualUpgrade"
        /// Automatic: every instance is upgraded at once.
        case allAtOnce = "allAtOnce"
        /// Only how the next upgrade goes changes; no instance restarts.
        case nextUpgradePolicyOnly = "nextUpgradePolicyOnly"
        /// Instances are created or deleted.
        case capacityChange = "capacityChange"
        /// The scale set is replaced (deleted and created again).
        case replacement = "replacement"
        /// Nothing the fleet would notice.
        case none = "none"
    }

    /// Every field that differs, model first.
    public var changes: [Change]
    /// What follows, in the order it happens.
    public var consequences: [Consequence]
    /// The model fields that change, as `update_model` takes them (a key absent after is "").
    public var modelChanges: [String: String]
    /// Whether the model change takes instances down (anything but extensions and tags).
    public var disruptive: Bool

    /// Whether the model changes.
    public var modelChange: Bool { changes.contains { $0.kind == .model } }

    /// The difference from `before` to `after`; `replaced`: the tool says it replaces the
    /// scale set (Terraform's `["delete", "create"]`).
    public init(before: ScaleSetDefinition, after: ScaleSetDefinition, replaced: Bool = false) {
        var found: [Change] = []
        func add(_ field: String, _ kind: Kind, _ a: String?, _ b: String?) { if a != b { found.append(Change(field: field, kind: kind, before: a, after: b)) } }
        let profile = "virtualMachineProfile"
        var model: [String: String] = [:]
        for key in Set(before.model.keys).union(after.model.keys).sorted() where before.model[key] != after.model[key] {
            let field = key.hasPrefix("imageReference.") ? "\(profile).storageProfile.\(key)" : key.hasPrefix("sku.") ? key : "\(profile).\(key)"
            add(field, .model, before.model[key], after.model[key])
            model[key] = after.model[key] ?? ""
        }
        let oldExtension = before.healthExtension.map { Self.flatten($0.json) } ?? [:]
        let newExtension = after.healthExtension.map { Self.flatten($0.json) } ?? [:]
        for key in Set(oldExtension.keys).union(newExtension.keys).sorted() {
            add("\(profile).extensionProfile.applicationHealth.\(key)", .model, oldExtension[key], newExtension[key])
        }
        if oldExtension != newExtension {
            // An extension changes in place: the instances keep running.
            model["extensions"] = newExtension.isEmpty ? "" : "ApplicationHealth " + newExtension.keys.sorted().map { "\($0)=\(newExtension[$0]!)" }.joined(separator: " ")
        }
        let oldPolicy = Self.flatten(before.policy.json), newPolicy = Self.flatten(after.policy.json)
        for key in Set(oldPolicy.keys).union(newPolicy.keys).sorted() { add("upgradePolicy.\(key)", .policy, oldPolicy[key], newPolicy[key]) }
        add("sku.capacity", .capacity, String(before.capacity), String(after.capacity))
        add("zones", .placement, before.zones.isEmpty ? nil : before.zones.joined(separator: ","), after.zones.isEmpty ? nil : after.zones.joined(separator: ","))
        add("orchestrationMode", .placement, before.orchestration.rawValue, after.orchestration.rawValue)
        add("platformFaultDomainCount", .placement, before.faultDomainCount.map(String.init), after.faultDomainCount.map(String.init))
        changes = found.filter { $0.kind == .model } + found.filter { $0.kind != .model }
        modelChanges = model
        disruptive = ChangeRules.isDisruptive(from: before.model, to: before.model.merging(model) { $1 })
        var follows: [Consequence] = []
        if replaced || found.contains(where: { $0.kind == .placement }) {
            follows.append(.replacement)
        } else {
            if before.capacity != after.capacity { follows.append(.capacityChange) }
            if !model.isEmpty {
                switch after.policy.mode {
                case .rolling: follows.append(.rollingUpgradeNow)
                case .manual: follows.append(.waitsForManualUpgrade)
                case .automatic: follows.append(.allAtOnce)
                }
            } else if found.contains(where: { $0.kind == .policy }) {
                follows.append(.nextUpgradePolicyOnly)
            }
        }
        consequences = follows.isEmpty ? [.none] : follows
    }

    /// `value`'s leaves by dotted path, each as its JSON text (strings unquoted).
    static func flatten(_ value: JSON, prefix: String = "") -> [String: String] {
        switch value {
        case .object(let fields):
            var out: [String: String] = [:]
            for (key, field) in fields { out.merge(flatten(field, prefix: prefix.isEmpty ? key : "\(prefix).\(key)")) { $1 } }
            return out
        case .ordered(let fields):
            var out: [String: String] = [:]
            for field in fields { out.merge(flatten(field.value, prefix: prefix.isEmpty ? field.key : "\(prefix).\(field.key)")) { $1 } }
            return out
        case .string(let text): return [prefix: text]
        case .null: return [:]
        default: return [prefix: value.serialized(pretty: false)]
        }
    }
}
