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
            lines += ["Final status (az vmss rolling-upgrade get-latest):", status]
        } else {
            lines.append("No rolling upgrade ran.")
        }
        if !summary.osUpgradeHistory.isEmpty {
            lines += ["OS image upgrade history (az vmss get-os-upgrade-history):", history(record, scaleSet: scaleSet).serialized()]
        }
        if !summary.skipped.isEmpty { lines.append("Skipped (SkipUpgrade): \(summary.skipped)") }
        if !summary.protected.isEmpty { lines.append("Protected (protectFromScaleSetActions): \(summary.protected)") }
        if !summary.rollbackFailed.isEmpty { lines.append("Rollback failed (still on the new model): \(summary.rollbackFailed)") }
        let behind = record.instances.filter { $0.leftBehind != nil }
        if !behind.isEmpty {
            let byReason = LeftBehind.allCases.compactMap { reason -> String? in
                let ids = behind.filter { $0.leftBehind == reason }.map(\.id)
                return ids.isEmpty ? nil : "\(reason.rawValue) \(ids)"
            }
            lines.append("Not on the newest model: " + byReason.joined(separator: ", "))
        }
        if let a = summary.availability {
            lines.append("Availability: lowest healthy \(a.lowestHealthy) (capacity \(summary.capacity)), "
                + "\(String(format: "%.0f", a.unavailableInstanceSeconds)) instance-seconds unavailable, "
                + "finished in \(ISODuration.format(Int(a.timeToFinishSeconds * 1000)))")
        }
        if summary.hitTimeLimit { lines.append("Stopped at the time limit with work left.") }
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
        }
        if plan.batches.isEmpty { lines.append("no batches: no instance needs an upgrade") }
        if !plan.withoutMetrics.isEmpty { lines.append("without metrics (latest answer not Healthy): \(plan.withoutMetrics)") }
        lines.append("skipped: \(plan.skipped)")
        lines.append("protected: \(plan.protected)")
        return lines
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
        lines.append("  shortest duration     \(ISODuration.format(a.shortestDuration)) (every instance back and Healthy at once; pauses \(ISODuration.format(policy.pauseTimeBetweenBatches)))")
        return lines
    }
}
