import AzureWire
import Formats
import Foundation
import Reports
import UpgradeEngine

/// What `diff` found and rehearsed, rendered as Markdown for a pull request comment or as JSON.
struct DiffReport {
    /// The change's name (a Terraform address, or the two files).
    var label: String
    /// The upgrade mode after the change.
    var mode: UpgradeMode
    /// Instances before the change.
    var capacity: Int
    /// The fields and what follows.
    var diff: ScaleSetDiff
    /// The deadline the runs are measured against, in ms.
    var deadline: Millis
    /// Where the behaviours came from.
    var behaviours = ""
    /// The batches in numbers, when a rolling upgrade follows.
    var arithmetic: PolicyArithmetic?
    /// The rolling policy the upgrade uses.
    var policy: RollingUpgradePolicy?
    /// The rehearsal's runs (none when nothing happens to the fleet, or it is replaced).
    var runs: [RunDigest] = []
    /// Their seeds.
    var seeds: SeedRange?

    /// Runs whose upgrade had ended by the deadline (and did not stop at the time limit).
    var withinDeadline: Share {
        let seconds = Double(deadline) / 1000
        return Share(runs.count { !$0.hitTimeLimit && ($0.timeToFinish ?? 0) <= seconds }, of: runs.count)
    }

    /// Whether any instance restarts because of the change.
    var restarts: Bool {
        diff.consequences.contains(.replacement) || (diff.disruptive && (diff.consequences.contains(.rollingUpgradeNow) || diff.consequences.contains(.allAtOnce)))
    }

    /// One sentence per consequence, in the order they happen.
    var sentences: [String] {
        diff.consequences.map { consequence in
            switch consequence {
            case .rollingUpgradeNow:
                let how = diff.disruptive ? "each batch down while it is upgraded" : "in place: instances keep running"
                return "**A rolling upgrade starts now** (Rolling): every instance is upgraded in batches, \(how)."
            case .waitsForManualUpgrade:
                return "**The instances wait** (Manual): the model changes, and none of the \(capacity) instances is upgraded until someone runs az vmss update-instances; nothing restarts now."
            case .allAtOnce:
                return "**Every instance at once** (Automatic): all \(capacity) instances are upgraded together\(diff.disruptive ? " and go down together" : ", in place")."
            case .nextUpgradePolicyOnly:
                return "**Only the next upgrade's policy changes**: no instance restarts now."
            case .capacityChange:
                return "**A capacity change**: instances are created or deleted; the others keep running."
            case .replacement:
                return "**The scale set is replaced**: zones, orchestration or fault domains cannot change in place (Terraform deletes and creates it); every instance goes."
            case .none:
                return "**No change** the running fleet would notice."
            }
        }
    }

    /// A Markdown table cell: pipes and line breaks escaped.
    static func cell(_ text: String?) -> String {
        guard let text else { return "—" }
        return "`" + text.replacingOccurrences(of: "|", with: "\\|").replacingOccurrences(of: "\n", with: " ").replacingOccurrences(of: "`", with: "'") + "`"
    }

    static func duration(_ seconds: Double?) -> String { seconds.map { ISODuration.format(Millis($0 * 1000)) } ?? "—" }

    static func percentText(_ fraction: Double) -> String { String(format: "%.1f%%", fraction * 100) }

    static func percent(_ share: Share) -> String {
        let (low, high) = share.interval
        return "\(Self.percentText(share.fraction)) (\(Self.percentText(low))–\(Self.percentText(high))), \(share.count) of \(share.total)"
    }

    var markdown: [String] {
        var lines = ["### rehearse diff: \(label)", "", "| Field | Before | After |", "|---|---|---|"]
        for change in diff.changes { lines.append("| \(change.field) | \(Self.cell(change.before)) | \(Self.cell(change.after)) |") }
        if diff.changes.isEmpty { lines.append("| (none) | | |") }
        lines.append("")
        lines.append(diff.modelChange ? "A model change (\(diff.disruptive ? "takes instances down" : "in place")), mode \(mode.rawValue)." : "No model change, mode \(mode.rawValue).")
        lines += sentences.map { "- \($0)" }
        if let arithmetic, let policy {
            lines += ["", "#### Batch plan", "```"]
            lines += RunText.arithmetic(arithmetic, policy: policy)
            lines.append("```")
        }
        guard !runs.isEmpty, let seeds else { return lines }
        let durations = runs.timeToFinish, lowest = runs.lowestHealthy
        lines += ["", "#### Rehearsal: \(runs.count) runs (seeds \(seeds)), behaviours: \(behaviours)", "", "| | |", "|---|---|"]
        lines.append("| Duration p50 / p95 / max | \(Self.duration(durations.percentile(50))) / \(Self.duration(durations.percentile(95))) / \(Self.duration(durations.percentile(100))) |")
        lines.append("| P(Faulted) | \(Self.percent(runs.faulted)) |")
        lines.append("| Lowest healthy p5 / min | \(lowest.percentile(5).map { String(Int($0)) } ?? "—") / \(lowest.percentile(0).map { String(Int($0)) } ?? "—") of \(capacity) |")
        lines.append("| Ended within \(ISODuration.format(deadline)) | \(Self.percent(withinDeadline)) |")
        lines.append("| Instances restart | \(restarts ? "yes" : "no") |")
        return lines
    }

    var json: JSON {
        let durations = runs.timeToFinish, lowest = runs.lowestHealthy
        func share(_ s: Share) -> JSON {
            .ordered([JSONField("count", .int(s.count)), JSONField("total", .int(s.total)), JSONField("fraction", .double(s.fraction))])
        }
        func number(_ value: Double?) -> JSON { value.map { .double($0) } ?? .null }
        var fields = [
            JSONField("change", .string(label)), JSONField("mode", .string(mode.rawValue)), JSONField("capacity", .int(capacity)),
            JSONField("changes", .array(diff.changes.map { c in
                .ordered([JSONField("field", .string(c.field)), JSONField("kind", .string(c.kind.rawValue)),
                          JSONField("before", c.before.map(JSON.string) ?? .null), JSONField("after", c.after.map(JSON.string) ?? .null)])
            })),
            JSONField("modelChange", .bool(diff.modelChange)), JSONField("disruptive", .bool(diff.disruptive)),
            JSONField("consequences", .array(diff.consequences.map { .string($0.rawValue) })), JSONField("instancesRestart", .bool(restarts)),
        ]
        fields.append(JSONField("plan", arithmetic.map { a in
            .ordered([JSONField("batches", .int(a.batchesByGroup.map(\.batches).reduce(0, +))), JSONField("batchSize", .int(a.batchSize)),
                      JSONField("unhealthyBudget", .int(a.unhealthyBudget)), JSONField("shortestDurationSeconds", .int(a.shortestDuration / 1000))])
        } ?? .null))
        fields.append(JSONField("rehearsal", runs.isEmpty ? .null : .ordered([
            JSONField("runs", .int(runs.count)), JSONField("seeds", .string(seeds.map { "\($0)" } ?? "")), JSONField("behaviours", .string(behaviours)),
            JSONField("durationSeconds", .ordered([JSONField("p50", number(durations.percentile(50))), JSONField("p95", number(durations.percentile(95))),
                                                   JSONField("max", number(durations.percentile(100)))])),
            JSONField("faulted", share(runs.faulted)),
            JSONField("lowestHealthy", .ordered([JSONField("p5", number(lowest.percentile(5))), JSONField("min", number(lowest.percentile(0)))])),
            JSONField("deadlineSeconds", .int(deadline / 1000)), JSONField("withinDeadline", share(withinDeadline)),
        ])))
        return .ordered(fields)
    }
}
