import Formats
import Foundation
import TextTable
public import UpgradeEngine

/// A sweep as a person reads it: tables of outcomes, error codes and expectations with their
/// 95% intervals, the distributions, the deadline, the instances most often in trouble. Made
/// from the report alone, so the same report prints the same text.
public enum SweepText {
    /// A share row: what, runs, share, interval.
    struct ShareRow {
        var label: String
        var share: Share
        var runs: String { String(share.count) }
        var percent: String { SweepText.percent(share.fraction) }
        var interval: String { Figures.interval(share) }
    }

    /// A distribution row: what, then one value per column.
    struct FigureRow {
        var label: String
        var values: [String]
    }

    /// `12.3%`.
    static func percent(_ fraction: Double) -> String { String(format: "%.1f%%", fraction * 100) }

    /// A figure as printed: whole numbers without decimals, others with one (a double too large
    /// for `Int` is formatted, not converted).
    static func figure(_ value: Double?) -> String {
        guard let value else { return "-" }
        guard value == value.rounded() else { return String(format: "%.1f", value) }
        return abs(value) < 1e15 ? String(Int(value)) : String(format: "%.0f", value)
    }

    static func shareTable(_ title: String, _ rows: [ShareRow]) -> [String] {
        let table = TextTable<ShareRow> {
            [Column(title: title, value: $0.label), Column(title: "Runs", value: $0.runs, align: .right),
             Column(title: "Share", value: $0.percent, align: .right), Column(title: "95% CI", value: $0.interval, align: .right)]
        }
        // A table without rows (an empty shard's part) is no lines, not a trap.
        return (table.string(for: rows, style: Style.simple) ?? "").split(separator: "\n").map(String.init)
    }

    static func figureTable(_ columns: [String], _ rows: [FigureRow]) -> [String] {
        let table = TextTable<FigureRow> { row in
            [Column(title: "Figure", value: row.label)]
                + columns.enumerated().map { i, name in Column(title: name, value: row.values[i], align: .right) }
        }
        // A table without rows (an empty shard's part) is no lines, not a trap.
        return (table.string(for: rows, style: Style.simple) ?? "").split(separator: "\n").map(String.init)
    }

    /// The percentiles of a figure whose bad tail is high (times, lost capacity), and of one whose
    /// bad tail is low (lowest healthy, a minimum); the text and the page head their columns with
    /// `percentileHead`, so a column is always named as what it holds.
    static let highPercentiles: [Double] = [50, 90, 95, 99, 100]
    static let lowPercentiles: [Double] = [50, 10, 5, 1, 0]

    /// `p50`, `p10`, `max` (100) or `min` (0).
    static func percentileHead(_ p: Double) -> String { p == 100 ? "max" : p == 0 ? "min" : "p" + figure(p) }

    /// The whole report.
    public static func report(_ r: SweepReport) -> [String] {
        var lines = ["Sweep of \(r.scenario), seeds \(r.seeds) (\(r.total) run\(r.total == 1 ? "" : "s"))"]
        if !r.overrides.isEmpty { lines.append("Overrides: " + r.overrides.joined(separator: ", ")) }
        lines.append("")
        lines += shareTable("Outcome", Figures.outcomes(r).map { ShareRow(label: $0.code, share: $0.share) })
        if !r.errorCodes.isEmpty {
            lines.append("")
            lines += shareTable("Error code", r.errorCodes.map { ShareRow(label: $0.code, share: $0.share) })
        }
        if !r.held.isEmpty {
            lines.append("")
            lines += shareTable("Expectation held", r.held.map {
                ShareRow(label: "\($0.key.location) \($0.key.key.rawValue) = \($0.key.expected)", share: $0.share)
            })
        }
        lines.append("")
        let high = highPercentiles
        lines += figureTable(high.map(percentileHead), [
            FigureRow(label: "Time to finish (s)", values: high.map { figure(r.timeToFinish.percentile($0)) }),
            FigureRow(label: "Time to finish", values: high.map { r.timeToFinish.percentile($0).map { Figures.human(seconds: $0) } ?? "-" }),
            FigureRow(label: "Unavailable (instance-s)", values: high.map { figure(r.unavailable.percentile($0)) }),
        ])
        lines.append("")
        // Lowest healthy is a minimum: its bad tail is the low end.
        lines += figureTable(lowPercentiles.map(percentileHead), [
            FigureRow(label: "Lowest healthy", values: lowPercentiles.map { figure(r.lowestHealthy.percentile($0)) }),
        ])
        if let deadline = r.deadline, let past = r.pastDeadline {
            let row = ShareRow(label: "", share: past)
            lines += ["", "Not ended by \(Figures.both(deadline)): \(past.count) of \(r.total) runs (\(row.percent), 95% CI \(row.interval))"]
        }
        let failed = r.failedMostOften(), behind = r.leftBehindMostOften()
        if !failed.isEmpty || !behind.isEmpty { lines.append("") }
        if !failed.isEmpty {
            lines.append("Failed most often: " + failed.map { "\($0.id) in \($0.share.count) runs (\(percent($0.share.fraction)))" }.joined(separator: ", "))
        }
        if !behind.isEmpty {
            lines.append("Left behind most often: " + behind.map { "\($0.id) in \($0.share.count) runs (\(percent($0.share.fraction)))" }.joined(separator: ", "))
        }
        if let fired = r.defaultActionFired {
            let row = ShareRow(label: "", share: fired)
            lines += ["", "Lifecycle hooks: a defaultAction fired in \(fired.count) of \(r.total) runs (\(row.percent), 95% CI \(row.interval))"]
            lines.append("  batch wait per upgrade (s): p50 \(figure(r.hookWait.percentile(50))), p95 \(figure(r.hookWait.percentile(95))), max \(figure(r.hookWait.percentile(100)))")
            let rejected = r.hookRejectedMostOften()
            if !rejected.isEmpty {
                lines.append("  rejected most often: " + rejected.map { "\($0.id) in \($0.share.count) runs (\(percent($0.share.fraction)))" }.joined(separator: ", "))
            }
        }
        while lines.last == "" { lines.removeLast() }
        return lines
    }
}
