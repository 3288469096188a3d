import Foundation
import TextTable
public import UpgradeEngine

/// `rehearse compare`'s table: one row per combination of policy values, with P(Faulted) and its
/// interval, time to finish p50/p95 and lowest healthy p5; the best row marked.
public enum CompareText {
    /// One combination's sweep.
    public struct Row: Sendable {
        /// The sweep of this combination.
        public var report: SweepReport

        /// A row of `report`.
        public init(report: SweepReport) { self.report = report }

        var faulted: Share { Share(report.runs.count { $0.code == "Faulted" }, of: report.total) }
        var p95: Double { report.timeToFinish.percentile(95) ?? .infinity }
    }

    /// The index of the best row: the lowest P(Faulted), ties broken by the lower p95 time to finish.
    public static func best(_ rows: [Row]) -> Int? {
        rows.indices.min { (rows[$0].faulted.fraction, rows[$0].p95, $0) < (rows[$1].faulted.fraction, rows[$1].p95, $1) }
    }

    struct Line {
        var mark: String
        var combination: String
        var faulted: String
        var interval: String
        var p50: String
        var p95: String
        var lowest: String
    }

    /// The table's lines.
    public static func table(_ rows: [Row]) -> [String] {
        let bestIndex = best(rows)
        let lines = rows.enumerated().map { i, row in
            let faulted = row.faulted, (lower, upper) = faulted.interval
            return Line(mark: i == bestIndex ? "*" : "", combination: row.report.overrides.joined(separator: " "),
                        faulted: SweepText.percent(faulted.fraction), interval: "\(SweepText.percent(lower))–\(SweepText.percent(upper))",
                        p50: SweepText.figure(row.report.timeToFinish.percentile(50)), p95: SweepText.figure(row.report.timeToFinish.percentile(95)),
                        lowest: SweepText.figure(row.report.lowestHealthy.percentile(5)))
        }
        let table = TextTable<Line> {
            [Column(title: "", value: $0.mark), Column(title: "Combination", value: $0.combination),
             Column(title: "P(Faulted)", value: $0.faulted, align: .right), Column(title: "95% CI", value: $0.interval, align: .right),
             Column(title: "Finish p50 (s)", value: $0.p50, align: .right), Column(title: "Finish p95 (s)", value: $0.p95, align: .right),
             Column(title: "Lowest healthy p5", value: $0.lowest, align: .right)]
        }
        return (table.string(for: lines, style: Style.simple) ?? "").split(separator: "\n").map(String.init)
    }
}
