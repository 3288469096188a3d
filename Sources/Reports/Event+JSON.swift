public import Formats
public import UpgradeEngine
import AzureWire

/// Events as JSON lines: `time` (seconds), `kind`, `instance`, `batch`, `phase`, `detail`, and
/// beside them the payload's typed fields (listed per kind in the README).
extension Event {
    /// The event as one JSON object (`time` in seconds).
    public var json: JSON {
        var fields: [String: JSON] = [
            "time": time % 1000 == 0 ? .int(time / 1000) : .double(Double(time) / 1000),
            "kind": .string(kind.rawValue),
            "instance": instance.map(JSON.int) ?? .null,
            "batch": batch.map(JSON.int) ?? .null,
            "phase": phase.map(JSON.int) ?? .null,
            "detail": .string(detail),
        ]
        for (key, value) in payloadFields { fields[key] = value }
        return .object(fields)
    }

    /// The event as one line of JSON.
    public var jsonLine: String { json.serialized(pretty: false) }

    static func ids(_ ids: [Int]) -> JSON { .array(ids.map(JSON.int)) }
    static func seconds(_ ms: Millis) -> JSON { ms % 1000 == 0 ? .int(ms / 1000) : .double(Double(ms) / 1000) }

    static func check(_ check: ThresholdCheck) -> [String: JSON] {
        ["instances": ids(check.counted), "count": .int(check.counted.count), "capacity": .int(check.capacity),
         "percent": .int(check.percent), "threshold": .int(check.thresholdPercent), "passed": .bool(check.passed)]
    }

    var payloadFields: [String: JSON] {
        switch payload {
        case .modelUpdated(let version, let changes, let via, let health):
            var fields: [String: JSON] = ["version": .int(version), "changes": .object(changes.mapValues(JSON.string)),
                                          "generic": .bool(changes.isEmpty && health == nil), "via": via.map(JSON.string) ?? .null]
            // Only an update that adds, changes or removes the extension says so.
            switch health {
            case .set(let settings)?: fields["healthExtension"] = settings.json
            case .remove?: fields["healthExtension"] = .bool(false)
            case nil: break
            }
            return fields
        case .upgradeStarted(let upgrade, let target, let reason, let candidates, let capacity, let size, let skipped, let protected):
            return ["upgrade": .int(upgrade), "targetVersion": .int(target), "reason": .string(reason), "candidates": .int(candidates),
                    "capacity": .int(capacity), "batchSize": .int(size), "skipped": Self.ids(skipped), "protected": Self.ids(protected)]
        case .metricsRead(let phases):
            return ["phases": .array(phases.map { .object(["phase": $0.phase.map(JSON.int) ?? .null, "count": .int($0.count)]) })]
        case .preBatchCheck(let check), .postBatchCheck(let check):
            return Self.check(check)
        case .batchStarted(let instances, let shrunk):
            return ["instances": Self.ids(instances), "shrunk": .bool(shrunk)]
        case .surgeFallback(let needed, let quota):
            return ["needed": .int(needed), "quota": .int(quota)]
        case .surgeCreated(_, let replaces, _, let version):
            return ["replaces": .int(replaces), "version": .int(version)]
        case .operationStarted(let op):
            return ["operation": .string(op.kind.rawValue), "targetVersion": .int(op.targetVersion), "disruptive": .bool(op.disruptive),
                    "duration": Self.seconds(op.duration), "willFail": .bool(op.willFail), "replaces": op.replaces.map(JSON.int) ?? .null]
        case .operationFinished(let kind, _, let succeeded):
            return ["operation": .string(kind.rawValue), "outcome": .string(succeeded ? "succeeded" : "failed")]
        case .healthChanged(let from, let to, let reason):
            return ["from": .string(from.rawValue), "state": .string(to.rawValue), "reason": .string(reason.rawValue)]
        case .servingChanged(let serving, let count, let reason):
            return ["serving": .bool(serving), "count": .int(count), "reason": .string(Self.text(reason))]
        case .batchFinished(let healthy, let count):
            return ["healthy": .int(healthy), "count": .int(count)]
        case .pause(let duration):
            return ["duration": Self.seconds(duration)]
        case .rollbackStarted(_, let version):
            return ["targetVersion": .int(version)]
        case .upgradeCompleted(let upgrade, let successful, let failed):
            return ["upgrade": .int(upgrade), "successful": .int(successful), "failed": .int(failed)]
        case .upgradeFaulted(let code, let message):
            return ["code": .string(code.rawValue), "message": .string(message)]
        case .upgradeCancelled(let upgrade, let supersededBy):
            return ["upgrade": .int(upgrade), "supersededBy": supersededBy.map(JSON.string) ?? .null]
        case .instanceDeleted:
            return [:]
        case .scaled(let from, let to, let deleted, _):
            return ["from": .int(from), "to": .int(to), "deleted": Self.ids(deleted)]
        case .manualModeUpdate(let outdated):
            return ["outdated": .int(outdated)]
        case .manualUpgrade(let ids, let upgrading, let version):
            return ["ids": ids.map(Self.ids) ?? .string("*"), "upgrading": .int(upgrading), "version": .int(version)]
        case .automaticUpgrade(let upgrading):
            return ["upgrading": .int(upgrading)]
        case .actionFailed(let action, let message):
            return ["action": .string(action), "message": .string(message)]
        case .wireWarning(_, let message):
            return ["message": .string(message)]
        case .metricsMissing(let ids):
            return ["instances": .array(ids.map(JSON.int))]
        case .runEnded(let hitTimeLimit):
            return ["hitTimeLimit": .bool(hitTimeLimit)]
        case .imageReleased(let version, let outcome):
            let name: String, pinned: JSON
            switch outcome {
            case .upgrading: (name, pinned) = ("upgrading", .null)
            case .automaticUpgradesOff: (name, pinned) = ("automaticUpgradesOff", .null)
            case .pinned(let v): (name, pinned) = ("pinned", .string(v))
            }
            return ["version": .string(version), "outcome": .string(name), "pinnedVersion": pinned]
        case .osUpgradeDeferred(let after):
            return ["approveAfter": after.map(Self.seconds) ?? .null]
        case .osUpgradeApproved(let byAction):
            return ["byAction": .bool(byAction)]
        case .imageRestoreStarted(_, let version):
            return ["targetVersion": .int(version)]
        case .policyUpdated(let policy, let changed, let running):
            return ["mode": .string(policy.mode.rawValue), "changed": .array(changed.map(JSON.string)), "policy": policy.json,
                    "runningUpgrade": running.map(JSON.int) ?? .null]
        case .reimage(let ids, let reimaging):
            return ["ids": ids.map(Self.ids) ?? .string("*"), "reimaging": .int(reimaging)]
        case .restart(let ids, let restarting):
            return ["ids": ids.map(Self.ids) ?? .string("*"), "restarting": .int(restarting)]
        case .stop(let ids, let deallocate, let stopping):
            return ["ids": ids.map(Self.ids) ?? .string("*"), "deallocate": .bool(deallocate), "stopping": .int(stopping)]
        case .start(let ids, let starting):
            return ["ids": ids.map(Self.ids) ?? .string("*"), "starting": .int(starting)]
        case .hookRaised(let name, let type, let targets, let waitUntil, let maxWaitUntil, let defaultAction):
            return ["event": .string(name), "type": .string(type.rawValue), "targets": Self.ids(targets),
                    "waitUntil": Self.seconds(waitUntil), "maxWaitUntil": Self.seconds(maxWaitUntil), "defaultAction": .string(defaultAction.rawValue)]
        case .hookAnswered(let name, let decided, let waitUntil, let via):
            let targets = decided.map { target -> JSON in
                .object(["instance": target.instance.map(JSON.int) ?? .null, "actionState": .string(target.actionState.rawValue)])
            }
            return ["event": .string(name), "decided": .array(targets), "waitUntil": waitUntil.map(Self.seconds) ?? .null, "via": .string(via)]
        case .hookCompleted(let outcome):
            return ["event": .string(outcome.name), "type": .string(outcome.type.rawValue), "approved": .int(outcome.approved),
                    "rejected": .int(outcome.rejected), "defaulted": .int(outcome.defaulted), "rejectedInstances": Self.ids(outcome.rejectedInstances),
                    "waitedSeconds": Self.seconds(outcome.waited), "abandoned": .bool(outcome.abandoned)]
        case .repairStarted(let action, _, let replacement):
            return ["action": .string(action.rawValue), "replacement": replacement.map(JSON.int) ?? .null]
        case .repairsSuspended(let attempts):
            return ["attempts": .int(attempts)]
        }
    }
}
