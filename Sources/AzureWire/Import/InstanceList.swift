public import Formats
public import UpgradeEngine

/// `az vmss list-instances` output (a list; `--expand instanceView` adds the fault and update
/// domains) or the REST list (`{ "value": [...] }`, fields under `properties`): each instance's
/// id (`instanceId`, or the end of its resource id), zone, domains, whether it runs the latest
/// model, and its protection policy.
public enum InstanceList {
    /// Whether `value` looks like an instance list.
    public static func matches(_ value: JSON) -> Bool {
        if let (body, _) = ScaleSetImport.restExampleBody(value) { return matches(body) }
        let items: [JSON]
        switch value {
        case .array(let list): items = list
        default:
            guard case .array(let list)? = value.member("value") else { return false }
            items = list
        }
        return items.first.map { $0.member("instanceId") != nil || $0.field("properties")?.member("instanceId") != nil || idFromResourceID($0) != nil } ?? true
    }

    /// The instance id at the end of a scale set VM's resource id (`…/virtualMachines/3`).
    static func idFromResourceID(_ item: JSON) -> Int? {
        guard case .string(let id)? = item.member("id") else { return nil }
        let parts = id.split(separator: "/")
        guard parts.count >= 2, parts[parts.count - 2].lowercased() == "virtualmachines" else { return nil }
        return Int(parts[parts.count - 1])
    }

    /// The instances, every problem at once with its path (`[3].instanceId`).
    /// A REST list page (`{ "value": [...], "nextLink": ... }`) must be the last one: a page with
    /// a `nextLink` leaves instances out. A REST API example is read from its response's body.
    public static func read(_ value: JSON) throws(ValidationFailure) -> [ExistingInstance] {
        if let (body, path) = ScaleSetImport.restExampleBody(value) {
            do { return try read(body) } catch { throw ValidationFailure(error.problems.map { Problem(field: "\(path).\($0.field)", $0.message) }) }
        }
        if case .string(let next)? = value.field("nextLink"), !next.isEmpty {
            throw ValidationFailure([Problem(field: "nextLink", "this is one page of a longer list: the instances on the next pages are missing; join every page's value (az vmss list-instances does)")])
        }
        let prefix = value.member("value") == nil ? "" : "value"
        guard case .array(let items)? = value.member("value") ?? (value.object == nil ? value : nil) else {
            throw ValidationFailure([Problem(field: "(instances)", "is not a list of instances; allowed the output of az vmss list-instances")])
        }
        var problems: [Problem] = []
        var fleet: [ExistingInstance] = []
        // A Flexible scale set's instances are named VMs: their instanceId is the name (SPEC §6b).
        // Such a list numbers its instances 0, 1, … in its order and keeps the names.
        let named = items.contains { item in
            // Digits alone are an instance number, however long (one past 64 bits is out of range, not a name).
            if case .string(let text)? = item.field("instanceId") ?? (item.field("properties") ?? item).field("instanceId") {
                return !text.isEmpty && !text.allSatisfy { $0.isASCII && $0.isNumber }
            }
            return false
        }
        for (i, item) in items.enumerated() {
            let at = "\(prefix)[\(i)]"
            let flat = item.field("properties") ?? item
            var id: Int?, name: String?
            switch item.field("instanceId") ?? flat.field("instanceId") {
            case .string(let text)? where named:
                guard text.count <= 64, text.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "-_.".contains($0)) }) else {
                    problems.append(Problem(field: "\(at).instanceId", "\(JSON.string(String(text.prefix(80))).serialized(pretty: false)) is not a VM name; allowed 1–64 letters, digits, '-', '_' and '.'"))
                    continue
                }
                guard !fleet.contains(where: { $0.name == text }) else {
                    problems.append(Problem(field: "\(at).instanceId", "\(text) is listed twice"))
                    continue
                }
                (id, name) = (i, text)
            case .string(let text)?: id = Int(text)
            case .int(let n)? where !named: id = n
            default: id = named ? nil : idFromResourceID(item)
            }
            if !named, let given = item.field("instanceId") ?? flat.field("instanceId"), id == nil || id! > Int(Int32.max),
               given.isNumberText {
                problems.append(Problem(field: "\(at).instanceId", "\(String(given.serialized(pretty: false).prefix(80))) is out of range; "
                                            + "allowed an instance number from 0 to \(Int32.max)"))
                continue
            }
            guard let id, id >= 0 else {
                problems.append(Problem(field: "\(at).instanceId", named ? "is missing: a Flexible scale set's list names every VM" : "is missing or not a whole number such as \"3\""))
                continue
            }
            var vm = ExistingInstance(id: id, name: name)
            if case .array(let zones)? = item.field("zones"), case .string(let zone)? = zones.first { vm.zone = zone }
            let view = flat.field("instanceView")
            if case .int(let fd)? = view?.field("platformFaultDomain") { vm.faultDomain = fd }
            if case .int(let ud)? = view?.field("platformUpdateDomain") { vm.updateDomain = ud }
            switch flat.field("latestModelApplied") {
            case .bool(let b)?: vm.latestModelApplied = b
            case nil: break
            case let other?: problems.append(Problem(field: "\(at).latestModelApplied", "\(other.serialized(pretty: false)) is not true or false"))
            }
            if let policy = flat.field("protectionPolicy") {
                vm.protectFromScaleSetActions = policy.field("protectFromScaleSetActions") == .bool(true)
                vm.protectFromScaleIn = policy.field("protectFromScaleIn") == .bool(true)
            }
            fleet.append(vm)
        }
        guard problems.isEmpty else { throw ValidationFailure(problems) }
        return fleet
    }
}

extension JSON {
    /// A number, or a string of ASCII digits alone (an instance number written as text).
    fileprivate var isNumberText: Bool {
        switch self {
        case .int, .double: return true
        case .string(let text): return !text.isEmpty && text.allSatisfy { $0.isASCII && $0.isNumber }
        default: return false
        }
    }
}
