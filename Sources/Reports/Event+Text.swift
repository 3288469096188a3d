import Formats
public import UpgradeEngine

/// The one place where an event becomes text: the `detail` of the timeline and of the events file.
extension Event {
    /// Why an instance entered or left service, as events print it: the health state or the
    /// lifecycle, as Azure spells them (`Unhealthy`, `deleting`).
    static func text(_ reason: ServingReason) -> String {
        switch reason {
        case .health(let state): return state.rawValue
        case .lifecycle(let lifecycle): return lifecycle.rawValue
        }
    }

    /// Instance ids as a list names them (`1, 2`), or `*` for the whole scale set.
    static func idList(_ ids: [Int]?) -> String { ids.map { $0.map(String.init).joined(separator: ", ") } ?? "*" }

    /// The one-line text of the timeline, rendered from the payload.
    public var detail: String {
        switch payload {
        case .modelUpdated(let version, let changes, let via, let health):
            if changes.isEmpty && health == nil { return "generic model update (model v\(version) unchanged)" }
            var changed = changes.keys.sorted().map { "\($0)=\(changes[$0]!)" }
            switch health {
            case .set(let settings)?:
                changed.append("healthExtension=\(settings.protocol.rawValue)" + (settings.port.map { ":\($0)" } ?? "") + (settings.requestPath ?? "")
                               + " every \(settings.intervalInSeconds) s, grace \(settings.gracePeriod) s")
            case .remove?: changed.append("healthExtension removed")
            case nil: break
            }
            return "model v\(version): \(changed.joined(separator: ", "))" + (via.map { " (\($0))" } ?? "")
        case .upgradeStarted(let upgrade, let target, let reason, let candidates, let capacity, let size, let skipped, let protected):
            return "rolling upgrade \(upgrade) to model v\(target) (\(reason)): \(candidates) of \(capacity) instances, batches of \(size)"
                + (skipped.isEmpty ? "" : ", skipped \(skipped)") + (protected.isEmpty ? "" : ", protected \(protected)")
        case .metricsRead(let phases):
            if phases.isEmpty { return "no candidates" }
            return phases.map { "\($0.phase.map { "phase \($0)" } ?? "unphased"): \($0.count)" }.joined(separator: ", ")
        case .preBatchCheck(let check):
            if !check.passed { return "failed: \(check.counted.count) unhealthy of \(check.capacity)" }
            return "passed: \(check.counted.count) of \(check.capacity) unhealthy (\(check.percent)%), allowed \(check.thresholdPercent)%"
        case .batchStarted(let ids, let shrunk):
            return "batch \(batch ?? 0)\(phase.map { ", phase \($0)" } ?? ", unphased"): instances \(ids.map(String.init).joined(separator: ", "))"
                + (shrunk ? " (shrunk to stay within the unhealthy budget)" : "")
        case .surgeFallback(let needed, let quota):
            return "MaxSurge would need \(needed) instances, over the quota of \(quota): this batch upgrades in place"
        case .surgeCreated(let name, _, let replacesName, let version):
            return "\(name) created on model v\(version) to replace \(replacesName)"
        case .operationStarted(let op):
            var text = "\(op.kind.rawValue) \(op.name)"
            if op.kind == .upgrade || op.kind == .rollback {
                text += " to model v\(op.targetVersion) (\(op.disruptive ? "restart/reimage" : "in place"))"
            }
            return text + ", \(ISODuration.format(op.duration))\(op.willFail ? ", will fail" : "")"
        case .operationFinished(let kind, let name, let succeeded):
            return "\(kind.rawValue) \(name) \(succeeded ? "succeeded" : "failed")"
        case .healthChanged(_, let to, let reason):
            switch reason {
            case .gracePeriodEnded: return "grace period ended: \(to.rawValue)"
            case .restarted: return "restarted: \(to.rawValue)"
            case .noHealthSource: return "no health source: \(to.rawValue)"
            case .poweredOff: return "powered off: \(to.rawValue)"
            case .probes: return to.rawValue
            }
        case .servingChanged(let serving, let count, let reason):
            return "\(serving ? "enters" : "leaves") service (\(Self.text(reason))): \(count) serving"
        case .batchFinished(let healthy, let count):
            return "batch \(batch ?? 0): \(healthy) of \(count) upgraded and healthy"
        case .postBatchCheck(let check):
            if !check.passed { return "failed: \(check.counted.count) of \(check.capacity) upgraded instances unhealthy or failed" }
            return "passed: \(check.counted.count) of \(check.capacity) upgraded instances unhealthy or failed, allowed \(check.thresholdPercent)%"
        case .pause(let duration):
            return "pausing \(ISODuration.format(duration)) before the next batch"
        case .rollbackStarted(let name, let version):
            return "rolling \(name) back to model v\(version)"
        case .upgradeCompleted(let upgrade, let successful, let failed):
            return "rolling upgrade \(upgrade) completed: \(successful) upgraded, \(failed) failed"
        case .upgradeFaulted(let code, let message):
            return "\(code.rawValue): \(message)"
        case .upgradeCancelled(let upgrade, let supersededBy):
            if let supersededBy { return "rolling upgrade \(upgrade) superseded by \(supersededBy); operations in flight finish first" }
            return "rolling upgrade \(upgrade) cancelled; operations in flight finish, no new batch starts"
        case .instanceDeleted(let name):
            return "\(name) deleted"
        case .scaled(let from, let to, let deleted, let short):
            if to >= from { return "scale out from \(from) to \(to)" }
            return "scale in from \(from) to \(to): deleting \(deleted)" + (short ? " (the rest are protected or busy)" : "")
        case .manualModeUpdate(let outdated):
            return "Manual mode: no instance changes; \(outdated) instance(s) not on the latest model"
        case .manualUpgrade(let ids, let upgrading, let version):
            return "manual upgrade of \(ids.map { $0.map(String.init).joined(separator: ", ") } ?? "*"): \(upgrading) instance(s) to model v\(version)"
        case .automaticUpgrade(let upgrading):
            return "Automatic mode: upgrading \(upgrading) instance(s) at once"
        case .actionFailed(let action, let message):
            return "\(action): \(message)"
        case .wireWarning(let name, let message):
            return "\(name): \(message)"
        case .metricsMissing(let ids):
            let named = ids.count == 1 ? "instance \(ids[0])" : "\(ids.count) instances (\(ids.map(String.init).joined(separator: ", ")))"
            return "\(named): no phase and no skip: the latest answer was not Healthy (or had not come) when the upgrade was planned, and custom metrics count only from Healthy answers"
        case .runEnded(let hitTimeLimit):
            return hitTimeLimit ? "time limit reached with work left" : "nothing left to do"
        case .imageReleased(let version, let outcome):
            switch outcome {
            case .upgrading: return "platform image \(version) released: automatic OS image upgrade"
            case .automaticUpgradesOff: return "platform image \(version) released: automatic OS upgrades are off, no instance changes"
            case .pinned(let v): return "platform image \(version) released: the model names image version \(v), not latest, so no instance changes"
            }
        case .osUpgradeDeferred(let after):
            return "defers its OS upgrade " + (after.map { "for \(ISODuration.format($0))" } ?? "until approved")
        case .osUpgradeApproved(let byAction):
            return byAction ? "OS upgrade approved" : "OS upgrade deferral ended"
        case .imageRestoreStarted(let name, let version):
            return "restoring \(name) to its previous image (model v\(version)): not Healthy within 5 minutes of its upgrade"
        case .policyUpdated(let policy, let changed, let running):
            return "upgrade policy: mode \(policy.mode.rawValue)" + (changed.isEmpty ? ", nothing changed" : "; changed \(changed.joined(separator: ", "))")
                + (running.map { "; rolling upgrade \($0) keeps the policy it started with, the next one uses this" } ?? "")
        case .reimage(let ids, let reimaging):
            return "reimage of \(ids.map { $0.map(String.init).joined(separator: ", ") } ?? "*"): \(reimaging) instance(s) restart on the model they run"
        case .restart(let ids, let restarting):
            return "restart of \(Self.idList(ids)): \(restarting) running instance(s) boot again"
        case .stop(let ids, let deallocate, let stopping):
            return "\(deallocate ? "deallocation" : "power off") of \(Self.idList(ids)): \(stopping) instance(s) leave service"
        case .start(let ids, let starting):
            return "start of \(Self.idList(ids)): \(starting) instance(s) boot"
        case .hookRaised(let name, let type, let targets, let waitUntil, _, let defaultAction):
            let what = targets.isEmpty ? "the scale set" : "instance(s) \(targets.map(String.init).joined(separator: ", "))"
            return "lifecycle hook \(type.rawValue) raised event \(name) for \(what): \(defaultAction.rawValue) by default at \(ISODuration.format(waitUntil))"
        case .hookAnswered(let name, let decided, let waitUntil, let via):
            let parts = decided.map { "\($0.instance.map(String.init) ?? "scale set") \($0.actionState.rawValue)" }
                + (waitUntil.map { ["waitUntil moved to \(ISODuration.format($0))"] } ?? [])
            return "\(via) answered event \(name): \(parts.isEmpty ? "nothing decided" : parts.joined(separator: ", "))"
        case .hookCompleted(let outcome):
            if outcome.abandoned { return "event \(outcome.name) abandoned after \(ISODuration.format(outcome.waited)): the upgrade it stood before ended" }
            let rejected = outcome.rejectedInstances.isEmpty ? "\(outcome.rejected) rejected" : "\(outcome.rejected) rejected (\(outcome.rejectedInstances.map(String.init).joined(separator: ", ")))"
            return "event \(outcome.name) completed after \(ISODuration.format(outcome.waited)): \(outcome.approved) approved, \(rejected), \(outcome.defaulted) by default action"
        case .repairStarted(let action, let name, let replacement):
            return "automatic repair (\(action.rawValue)) of \(name): unhealthy past the grace period" + (replacement.map { ", replaced by instance \($0) on the latest model" } ?? "")
        case .repairsSuspended(let attempts):
            return "automatic repairs suspended: this instance's line was repaired \(attempts) times and is unhealthy again"
        }
    }
}
