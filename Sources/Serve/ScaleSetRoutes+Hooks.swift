import AzureWire
import Formats
import HTTPTypes
import Scenario
import UpgradeEngine

/// Lifecycle hook events (SPEC §6b; `VirtualMachineScaleSetLifeCycleHookEvents_List/Get/Update`
/// of api-versions 2025-11-01 and 2026-09-01): what `az vmss lifecycle-hook-event list/show/
/// approve/reject/update` and a team's approval automation call. A PATCH is one step of the run:
/// `SessionAction.answerHook`, the action a script's `answer_hook` performs.
extension ScaleSetRoutes {
    static let hooks: [ScaleSetRoute] = [
        // List: every event, oldest first; `$filter=properties/state eq 'Active'` keeps the Active one. While
        // none is Active a LIST is a poll (in --step mode the run moves to its next event); while one is
        // Active the clock waits for the answer, as the platform does.
        ScaleSetRoute(.get, "lifecycleHookEvents") { c, run in
            let activeOnly = try activeFilter(c.call.query)
            if !run.hookEvents.contains(where: \.isActive) { try run.polled() }
            let scaleSet = run.scaleSet
            guard case .object(var body) = LifecycleHooksWire.listJSON(run.hookEvents, activeOnly: activeOnly, scaleSetID: c.id,
                                                                        orchestration: scaleSet.orchestration, epoch: run.epoch,
                                                                        abandoned: abandoned(c, run)) else { return Answer() }
            if case .array(let events)? = body["value"] { body["value"] = .array(events.map(typed)) }
            return Answer(body: .object(body))
        },
        ScaleSetRoute(.get, "lifecycleHookEvents/{id}") { c, run in
            Answer(body: try shown(event(c, run), c, run))
        },
        // Update: decides targets (Approved / Rejected) and / or moves `waitUntil`; answered 200 with the event
        // as it is after the answer (the Update examples' status and body).
        ScaleSetRoute(.patch, "lifecycleHookEvents/{id}") { c, run in
            let found = try event(c, run)
            // A body that is wrong whatever the event's state is 400 first; a good one for a
            // Completed event is 409.
            guard let body = c.body else {
                throw ARMError(.badRequest, code: "InvalidRequestContent",
                               message: "The request content is empty; expected {\"properties\": {\"targetResources\": [...], \"waitUntil\": \"...\"}}.")
            }
            let response = try read(body, found, run)
            guard found.isActive else {
                let state = abandoned(c, run).contains(found.name) ? "Abandoned" : "Completed"
                throw ARMError.notAllowed("The lifecycle hook event \(found.name) is \(state) (since \(Timestamp.format(found.completedAt ?? run.now, epoch: run.epoch))); only an Active event can be updated.")
            }
            try check(response, against: found, now: run.now, epoch: run.epoch)
            // The event sent back unchanged answers nothing: a step with no action, as any
            // PATCH that changes nothing.
            try run.perform(response.isEmpty ? [] : [.answerHook(event: found.name, response)])
            return Answer(body: try shown(event(c, run), c, run))
        },
    ]

    /// A PATCH body as the answer it gives. A scheduling event's one target is the scale set
    /// itself (its id): that target's answer decides the whole event; the rest is the wire's reading.
    private static func read(_ body: JSON, _ event: LifecycleHookEvent, _ run: isolated ServedRun) throws(ARMError) -> HookResponse {
        var rest = body, whole: HookSelection?, wholeAnswer: HookActionState?
        if event.targets.allSatisfy({ $0.instance == nil }), case .object(var root) = body, case .object(var properties)? = root["properties"],
           let list = properties["targetResources"] {
            guard case .array(let items) = list else {
                throw ARMError(.badRequest, code: "InvalidParameter", message: "targetResources is \(list.kindName); expected a list",
                               target: "properties.targetResources")
            }
            for (i, item) in items.enumerated() {
                let field = "properties.targetResources[\(i)]"
                guard case .string(let id)? = item.field("resource")?.field("id"),
                      id.split(separator: "/").last?.lowercased() == run.scaleSet.name.lowercased() else {
                    throw ARMError(.badRequest, code: "InvalidParameter",
                                   message: "The target of \(event.type.rawValue) event \(event.name) is the scale set itself; resource.id is its id, \(scaleSetIDTail(run))",
                                   target: "\(field).resource.id")
                }
                let answer: HookActionState
                switch item.field("actionState") {
                case .string(let text)? where text.lowercased() == "approved": answer = .approved
                case .string(let text)? where text.lowercased() == "rejected": answer = .rejected
                case .string(let text)? where text.lowercased() == "waiting":
                    continue  // the target as GET showed it, sent back: no answer
                case let other:
                    throw ARMError(.badRequest, code: "InvalidParameter",
                                   message: "\(other.map { $0.brief() } ?? "nothing") is not an answer; allowed Approved, Rejected (or Waiting: no answer)",
                                   target: "\(field).actionState")
                }
                if let earlier = wholeAnswer, earlier != answer {
                    throw ARMError(.badRequest, code: "InvalidParameter",
                                   message: "\(answer.rawValue) contradicts an earlier item's \(earlier.rawValue) for the scale set; give the target one answer",
                                   target: "\(field).actionState")
                }
                wholeAnswer = answer
                whole = .all
            }
            properties["targetResources"] = nil
            root["properties"] = .object(properties)
            rest = .object(root)
        }
        let instances = run.instances
        var response: HookResponse
        do {
            response = try LifecycleHooksWire.patch(rest, event: event, epoch: run.epoch, checkingEcho: event.isActive, scaleSetName: run.scaleSet.name) { name in
                instances.first { $0.name == name }?.id
            }
        } catch {
            throw ARMError.invalid(error)
        }
        if let whole {
            if wholeAnswer == .rejected { response.reject = whole } else { response.approve = whole }
        }
        return response
    }

    /// The scale set's name as a target id ends with it.
    private static func scaleSetIDTail(_ run: isolated ServedRun) -> String { "…/virtualMachineScaleSets/\(run.scaleSet.name)" }

    /// Whether LIST's `$filter` asks for the Active events only; any other filter is refused.
    private static func activeFilter(_ query: [String: String]) throws(ARMError) -> Bool {
        guard let filter = query["$filter"] else { return false }
        let words = filter.split(whereSeparator: \.isWhitespace).map(String.init)
        if words.count == 3, words[0].lowercased() == "properties/state", words[1].lowercased() == "eq", words[2].lowercased() == "'active'" {
            return true
        }
        throw ARMError(.badRequest, code: "InvalidParameter",
                       message: "$filter '\(filter)' is not supported; allowed: properties/state eq 'Active' (or no $filter: every event)", target: "$filter")
    }

    /// The event named by the segment after `lifecycleHookEvents/`; 404 ResourceNotFound when there is none.
    private static func event(_ c: ScaleSetCall, _ run: isolated ServedRun) throws(ARMError) -> LifecycleHookEvent {
        let name = c.call.parameter("id")
        guard let found = run.hookEvents.first(where: { $0.name.lowercased() == name.lowercased() }) else {
            throw ARMError.resourceNotFound("Microsoft.Compute/virtualMachineScaleSets/lifecycleHookEvents", "\(run.scaleSet.name)/\(name)",
                                            group: c.resourceGroup)
        }
        return found
    }

    /// One event as GET and PATCH answer it.
    private static func shown(_ event: LifecycleHookEvent, _ c: ScaleSetCall, _ run: isolated ServedRun) -> JSON {
        typed(LifecycleHooksWire.eventJSON(event, scaleSetID: c.id, orchestration: run.scaleSet.orchestration, epoch: run.epoch,
                                           abandoned: abandoned(c, run).contains(event.name)))
    }

    /// The events shown `Abandoned` to this client: those the platform superseded, to an
    /// api-version that has the state (`APIVersion.abandonedSince`); none to an older one.
    private static func abandoned(_ c: ScaleSetCall, _ run: isolated ServedRun) -> Set<String> {
        APIVersion.isAtLeast(c.call.apiVersion, APIVersion.abandonedSince) ? run.abandonedHookEvents : []
    }

    /// The resource with its `type` (the 2026-09-01 examples show it; the resource has it in every version).
    private static func typed(_ event: JSON) -> JSON {
        guard case .object(var fields) = event else { return event }
        fields["type"] = .string("Microsoft.Compute/virtualMachineScaleSets/lifecycleHookEvents")
        return .object(fields)
    }

    /// What the engine would refuse, refused here as a bad parameter (400) naming the field: an id that is
    /// not a target of the event, a `waitUntil` before now or past `maxWaitUntil`.
    private static func check(_ response: HookResponse, against event: LifecycleHookEvent, now: Millis, epoch: Int) throws(ARMError) {
        let targets = event.targets.compactMap(\.instance)
        for selection in [response.reject, response.approve] {
            guard case .instances(let ids)? = selection else { continue }
            for id in ids where !targets.contains(id) {
                let listed = targets.isEmpty ? "the scale set itself" : targets.map(String.init).joined(separator: ", ")
                throw ARMError(.badRequest, code: "InvalidParameter",
                               message: "Instance \(id) is not a target of the lifecycle hook event \(event.name); its targets: \(listed).",
                               target: "properties.targetResources")
            }
        }
        if let wait = response.waitFor {
            let until = event.timeCreated + wait
            guard until >= now, until <= event.maxWaitUntil else {
                throw ARMError(.badRequest, code: "InvalidParameter",
                               message: "waitUntil \(Timestamp.format(until, epoch: epoch)) is out of range; allowed from now (\(Timestamp.format(now, epoch: epoch))) up to maxWaitUntil (\(Timestamp.format(event.maxWaitUntil, epoch: epoch))).",
                               target: "properties.waitUntil")
            }
        }
    }
}
