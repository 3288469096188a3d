public import Formats
public import UpgradeEngine

/// Lifecycle hooks on the wire (SPEC §6b; Compute api-version 2025-11-01): the scale set's
/// `lifecycleHooksProfile`, the `lifecycleHookEvents/{name}` resource as GET and LIST answer it,
/// and the body of its PATCH (`az vmss lifecycle-hook-event approve/reject/update`).
public enum LifecycleHooksWire {
    /// Reads `lifecycleHooksProfile` (`{"lifecycleHooks": [{type, waitDuration, defaultAction}]}`):
    /// the hooks and every problem at once, fields named under `prefix`. `waitDuration` left out
    /// takes the type's default; `defaultAction` left out is Approve (azure-cli #33328). The
    /// limits (`ScaleSetDefinition.hookProblems`) are the definition's check.
    public static func profile(_ value: JSON, prefix: String = "lifecycleHooksProfile") -> ([LifecycleHook], [Problem]) {
        var reader = FieldReader(prefix: prefix)
        guard let members = value.object else {
            return ([], [Problem(field: prefix, "is \(value.kindName); expected an object with lifecycleHooks")])
        }
        reader.refuseUnknown(members, known: ["lifecycleHooks"])
        guard let list = value.field("lifecycleHooks") else { return ([], reader.problems) }
        guard case .array(let items) = list else {
            reader.problem("lifecycleHooks", "is \(list.kindName); expected a list of {type, waitDuration, defaultAction}")
            return ([], reader.problems)
        }
        var hooks: [LifecycleHook] = []
        for (i, item) in items.enumerated() {
            let path = "lifecycleHooks[\(i)]"
            guard reader.object(item, path, known: ["type", "waitDuration", "defaultAction"]) else { continue }
            let allowedTypes = LifecycleHookType.allCases.map(\.rawValue).joined(separator: ", ")
            guard case .string(let text)? = item.field("type"), let type = LifecycleHookType(parsing: text) else {
                let given = item.field("type").map { $0.serialized(pretty: false) + " is not a hook type" } ?? "is required"
                reader.problem("\(path).type", "\(given); allowed \(allowedTypes)")
                continue
            }
            var hook = LifecycleHook(type: type)
            if let wait = reader.duration(item, path, "waitDuration") { hook.waitDuration = wait }
            if let action = item.field("defaultAction") {
                if case .string(let text) = action, let parsed = LifecycleHookAction(parsing: text) { hook.defaultAction = parsed } else {
                    reader.problem("\(path).defaultAction", "\(action.serialized(pretty: false)) is not an action; allowed Approve, Reject")
                }
            }
            hooks.append(hook)
        }
        return (hooks, reader.problems)
    }

    /// The profile as a scale set's `properties.lifecycleHooksProfile` shows it.
    public static func profileJSON(_ hooks: [LifecycleHook]) -> JSON {
        .object(["lifecycleHooks": .array(hooks.map { hook in
            .object(["type": .string(hook.type.rawValue), "waitDuration": .string(ISODuration.format(hook.waitDuration)),
                     "defaultAction": .string(hook.defaultAction.rawValue)])
        })])
    }

    /// The event resource as GET answers it: `id`, `name` and `properties` (`type`, `timeCreated`,
    /// `waitUntil`, `maxWaitUntil`, `defaultAction`, `targetResources[]` with `resource.id` and
    /// `actionState`, `state`), times as ISO 8601 instants after `epoch`. `scaleSetID` is the
    /// scale set's ARM id; a target's id is `…/virtualMachines/{instance id or VM name}`.
    /// `abandoned`: the platform superseded the event and the client reads an api-version that
    /// has `Abandoned` (`APIVersion.abandonedSince`): its `state` and its undecided targets'
    /// `actionState` are `Abandoned`; without it, `Completed` and the targets as they stood.
    public static func eventJSON(_ event: LifecycleHookEvent, scaleSetID: String, orchestration: Orchestration,
                                 epoch: Int = Timestamp.defaultEpoch, abandoned: Bool = false) -> JSON {
        let targets = event.targets.map { target -> JSON in
            let id = target.instance.map { "\(scaleSetID)/virtualMachines/\(orchestration == .flexible ? target.name : String($0))" } ?? scaleSetID
            let state = abandoned && target.actionState == .waiting ? "Abandoned" : target.actionState.rawValue
            return .object(["resource": .object(["id": .string(id)]), "actionState": .string(state)])
        }
        let properties: [String: JSON] = [
            "type": .string(event.type.rawValue),
            "timeCreated": .string(Timestamp.format(event.timeCreated, epoch: epoch)),
            "waitUntil": .string(Timestamp.format(event.waitUntil, epoch: epoch)),
            "maxWaitUntil": .string(Timestamp.format(event.maxWaitUntil, epoch: epoch)),
            "defaultAction": .string(event.defaultAction.rawValue),
            "targetResources": .array(targets),
            "state": .string(abandoned && !event.isActive ? "Abandoned" : event.state),
        ]
        return .object(["name": .string(event.name), "id": .string("\(scaleSetID)/lifecycleHookEvents/\(event.name)"),
                        "properties": .object(properties)])
    }

    /// LIST's body: `{"value": [event…], "nextLink": null}` (the List example's shape), only Active ones when `$filter` is
    /// `properties/state eq 'Active'`.
    /// `abandoned`: the names of the events shown `Abandoned` (see `eventJSON`).
    public static func listJSON(_ events: [LifecycleHookEvent], activeOnly: Bool, scaleSetID: String, orchestration: Orchestration,
                                epoch: Int = Timestamp.defaultEpoch, abandoned: Set<String> = []) -> JSON {
        .object(["value": .array(events.filter { !activeOnly || $0.isActive }.map {
            eventJSON($0, scaleSetID: scaleSetID, orchestration: orchestration, epoch: epoch, abandoned: abandoned.contains($0.name))
        }), "nextLink": .null])
    }

    /// Reads a PATCH body of an event: `properties.targetResources[]` (each `resource.id` ending
    /// in an instance id, or a Flexible VM name, and `actionState` Approved or Rejected) and
    /// `properties.waitUntil` (an instant after `epoch`, as a time after the event's creation).
    /// `nameToID` turns a VM name into its instance id (nil: no such instance).
    /// A target id or name, or an answer given twice for one target, is named when it cannot be
    /// one answer: an id that is not a target, two answers that disagree. `checkingEcho` (the
    /// event is Active) compares read-only members with the event's; a Completed event's PATCH
    /// is refused for its state instead (a client read it while it was Active).
    public static func patch(_ body: JSON, event: LifecycleHookEvent, epoch: Int = Timestamp.defaultEpoch, checkingEcho: Bool = true,
                             scaleSetName: String? = nil, nameToID: (String) -> Int?) throws(ValidationFailure) -> HookResponse {
        var reader = FieldReader(prefix: "properties")
        // The resource's own read-only members may come back as a client read them; anything
        // else beside `properties` is named, not passed over.
        var outer = FieldReader(prefix: "")
        if let top = body.object { outer.refuseUnknown(top, known: ["properties", "id", "name", "type"]) }
        let unknown = outer.problems
        guard let properties = body.field("properties"), let members = properties.object else {
            throw ValidationFailure(unknown + [Problem(field: "properties", "is required: an object with targetResources and/or waitUntil")])
        }
        guard unknown.isEmpty else { throw ValidationFailure(unknown) }
        reader.refuseUnknown(members.filter { readOnlyName($0.key) == nil }, known: ["targetResources", "waitUntil"])
        if checkingEcho { reader.checkEcho(members, of: event, epoch: epoch) }
        var approve: [Int] = [], reject: [Int] = []
        var answered: [Int: (state: HookActionState, item: Int)] = [:]
        if let list = properties.field("targetResources") {
            if case .array(let items) = list {
                for (i, item) in items.enumerated() {
                    let path = "targetResources[\(i)]"
                    guard reader.object(item, path, known: ["resource", "actionState"]) else { continue }
                    guard case .string(let id)? = item.field("resource")?.field("id"), let last = id.split(separator: "/").last else {
                        reader.problem("\(path).resource.id", "is required: the VM's resource id")
                        continue
                    }
                    // A VM id of another scale set (`…/virtualMachineScaleSets/other/virtualMachines/1`)
                    // is not this one's VM 1.
                    let segments = id.split(separator: "/")
                    if let scaleSetName, segments.count >= 3, segments[segments.count - 2].lowercased() == "virtualmachines",
                       segments[segments.count - 3].lowercased() != scaleSetName.lowercased() {
                        reader.problem("\(path).resource.id", "is a VM of scale set \(JSON.string(String(segments[segments.count - 3])).brief()); the event's targets are VMs of \(scaleSetName)")
                        continue
                    }
                    // A Flexible VM's name first (it may look like a number), then an instance id
                    // written as Azure writes one: decimal digits, no sign, no leading zero.
                    guard let instance = nameToID(String(last)) ?? instanceID(last) else {
                        reader.problem("\(path).resource.id", "\(JSON.string(String(last)).brief()) is not an instance of this scale set")
                        continue
                    }
                    let answer: HookActionState
                    switch item.field("actionState") {
                    case .string(let s)? where s.lowercased() == "approved": answer = .approved
                    case .string(let s)? where s.lowercased() == "rejected": answer = .rejected
                    case .string(let s)? where s.lowercased() == "waiting": answer = .waiting
                    case let other:
                        reader.problem("\(path).actionState", "\(other.map { $0.brief() } ?? "nothing") is not an answer; allowed Approved, Rejected (or Waiting: no answer)")
                        continue
                    }
                    // A target sent back as GET showed it while it waits (a client that read the
                    // event, answered some targets and sent the whole resource) is not answered;
                    // it must still be one of the event's targets.
                    if answer == .waiting {
                        if !event.targets.contains(where: { $0.instance == instance }) {
                            reader.problem("\(path).resource.id", "\(JSON.string(String(last)).brief()) is not a target of event \(event.name); its targets: \(event.targets.map(\.name).joined(separator: ", "))")
                        }
                        continue
                    }
                    if let earlier = answered[instance], earlier.state != answer {
                        reader.problem("\(path).actionState", "\(answer.rawValue) contradicts targetResources[\(earlier.item)], which answers \(JSON.string(String(last)).brief()) \(earlier.state.rawValue); give a target one answer")
                        continue
                    }
                    answered[instance] = (answer, i)
                    if answer == .approved { approve.append(instance) } else { reject.append(instance) }
                }
            } else {
                reader.problem("targetResources", "is \(list.kindName); expected a list")
            }
        }
        var waitFor: Millis?
        if let until = properties.field("waitUntil") {
            if case .string(let text) = until, let instant = instant(text, epoch: epoch) {
                // The deadline it has now, sent back, does not move it.
                if instant != event.waitUntil { waitFor = instant - event.timeCreated }
            } else {
                reader.problem("waitUntil", "\(until.brief()) is not an ISO 8601 instant such as 2026-01-01T10:00:00Z")
            }
        }
        guard reader.problems.isEmpty else { throw ValidationFailure(reader.problems) }
        return HookResponse(reject: reject.isEmpty ? nil : .instances(reject), approve: approve.isEmpty ? nil : .instances(approve), waitFor: waitFor)
    }

    /// An instance id as Azure writes one: decimal digits, without a sign or a leading zero.
    static func instanceID(_ text: Substring) -> Int? {
        guard !text.isEmpty, text.utf8.allSatisfy({ (48...57).contains($0) }), text == "0" || text.first != "0" else { return nil }
        return Int(text)
    }

    /// An ISO 8601 instant (`2024-01-01T10:00:00Z`, with optional fraction, and `Z` or an offset
    /// such as `+00:00` or `-05:30`) as milliseconds after `epoch` (Unix seconds); nil when it is not one.
    public static func instant(_ text: String, epoch: Int = Timestamp.defaultEpoch) -> Millis? {
        // Each field is its ASCII digits only, in ISO 8601's widths: a sign, an expanded year or
        // a one-digit month is not an instant (Int alone reads "+002024").
        func isDigits(_ field: Substring) -> Bool { field.utf8.allSatisfy { (48...57).contains($0) } }
        func number(_ field: Substring, width: Int) -> Int? {
            field.utf8.count == width && isDigits(field) ? Int(field) : nil
        }
        var body = Substring(text), offset = 0
        if body.hasSuffix("Z") {
            body = body.dropLast()
        } else {
            let zone = body.suffix(6)
            guard zone.count == 6, let sign = zone.first, sign == "+" || sign == "-", zone.dropFirst(3).first == ":",
                  let hours = number(zone.dropFirst().prefix(2), width: 2), let minutes = number(zone.suffix(2), width: 2),
                  hours <= 23, minutes <= 59 else { return nil }
            offset = (sign == "+" ? 1 : -1) * (hours * 3600 + minutes * 60)
            body = body.dropLast(6)
        }
        let parts = body.split(separator: "T", omittingEmptySubsequences: false)
        guard parts.count == 2 else { return nil }
        let dateFields = parts[0].split(separator: "-", omittingEmptySubsequences: false)
        let date = zip(dateFields, [4, 2, 2]).map { number($0, width: $1) }
        var clock = parts[1], fraction = 0
        if let dot = clock.firstIndex(of: ".") {
            let digits = clock[clock.index(after: dot)...]
            guard !digits.isEmpty, isDigits(digits), let value = Int(digits.prefix(3)) else { return nil }
            fraction = value * [100, 10, 1][min(digits.count, 3) - 1]
            clock = clock[..<dot]
        }
        let clockFields = clock.split(separator: ":", omittingEmptySubsequences: false)
        let time = zip(clockFields, [2, 2, 2]).map { number($0, width: $1) }
        guard dateFields.count == 3, clockFields.count == 3, let y = date[0], let m = date[1], let d = date[2], let h = time[0], let mi = time[1], let s = time[2],
              (1...9999).contains(y), (1...12).contains(m), (1...daysIn(month: m, year: y)).contains(d),
              (0...23).contains(h), (0...59).contains(mi), (0...59).contains(s)
        else { return nil }
        // Days since 1970-01-01 from a civil date (Howard Hinnant's algorithm).
        let year = m <= 2 ? y - 1 : y
        let era = (year >= 0 ? year : year - 399) / 400
        let yoe = year - era * 400
        let doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        let days = era * 146_097 + doe - 719_468
        return ((days * 86_400 + h * 3600 + mi * 60 + s - offset) - epoch) * 1000 + fraction
    }

    /// Days in `month` of `year` (Gregorian: February has 29 in years divisible by 4, except
    /// centuries not divisible by 400).
    static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: return year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }
}

extension AutomaticRepairsPolicy {
    /// Reads ARM's `automaticRepairsPolicy` (`enabled`, `gracePeriod`, `repairAction`), every
    /// problem at once under `prefix`; nil when it is not an object. Limits are the definition's check.
    public static func read(_ value: JSON, prefix: String = "automaticRepairsPolicy") -> (AutomaticRepairsPolicy?, [Problem]) {
        guard let members = value.object else {
            return (nil, [Problem(field: prefix, "is \(value.kindName); expected an object with enabled, gracePeriod, repairAction")])
        }
        var reader = FieldReader(prefix: prefix)
        reader.refuseUnknown(members, known: ["enabled", "gracePeriod", "repairAction"])
        var policy = AutomaticRepairsPolicy(enabled: false)
        if let enabled = reader.bool(value, "", "enabled", acceptStrings: false) { policy.enabled = enabled }
        if let grace = reader.duration(value, "", "gracePeriod") { policy.gracePeriod = grace }
        if let action = value.field("repairAction") {
            if case .string(let text) = action, let parsed = RepairAction(parsing: text) { policy.repairAction = parsed } else {
                reader.problem("repairAction", "\(action.serialized(pretty: false)) is not a repair action; allowed Replace, Restart, Reimage")
            }
        }
        // `bool` and `duration` name a field `prefix..key` when given an empty path.
        let problems = reader.problems.map { Problem(field: $0.field.replacing("..", with: "."), $0.message) }
        return (policy, problems)
    }
}

extension LifecycleHooksWire {
    /// The event's members a client reads but cannot set (GET shows them; a client that sends back
    /// what it read sends them too).
    static let readOnly = ["type", "timeCreated", "maxWaitUntil", "defaultAction", "state"]

    /// The read-only member `key` names, ignoring case as every name is read; nil for another.
    static func readOnlyName(_ key: String) -> String? { readOnly.first { $0.lowercased() == key.lowercased() } }
}

extension FieldReader {
    /// A read-only member is accepted when it says what the event says now (the same text, or the
    /// same instant written another way), as a client that sends back what it read sends it; a
    /// different value is named: it cannot be changed.
    mutating func checkEcho(_ members: [String: JSON], of event: LifecycleHookEvent, epoch: Int) {
        guard case .object(let shown)? = LifecycleHooksWire.eventJSON(event, scaleSetID: "", orchestration: .uniform, epoch: epoch).field("properties") else { return }
        for key in members.keys.sorted() {
            guard let name = LifecycleHooksWire.readOnlyName(key) else { continue }
            let sent = members[key]!, now = shown[name] ?? .null
            if sent == now { continue }
            if case .string(let a) = sent, case .string(let b) = now, let x = LifecycleHooksWire.instant(a, epoch: epoch),
               x == LifecycleHooksWire.instant(b, epoch: epoch) {
                continue
            }
            problem(key, "is read-only: the event has \(now.brief()), and \(sent.brief()) cannot change it; leave it out or send it as GET shows it")
        }
    }
}
