import AzureWire
import Formats
import Foundation
import Reports
import UpgradeEngine

/// What `diff` found and rehearsed, rendered as Markdown for a pull request comment or as JSON.
/// Every piece of document text (a field path, a value, a Terraform address, a file name) reaches
/// the Markdown through `MarkdownText.code` only.
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
    /// The requirements' verdicts, with --require.
    var gate: DiffGate?

    /// Runs whose upgrade had ended by the deadline (and did not stop at the time limit).
    var withinDeadline: Share {
        let seconds = Double(deadline) / 1000
        return Share(runs.count { !$0.hitTimeLimit && ($0.timeToFinish ?? 0) <= seconds }, of: runs.count)
    }

    /// Whether any instance restarts because of the change.
    var restarts: Bool {
        diff.consequences.contains(.replacement) || (diff.disruptive && [.rollingUpgradeNow, .allAtOnce, .terraformRollsEachInstance].contains { diff.consequences.contains($0) })
    }

    /// The faulted runs by Azure's error code, most first (then by code).
    var faults: [(code: UpgradeErrorCode, runs: Int)] {
        let counts = Dictionary(grouping: runs.compactMap { $0.code == .faulted ? $0.errorCode : nil }, by: { $0 }).mapValues(\.count)
        return counts.sorted { ($0.value, $1.key.rawValue) > ($1.value, $0.key.rawValue) }.map { ($0.key, $0.value) }
    }

    /// Why the upgrade faults with `code`, from the policy's arithmetic.
    func why(_ code: UpgradeErrorCode) -> String {
        let budget = arithmetic.map { a -> (Int, Int) in
            code == .unhealthyUpgraded ? (a.upgradedBudget, a.capacity) : (a.unhealthyBudget, a.capacity)
        }
        let figures = budget.map { " (the policy allows \($0.0) of \($0.1))" } ?? ""
        switch code {
        case .unhealthyBeforeUpgrade: return "more instances were unhealthy before the first batch than maxUnhealthyInstancePercent allows\(figures)"
        case .unhealthyDuringUpgrade: return "more instances were unhealthy before a later batch than maxUnhealthyInstancePercent allows\(figures)"
        case .unhealthyUpgraded: return "more upgraded instances were unhealthy or failed after a batch than maxUnhealthyUpgradedInstancePercent allows\(figures)"
        }
    }

    /// One sentence per consequence, in the order they happen.
    var sentences: [String] {
        diff.consequences.map { consequence in
            switch consequence {
            case .rollingUpgradeNow:
                let how = diff.disruptive ? "each batch down while it is upgraded" : "in place: instances keep running"
                return "**A rolling upgrade starts now** (Rolling): every instance is upgraded in batches, \(how). terraform apply (or the deployment) returns once the model is updated; it does not wait for the rolling upgrade."
            case .waitsForManualUpgrade:
                return "**The instances wait** (Manual): the model changes, and none of the \(capacity) instances is upgraded until someone runs az vmss update-instances; nothing restarts now."
            case .terraformRollsEachInstance:
                return "**terraform apply upgrades each instance itself** (Manual, azurerm's defaults roll_instances_when_required and reimage_on_manual_upgrade): each of the \(capacity) out-of-date instances is updated and then reimaged, one at a time, and apply waits for every one within its update timeout."
            case .allAtOnce:
                return "**Every instance at once** (Automatic): all \(capacity) instances are upgraded together\(diff.disruptive ? " and go down together" : ", in place")."
            case .zonesAddedInPlace:
                return "**Zones are added in place**: existing instances stay in their zones; instances created from now on spread over every zone."
            case .nextUpgradePolicyOnly:
                return "**Only the next upgrade's policy changes**: no instance restarts now."
            case .scaleSetOnly:
                return "**Only the scale set resource changes** (tags or properties outside the VM model): no instance restarts."
            case .capacityChange:
                return "**A capacity change**: instances are created or deleted; the others keep running."
            case .replacement:
                return "**The scale set is replaced**: it is deleted and created again; every instance goes."
            case .none:
                return "**No change** the running fleet would notice."
            }
        }
    }

    /// What the deadline is measured against, as `terraform apply` waits (azurerm's update code):
    /// under Rolling it returns once the model is updated, without waiting for the rolling
    /// upgrade; under Manual with its defaults it waits for every instance it rolls.
    var deadlineRow: String {
        let limit = ISODuration.format(deadline)
        if diff.consequences.contains(.terraformRollsEachInstance) {
            return "terraform apply's roll of every instance ended within \(limit) (apply waits for it; past its update timeout apply fails)"
        }
        if diff.consequences.contains(.rollingUpgradeNow) {
            return "Rolling upgrade ended within \(limit) (terraform apply and a deployment do not wait for it)"
        }
        return "Ended within \(limit)"
    }

    static func duration(_ seconds: Double?) -> String { seconds.map { ISODuration.format(Millis($0 * 1000)) } ?? "—" }

    static func percentText(_ fraction: Double) -> String { String(format: "%.1f%%", fraction * 100) }

    static func percent(_ share: Share) -> String {
        let (low, high) = share.interval
        return "\(Self.percentText(share.fraction)) (\(Self.percentText(low))–\(Self.percentText(high))), \(share.count) of \(share.total)"
    }

    /// The comment when `diff` refuses its input (exit 2): what it says, each line as code.
    static func refusal(_ messages: [String], label: String) -> [String] {
        ["### rehearse diff: \(MarkdownText.code(label)) refused", "", "The documents could not be compared (exit 2):", ""]
            + messages.map { "- \(MarkdownText.code($0))" }
    }

    var markdown: [String] {
        let code = MarkdownText.code
        var lines = ["### rehearse diff: \(code(label, false))", "", "| Field | Before | After | Class | Why |", "|---|---|---|---|---|"]
        for change in diff.changes {
            lines.append("| \(code(change.field, true)) | \(code(change.before, true)) | \(code(change.after, true)) | \(change.kind.rawValue) | \(MarkdownText.plain(change.why)) (source: \(MarkdownText.plain(change.source))) |")
        }
        if diff.changes.isEmpty { lines.append("| (none) | | | | |") }
        lines.append("")
        lines.append(diff.modelChange ? "A model change (\(diff.disruptive ? "takes instances down" : "in place")), mode \(mode.rawValue)." : "No model change, mode \(mode.rawValue).")
        lines += sentences.map { "- \($0)" }
        lines += diff.replacedBy.map { "- Replaced because \(code($0.field, false)) changes: \(MarkdownText.plain($0.why))." }
        if diff.replacedBy.isEmpty, let actions = diff.actions, diff.consequences == [.replacement] {
            lines.append("- Replaced because the plan's actions are \(code(actions.joined(separator: ", "), false)).")
        }
        lines += diff.keptByPlan.map { "- \(code($0.field, false)) would force a new scale set, but this plan's actions are \(code((diff.actions ?? []).joined(separator: ", "), false)): it is updated in place." }
        if let arithmetic, let policy {
            lines += ["", "#### Batch plan", "```"]
            lines += RunText.arithmetic(arithmetic, policy: policy).map { $0.replacingOccurrences(of: "```", with: "'''") }
            lines.append("```")
            if !arithmetic.fragilities.isEmpty {
                // A warning names a zone as the document does: code, as every document text.
                lines += ["", "#### Warnings"] + arithmetic.fragilities.map { "- \(code($0.field, false)): \(code($0.message, false))" }
            }
        }
        if let runs = rehearsalLines { lines += runs }
        if let gate { lines += gate.markdown }
        return lines
    }

    var rehearsalLines: [String]? {
        guard !runs.isEmpty, let seeds else { return nil }
        let durations = runs.timeToFinish, lowest = runs.lowestHealthy
        var lines = ["", "#### Rehearsal: \(runs.count) runs (seeds \(seeds)), behaviours: \(MarkdownText.code(behaviours))", "", "| | |", "|---|---|"]
        lines.append("| Duration p50 / p95 / max | \(Self.duration(durations.percentile(50))) / \(Self.duration(durations.percentile(95))) / \(Self.duration(durations.percentile(100))) |")
        lines.append("| P(Faulted) | \(Self.percent(runs.faulted)) |")
        lines.append("| Lowest healthy p5 / min | \(lowest.percentile(5).map { String(Int($0)) } ?? "—") / \(lowest.percentile(0).map { String(Int($0)) } ?? "—") of \(capacity) |")
        lines.append("| \(deadlineRow) | \(Self.percent(withinDeadline)) |")
        lines.append("| Instances restart | \(restarts ? "yes" : "no") |")
        for fault in faults {
            lines.append("| Faulted \(fault.runs) of \(runs.count): \(fault.code.rawValue) | \(why(fault.code)) |")
        }
        return lines
    }

    var json: JSON {
        let durations = runs.timeToFinish, lowest = runs.lowestHealthy
        func share(_ s: Share) -> JSON {
            .ordered([JSONField("count", .int(s.count)), JSONField("total", .int(s.total)), JSONField("fraction", .double(s.fraction))])
        }
        func number(_ value: Double?) -> JSON { value.map { .double($0) } ?? .null }
        func text(_ s: String?) -> JSON { s.map(JSON.string) ?? .null }
        var fields = [
            JSONField("change", .string(label)), JSONField("mode", .string(mode.rawValue)), JSONField("capacity", .int(capacity)),
            JSONField("changes", .array(diff.changes.map { c in
                .ordered([JSONField("field", .string(c.field)), JSONField("kind", .string(c.kind.rawValue)), JSONField("before", text(c.before)),
                          JSONField("after", text(c.after)), JSONField("why", .string(c.why)), JSONField("source", .string(c.source))])
            })),
            JSONField("modelChange", .bool(diff.modelChange)), JSONField("disruptive", .bool(diff.disruptive)),
            JSONField("consequences", .array(diff.consequences.map { .string($0.rawValue) })), JSONField("instancesRestart", .bool(restarts)),
            JSONField("actions", diff.actions.map { .array($0.map(JSON.string)) } ?? .null),
            JSONField("replacedBy", .array(diff.replacedBy.map { .ordered([JSONField("field", .string($0.field)), JSONField("why", .string($0.why))]) })),
        ]
        fields.append(JSONField("plan", arithmetic.map { a in
            .ordered([JSONField("batches", .int(a.batchesByGroup.map(\.batches).reduce(0, +))), JSONField("batchSize", .int(a.batchSize)),
                      JSONField("unhealthyBudget", .int(a.unhealthyBudget)), JSONField("shortestDurationSeconds", .int(a.shortestDuration / 1000)),
                      JSONField("warnings", .array(a.fragilities.map { .ordered([JSONField("field", .string($0.field)), JSONField("message", .string($0.message))]) }))])
        } ?? .null))
        fields.append(JSONField("rehearsal", runs.isEmpty ? .null : .ordered([
            JSONField("runs", .int(runs.count)), JSONField("seeds", .string(seeds.map { "\($0)" } ?? "")), JSONField("behaviours", .string(behaviours)),
            JSONField("durationSeconds", .ordered([JSONField("p50", number(durations.percentile(50))), JSONField("p95", number(durations.percentile(95))),
                                                   JSONField("max", number(durations.percentile(100)))])),
            JSONField("faulted", share(runs.faulted)),
            JSONField("faults", .array(faults.map { .ordered([JSONField("errorCode", .string($0.code.rawValue)), JSONField("runs", .int($0.runs)),
                                                              JSONField("why", .string(why($0.code)))]) })),
            JSONField("lowestHealthy", .ordered([JSONField("p5", number(lowest.percentile(5))), JSONField("min", number(lowest.percentile(0)))])),
            JSONField("deadlineSeconds", .int(deadline / 1000)), JSONField("withinDeadline", share(withinDeadline)),
        ])))
        if let gate { fields += gate.json }
        return .ordered(fields)
    }
}
