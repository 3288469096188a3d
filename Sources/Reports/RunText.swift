import AzureWire
public import Formats
import Foundation
public import UpgradeEngine

/// The text a person reads after a run's timeline, and the plan of an upgrade, rendered from
/// the typed record and plan.
public enum RunText {
    /// The get-latest status of a run as JSON text, in the az CLI's shape or the REST resource's.
    public static func status(_ record: RunRecord, scaleSet: ScaleSetDefinition, rest: Bool) -> String? {
        rest ? record.summary.status?.restJSON(scaleSet: scaleSet.name).serialized() : record.summary.status?.json().serialized()
    }

    /// The OS image upgrade history (`az vmss get-os-upgrade-history`'s list).
    public static func history(_ record: RunRecord, scaleSet: ScaleSetDefinition) -> JSON {
        .array(record.summary.osUpgradeHistory.map { $0.json(location: scaleSet.location) })
    }

    /// The lines after the timeline: the final status, the history, what was skipped,
    /// protected or left behind and why, availability, and whether the time limit stopped it.
    public static func summary(_ record: RunRecord, scaleSet: ScaleSetDefinition, rest: Bool) -> [String] {
        var lines = [""]
        let summary = record.summary
        if let status = status(record, scaleSet: scaleSet, rest: rest) {
            // The JSON one line an element: every line of this output is escaped on its own.
            lines += ["Final status (az vmss rolling-upgrade get-latest):"] + status.split(separator: "\n").map(String.init)
        } else {
            lines.append("No rolling upgrade ran.")
        }
        if !summary.osUpgradeHistory.isEmpty {
            lines += ["OS image upgrade history (az vmss get-os-upgrade-history):"]
                + history(record, scaleSet: scaleSet).serialized().split(separator: "\n").map(String.init)
        }
        if !summary.skipped.isEmpty { lines.append("Skipped (SkipUpgrade): \(summary.skipped)") }
        if !summary.protected.isEmpty { lines.append("Protected (protectFromScaleSetActions): \(summary.protected)") }
        if !summary.rollbackFailed.isEmpty { lines.append("Rollback failed (still on the new model): \(summary.rollbackFailed)") }
        lines += fleet(record)
        if let a = summary.availability {
            lines.append("Availability: lowest healthy \(a.lowestHealthy) at \(ISODuration.format(a.lowestHealthyAt)) (capacity \(summary.capacity)), "
                + "\(String(format: "%.0f", a.unavailableInstanceSeconds)) instance-seconds unavailable")
        }
        if let start = summary.upgradeStarted {
            if let end = summary.upgradeEnded {
                lines.append("The latest rolling upgrade took \(Figures.both(end - start)) (\(ISODuration.format(start)) to \(ISODuration.format(end)))"
                    + (summary.endTime > end ? "; the run ended at \(ISODuration.format(summary.endTime)), after the operations still running then" : ""))
            } else {
                lines.append("The latest rolling upgrade started at \(ISODuration.format(start)) and had not ended when the run stopped at \(ISODuration.format(summary.endTime))")
            }
        }
        lines += hooks(summary.hooks)
        if summary.hitTimeLimit { lines.append("Stopped at the time limit with work left.") }
        return lines
    }

    /// What lifecycle hooks did (SPEC §6b): nothing when no event was raised.
    static func hooks(_ hooks: HookSummary) -> [String] {
        guard hooks.events > 0 else { return [] }
        var lines = ["Lifecycle hooks: \(hooks.events) event(s); defaultAction applied in \(hooks.defaultedEvents) (\(hooks.defaultedTargets) target(s))"]
        if !hooks.batchWaits.isEmpty {
            lines.append("  batches of the latest upgrade waited \(hooks.batchWaits.map(ISODuration.format).joined(separator: ", ")) (total \(ISODuration.format(hooks.totalBatchWait)))")
        }
        if !hooks.rejected.isEmpty { lines.append("  rejected (left on their model for this upgrade): \(hooks.rejected)") }
        if hooks.rejectedSchedules > 0 { lines.append("  OS upgrades not scheduled (scheduling event rejected): \(hooks.rejectedSchedules)") }
        return lines
    }

    /// One line per batch (`batch 1 (phase 1): 3 z1 fd0 ud0, …`), then the instances without
    /// metrics, skipped and protected.
    public static func plan(_ plan: UpgradePlan) -> [String] {
        var lines: [String] = []
        for (i, batch) in plan.batches.enumerated() {
            let members = batch.instances.map { vm in
                "\(vm.id)" + (vm.zone.map { " z\($0)" } ?? "") + " fd\(vm.faultDomain) ud\(vm.updateDomain)"
            }
            lines.append("batch \(i + 1) (\(batch.phase.map { "phase \($0)" } ?? "unphased")): \(members.joined(separator: ", "))")
            if !batch.why.isEmpty { lines.append("  why: " + batch.why.map(why).joined(separator: "; ")) }
        }
        if plan.batches.isEmpty { lines.append("no batches: no instance needs an upgrade") }
        if !plan.withoutMetrics.isEmpty { lines.append("without metrics (latest answer not Healthy): \(plan.withoutMetrics)") }
        lines.append("skipped: \(plan.skipped)")
        lines.append("protected: \(plan.protected)")
        return lines
    }

    /// What a Manual or Automatic scale set does with a model update, instead of batches.
    public static func modePlan(_ mode: UpgradeMode, outdated: [Int], protected: [Int]) -> [String] {
        var lines: [String]
        switch mode {
        case .automatic:
            lines = ["Automatic mode: a model update upgrades every instance at once, with no batches, no health wait and no thresholds.",
                     "upgraded at once: \(outdated)"]
        case .manual:
            lines = ["Manual mode: a model update upgrades no instance; each waits for a manual upgrade (manual_upgrade, az vmss update-instances),",
                     "which upgrades the instances it names at once, with no batches, health wait or thresholds.",
                     "waiting for a manual upgrade: \(outdated)"]
        case .rolling:
            lines = []
        }
        lines.append("protected: \(protected)")
        lines.append("OS image and extension upgrades use the rolling policy in any mode: plan a scenario that starts one to see their batches.")
        return lines
    }

    /// One rule of a batch in words.
    static func why(_ rule: BatchRule) -> String {
        switch rule {
        case .phase(let phase?): return "phase \(phase) (a batch never crosses a phase)"
        case .phase(nil): return "no phase number (these go after every numbered phase)"
        case .zone(let zone): return "zone \(zone) (zones go one at a time)"
        case .updateDomain(let ud): return "update domain \(ud) (a batch never crosses one)"
        case .faultDomain(let fd): return "fault domain \(fd) (a batch never crosses one)"
        case .unhealthyFirst: return "unhealthy instances first (prioritizeUnhealthyInstances)"
        case .batchSize(let size, let percent, let capacity): return "full size \(size) (\(percent)% of \(capacity), rounded down)"
        case .shrunkByBudget(let size, let budget, let unhealthyNow):
            return "shrunk from \(size): \(budget) may be unhealthy (maxUnhealthyInstancePercent), \(unhealthyNow) already are"
        case .restOfGroup(let left, let size): return "the last \(left) of its group (the batch size is \(size))"
        case .takesNoneDown: return "takes no instance down (MaxSurge or an in-place change): never shrinks"
        }
    }

    /// The policy in numbers, before the batches: what the percentages come to for this scale
    /// set, the batches per phase and zone, the shortest duration; fragile settings follow as
    /// warnings.
    public static func arithmetic(_ a: PolicyArithmetic, policy: RollingUpgradePolicy) -> [String] {
        func instances(_ n: Int) -> String { "\(n) instance\(n == 1 ? "" : "s")" }
        var lines = [
            "Policy in numbers, for \(instances(a.capacity)):",
            "  batch size            \(instances(a.batchSize)) (maxBatchInstancePercent \(policy.maxBatchInstancePercent)% of \(a.capacity), rounded down, at least 1)",
            "  unhealthy budget      \(instances(a.unhealthyBudget)) unhealthy anywhere before each batch (maxUnhealthyInstancePercent \(policy.maxUnhealthyInstancePercent)% of \(a.capacity), rounded down)",
            "  upgraded budget       \(instances(a.upgradedBudget)) failed or unhealthy once upgraded (maxUnhealthyUpgradedInstancePercent \(policy.maxUnhealthyUpgradedInstancePercent)% of \(a.capacity), rounded down)",
        ]
        let groups = a.batchesByGroup.map { g in
            "\(g.phase.map { "phase \($0)" } ?? "unphased")\(g.zone.map { ", zone \($0)" } ?? ""): \(g.batches)"
        }
        lines.append("  batches               \(a.batchesByGroup.map(\.batches).reduce(0, +))" + (groups.isEmpty ? "" : " (\(groups.joined(separator: "; ")))"))
        let bound = a.shortestDuration >= ISODuration.longest ? "at least " : ""
        lines.append("  shortest duration     \(bound)\(ISODuration.format(a.shortestDuration)) (every instance back and Healthy at once; pauses \(ISODuration.format(policy.pauseTimeBetweenBatches)))")
        return lines
    }

    /// The fleet at the end, in text: the instances not as the newest model would have them,
    /// one line per reason (failed, left on an older model and why, rolled back, deleted).
    static func fleet(_ record: RunRecord) -> [String] {
        let summary = record.summary
        var lines: [String] = []
        let failed = Set(summary.failed)
        var rows: [(String, [Int])] = []
        if !failed.isEmpty { rows.append(("counted failed by the latest upgrade", summary.failed.sorted())) }
        for reason in LeftBehind.allCases where reason != .failed || failed.isEmpty {
            let ids = record.instances.filter { $0.leftBehind == reason }.map(\.id)
            if !ids.isEmpty { rows.append(("on an older model, \(reason.rawValue)", ids)) }
        }
        if !summary.rollbackFailed.isEmpty { rows.append(("rollback failed, still on the new model", summary.rollbackFailed)) }
        let gone = record.fleetInstances.filter { !$0.exists }.map(\.id)
        if !gone.isEmpty { rows.append(("deleted", gone)) }
        guard !rows.isEmpty else { return [] }
        let present = record.instances.filter(\.exists)
        let newest = present.map(\.modelVersion).max() ?? 1
        lines.append("The fleet at the end: \(present.count) instances, \(present.count { $0.modelVersion == newest }) on model v\(newest)")
        for (what, ids) in rows {
            let shown = ids.prefix(40).map { id -> String in
                guard let vm = record.instances.first(where: { $0.id == id }) else { return String(id) }
                // A Flexible scale set's VMs have names of their own (its instance ids, SPEC §6b).
                let named = record.orchestration == .flexible ? " (\(vm.name))" : ""
                return "\(id)" + named + (vm.zone.map { " z\($0)" } ?? "") + (vm.exists ? " v\(vm.modelVersion) \(vm.health.rawValue)" : "")
            }
            lines.append("  \(what): " + shown.joined(separator: ", ") + (ids.count > 40 ? " and \(ids.count - 40) more" : ""))
        }
        return lines
    }
}

/// The whole outcome of a run as one JSON document (`run --output json`): the get-latest status,
/// availability, the latest upgrade's duration, the instances failed, rolled back or left
/// behind, and each expectation's result.
public enum RunJSON {
    /// The document for `record`.
    public static func summary(_ record: RunRecord, scaleSet: ScaleSetDefinition) -> JSON {
        let s = record.summary
        let behind = record.instances.filter { $0.leftBehind != nil }
        // Only a run that raised lifecycle hook events has their figures (SPEC §6b).
        let hooks: [JSONField] = s.hooks.events == 0 ? [] : [JSONField("lifecycleHooks", .ordered([
            JSONField("events", .int(s.hooks.events)), JSONField("defaultedEvents", .int(s.hooks.defaultedEvents)),
            JSONField("defaultedTargets", .int(s.hooks.defaultedTargets)),
            JSONField("batchWaitSeconds", .array(s.hooks.batchWaits.map { .int($0 / 1000) })),
            JSONField("totalBatchWaitSeconds", .int(s.hooks.totalBatchWait / 1000)),
            JSONField("rejected", .array(s.hooks.rejected.map(JSON.int))), JSONField("rejectedSchedules", .int(s.hooks.rejectedSchedules)),
        ]))]
        return .ordered([
            JSONField("scaleSet", .string(scaleSet.name)), JSONField("seed", .string(String(record.seed))),
            JSONField("status", s.status?.json() ?? .null),
            JSONField("policy", record.policy.json),
            JSONField("upgrades", .int(record.upgrades)),
            JSONField("upgradeSeconds", s.upgradeStarted.flatMap { start in s.upgradeEnded.map { .int(($0 - start) / 1000) } } ?? .null),
            JSONField("runEndSeconds", .int(s.endTime / 1000)), JSONField("hitTimeLimit", .bool(s.hitTimeLimit)),
            JSONField("lowestHealthy", s.availability.map { .int($0.lowestHealthy) } ?? .null),
            JSONField("lowestHealthyAtSeconds", s.availability.map { .double(Double($0.lowestHealthyAt) / 1000) } ?? .null),
            JSONField("unavailableInstanceSeconds", s.availability.map { .double($0.unavailableInstanceSeconds) } ?? .null),
            JSONField("timeToFinishSeconds", s.availability.map { .double($0.timeToFinishSeconds) } ?? .null),
            JSONField("capacity", .int(s.capacity)),
            JSONField("failed", .array(s.failed.sorted().map(JSON.int))), JSONField("rolledBack", .int(s.rolledBack)),
            JSONField("rollbackFailed", .array(s.rollbackFailed.map(JSON.int))),
            JSONField("skipped", .array(s.skipped.map(JSON.int))), JSONField("protected", .array(s.protected.map(JSON.int))),
            JSONField("leftBehind", .array(behind.map { .ordered([JSONField("id", .int($0.id)), JSONField("reason", .string($0.leftBehind!.rawValue))]) })),
            JSONField("expectations", .array(record.expectations.map(\.json))),
        ] + hooks)
    }
}

extension ExpectationResult {
    /// `{"location":"x.lua:9","key":"code","expected":"Completed","actual":"Faulted","held":false}`.
    public var json: JSON {
        .ordered([JSONField("location", .string(location)), JSONField("key", .string(key.rawValue)), JSONField("expected", .string(ExpectationText.expected(expected))),
                  JSONField("actual", .string(ExpectationText.actual(actual))), JSONField("held", .bool(held))])
    }
}
