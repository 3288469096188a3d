import Formats
import Foundation
import Mustache
public import UpgradeEngine

/// `rehearse run --report FILE`: one self-contained HTML page of a run (no network, no external
/// script or font): a swim lane per instance coloured by what it was doing, the batches and
/// checks on the time axis, the capacity curve against the threshold, and the outcome (status,
/// expectations, the fleet at the end). The page draws itself from the data embedded in it.
public enum RunReport {
    /// One stretch of an instance's life in one state.
    struct Segment {
        var start: Millis
        var end: Millis
        var state: String
        var cause: String
    }

    /// Where each instance was when, from the run's events: `busy` (an operation, named),
    /// `initializing`, `unhealthy` (Unhealthy or Unknown), `hook-wait` (healthy, a target of a
    /// lifecycle hook event not yet completed), `old` (healthy on an older model), `current`
    /// (healthy on the newest model); a lane ends when the instance is deleted.
    static func lanes(_ record: RunRecord) -> [Int: [Segment]] {
        struct Now {
            var version = 1
            var health = HealthState.initializing
            var operation: OperationFacts?
            var since: Millis = 0
            var state = ""
            var cause = "start"
            var alive = true
            /// The lifecycle hook event it waits on, while one does.
            var hook: String?
        }
        // Each instance as the run found it: its model from the first second; an id that did not
        // exist then (one an `instances` list skips) has no lane until something creates it.
        var latest = record.start?.latest ?? 1
        var now: [Int: Now] = [:]
        for vm in record.instances where vm.id < record.instances.count {
            if let start = record.start {
                guard vm.id < start.versions.count, let version = start.versions[vm.id] else { continue }
                now[vm.id] = Now(version: version)
            } else {
                now[vm.id] = Now()
            }
        }
        var created = Set<Int>()
        var segments: [Int: [Segment]] = [:]
        func state(_ n: Now) -> String {
            if let op = n.operation { return "busy-\(op.kind.rawValue)" }
            switch n.health {
            case .initializing: return "initializing"
            case .healthy: return n.hook != nil ? "hook-wait" : n.version < latest ? "old" : "current"
            default: return "unhealthy"
            }
        }
        func settle(_ id: Int, at time: Millis, cause: String) {
            guard var n = now[id], n.alive else { return }
            let next = state(n)
            if next != n.state {
                if !n.state.isEmpty && time > n.since { segments[id, default: []].append(Segment(start: n.since, end: time, state: n.state, cause: n.cause)) }
                if n.state.isEmpty || time > n.since { n.since = time }
                n.state = next
                n.cause = cause
            }
            now[id] = n
        }
        for id in now.keys { settle(id, at: 0, cause: "running at the start") }
        for event in record.events {
            let t = event.time, cause = "\(event.kind.rawValue): \(event.detail)"
            switch event.payload {
            case .modelUpdated(let version, _, _, _):
                latest = max(latest, version)
                for id in now.keys.sorted() { settle(id, at: t, cause: cause) }
            case .operationStarted(let facts):
                guard let id = event.instance else { break }
                if facts.kind == .create && !created.contains(id) {
                    created.insert(id)
                    now[id] = Now(version: facts.targetVersion, since: t)
                }
                now[id]?.operation = facts
                if facts.disruptive || facts.kind == .create { now[id]?.health = .initializing }
                settle(id, at: t, cause: cause)
            case .operationFinished(let kind, _, let succeeded):
                guard let id = event.instance, let op = now[id]?.operation else { break }
                now[id]?.operation = nil
                if succeeded, kind != .delete { now[id]?.version = op.targetVersion }
                settle(id, at: t, cause: cause)
            case .healthChanged(_, let to, _):
                guard let id = event.instance else { break }
                now[id]?.health = to
                settle(id, at: t, cause: cause)
            case .hookRaised(let name, _, let targets, _, _, _):
                for id in targets where now[id] != nil {
                    now[id]?.hook = name
                    settle(id, at: t, cause: cause)
                }
            case .hookCompleted(let outcome):
                for id in now.keys.sorted() where now[id]?.hook == outcome.name {
                    now[id]?.hook = nil
                    settle(id, at: t, cause: cause)
                }
            case .instanceDeleted:
                guard let id = event.instance, var n = now[id], n.alive else { break }
                if t > n.since { segments[id, default: []].append(Segment(start: n.since, end: t, state: n.state, cause: n.cause)) }
                n.alive = false
                now[id] = n
            default:
                break
            }
        }
        let end = record.summary.endTime
        for (id, n) in now where n.alive && end > n.since {
            segments[id, default: []].append(Segment(start: n.since, end: end, state: n.state, cause: n.cause))
        }
        return segments
    }

    /// Serving instances over time, the capacity curve's steps, read from the `servingChanged`
    /// events: the count after the last change at each time, from the count before the first.
    static func capacity(_ events: [Event]) -> [(time: Millis, serving: Int)] {
        var steps: [(time: Millis, serving: Int)] = []
        for event in events {
            guard case .servingChanged(let serving, let count, _) = event.payload else { continue }
            if steps.isEmpty { steps.append((0, count + (serving ? -1 : 1))) }
            if steps.last!.time == event.time { steps[steps.count - 1].serving = count } else { steps.append((event.time, count)) }
        }
        return steps
    }

    /// Every lifecycle hook event's wait, from its raising to its completion (or the run's end):
    /// `{"start", "end", "event", "type", "targets", "outcome"}`; targets empty: the scale set.
    static func hookWaits(_ record: RunRecord) -> [JSON] {
        var open: [(start: Millis, name: String, type: String, targets: [Int])] = []
        var waits: [JSON] = []
        func wait(_ raised: (start: Millis, name: String, type: String, targets: [Int]), end: Millis, outcome: String) -> JSON {
            .ordered([JSONField("start", .int(raised.start)), JSONField("end", .int(end)), JSONField("event", .string(raised.name)),
                      JSONField("type", .string(raised.type)), JSONField("targets", .array(raised.targets.map(JSON.int))),
                      JSONField("waited", .string(Figures.human(seconds: Double(end - raised.start) / 1000))),
                      JSONField("outcome", .string(outcome))])
        }
        for event in record.events {
            switch event.payload {
            case .hookRaised(let name, let type, let targets, _, _, _):
                open.append((event.time, name, type.rawValue, targets))
            case .hookCompleted(let c):
                guard let i = open.firstIndex(where: { $0.name == c.name }) else { break }
                let outcome = c.abandoned ? "abandoned: the upgrade ended first"
                    : "\(c.approved) approved, \(c.rejected) rejected, \(c.defaulted) by the default action"
                waits.append(wait(open.remove(at: i), end: event.time, outcome: outcome))
            default:
                break
            }
        }
        waits += open.map { wait($0, end: record.summary.endTime, outcome: "not completed when the run ended") }
        return waits
    }

    /// The data the page draws, as JSON.
    static func data(_ record: RunRecord, scaleSet: ScaleSetDefinition, scenario: String, statusText: String?) -> JSON {
        let lanes = lanes(record)
        let phaseOf: [Int: Int?] = record.events.reduce(into: [:]) { map, event in
            if case .batchStarted(let ids, _) = event.payload { for id in ids where map[id] == nil { map[id] = .some(event.phase) } }
        }
        let failed = Set(record.summary.failed)
        // The fleet's instances: an id an instance list skips is no deleted instance.
        let instances: [JSON] = record.fleetInstances.map { vm in
            .ordered([
                JSONField("id", .int(vm.id)), JSONField("name", .string(vm.name)), JSONField("zone", vm.zone.map(JSON.string) ?? .null),
                JSONField("faultDomain", .int(vm.faultDomain)), JSONField("updateDomain", .int(vm.updateDomain)),
                JSONField("phase", (phaseOf[vm.id] ?? nil).map(JSON.int) ?? .null), JSONField("modelVersion", .int(vm.modelVersion)),
                JSONField("health", .string(vm.health.rawValue)), JSONField("exists", .bool(vm.exists)),
                JSONField("leftBehind", vm.leftBehind.map { .string($0.rawValue) } ?? .null), JSONField("failed", .bool(failed.contains(vm.id))),
                JSONField("segments", .array((lanes[vm.id] ?? []).map {
                    .array([.int($0.start), .int($0.end), .string($0.state), .string($0.cause)])
                })),
            ])
        }
        var markers: [JSON] = []
        for event in record.events {
            let kind: String
            switch event.payload {
            case .batchStarted: kind = "batch"
            case .preBatchCheck(let check), .postBatchCheck(let check): kind = check.passed ? "check-passed" : "check-failed"
            case .pause: kind = "pause"
            case .upgradeCompleted, .upgradeFaulted, .upgradeCancelled, .rollbackStarted: kind = "end"
            default: continue
            }
            markers.append(.ordered([JSONField("time", .int(event.time)), JSONField("kind", .string(kind)),
                                     JSONField("batch", event.batch.map(JSON.int) ?? .null),
                                     JSONField("text", .string("\(event.kind.rawValue): \(event.detail)"))]))
        }
        let budget = Planner.unhealthyAllowance(capacity: scaleSet.capacity, percent: record.policy.rolling.maxUnhealthyInstancePercent)
        let status = record.summary.status
        let steps = capacity(record.events)
        let low = record.summary.availability.map { (time: $0.lowestHealthyAt, serving: $0.lowestHealthy) }
        let upgradeDuration = record.summary.upgradeStarted.map { (record.summary.upgradeEnded ?? record.summary.endTime) - $0 }
        return .ordered([
            JSONField("scenario", .string(scenario)), JSONField("scaleSet", .string(scaleSet.name)), JSONField("seed", .string(String(record.seed))),
            // The answer first: how long the upgrade took and how many instances failed, as the text says it.
            JSONField("headline", .ordered([
                JSONField("upgradeDuration", upgradeDuration.map { .string(Figures.both($0)) } ?? .null),
                JSONField("failed", .int(record.summary.failed.count)),
                JSONField("ended", .string(Figures.both(record.summary.endTime))),
            ])),
            JSONField("end", .int(record.summary.endTime)), JSONField("capacity", .int(scaleSet.capacity)),
            JSONField("threshold", .int(scaleSet.capacity - budget)),
            JSONField("code", status.map { .string($0.code.rawValue) } ?? .null),
            JSONField("error", status?.error.map { .string("\($0.code.rawValue): \($0.message)") } ?? .null),
            JSONField("status", statusText.map(JSON.string) ?? .null),
            JSONField("instances", .array(instances)), JSONField("markers", .array(markers)),
            JSONField("serving", .array(steps.map { .array([.int($0.time), .int($0.serving)]) })),
            JSONField("lowest", low.map { .ordered([JSONField("time", .int($0.time)), JSONField("serving", .int($0.serving)),
                                                     JSONField("when", .string(Figures.human(seconds: Double($0.time) / 1000)))]) } ?? .null),
            JSONField("upgradeWindow", record.summary.upgradeStarted.map { .array([.int($0), .int(record.summary.upgradeEnded ?? record.summary.endTime)]) }
                ?? .null),
            JSONField("ticks", .array(TimeAxis.ticks(end: record.summary.endTime).map { .array([.int($0.time), .string($0.label)]) })),
            JSONField("expectations", .array(record.expectations.map(\.json))),
            JSONField("hookWaits", .array(hookWaits(record))),
        ])
    }

    /// The page: the template with the data embedded (`<` written `\u003c`, so no text from a
    /// script can close the script element).
    public static func html(_ record: RunRecord, scaleSet: ScaleSetDefinition, scenario: String, statusText: String?) throws -> String {
        let json = data(record, scaleSet: scaleSet, scenario: scenario, statusText: statusText).serialized(pretty: false)
            .replacingOccurrences(of: "<", with: "\\u003c")
        // The template travels inside the executable (.ci/embed-resources).
        guard let text = EmbeddedTemplates.templates["report"] else { throw CocoaError(.fileNoSuchFile) }
        let template = try MustacheTemplate(string: text)
        return template.render(["title": "\(scaleSet.name): \(scenario)", "data": json])
    }
}
