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

        /// Each requirement over this combination's runs (empty without requirements).
        public var requirements: [RequirementResult]
        /// What this combination's policy comes to in instances: the batch size and the unhealthy
        /// budget (a disruptive batch larger than the budget shrinks to it).
        public var batchSize: Int?
        /// The unhealthy budget in instances.
        public var unhealthyBudget: Int?

        /// A row of `report`, with its requirements judged and its policy in instances.
        public init(report: SweepReport, requirements: [RequirementResult] = [], batchSize: Int? = nil, unhealthyBudget: Int? = nil) {
            self.report = report
            self.requirements = requirements
            self.batchSize = batchSize
            self.unhealthyBudget = unhealthyBudget
        }

        var faulted: Share { report.runs.faulted }
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
        var deadline: String
        var verdicts: String
    }

    /// Rows that ran identically (every run's digest equal), each group as row indexes, with why
    /// when the policy explains it: batches that both shrink to the same unhealthy budget.
    public static func identical(_ rows: [Row]) -> [(rows: [Int], why: String)] {
        var groups: [[Int]] = []
        for i in rows.indices {
            if let g = groups.firstIndex(where: { rows[$0[0]].report.runs == rows[i].report.runs }) { groups[g].append(i) } else { groups.append([i]) }
        }
        return groups.filter { $0.count > 1 }.map { group in
            let budgets = Set(group.map { rows[$0].unhealthyBudget })
            let shrunk = group.allSatisfy { i in
                guard let size = rows[i].batchSize, let budget = rows[i].unhealthyBudget else { return false }
                return budget > 0 && size >= budget
            }
            if shrunk, budgets.count == 1, let budget = rows[group[0]].unhealthyBudget {
                let sizes = group.map { String(rows[$0].batchSize!) }.joined(separator: ", ")
                return (group, "batches of \(sizes) instances all shrink to the unhealthy budget of \(budget)")
            }
            return (group, "every run ended the same; the fields these rows change made no difference to them")
        }
    }

    /// The table's lines.
    public static func table(_ rows: [Row]) -> [String] {
        let bestIndex = best(rows)
        let lines = rows.enumerated().map { i, row in
            let faulted = row.faulted
            return Line(mark: i == bestIndex ? "*" : "", combination: row.report.overrides.joined(separator: " "),
                        faulted: SweepText.percent(faulted.fraction), interval: Figures.interval(faulted),
                        p50: SweepText.figure(row.report.timeToFinish.percentile(50)), p95: SweepText.figure(row.report.timeToFinish.percentile(95)),
                        lowest: SweepText.figure(row.report.lowestHealthy.percentile(5)),
                        deadline: row.report.pastDeadline.map { SweepText.percent(1 - $0.fraction) } ?? "-",
                        verdicts: row.requirements.map { $0.verdict.rawValue }.joined(separator: ", "))
        }
        let table = TextTable<Line> {
            [Column(title: "", value: $0.mark), Column(title: "Combination", value: $0.combination),
             Column(title: "P(Faulted)", value: $0.faulted, align: .right), Column(title: "95% CI", value: $0.interval, align: .right),
             Column(title: "Finish p50 (s)", value: $0.p50, align: .right), Column(title: "Finish p95 (s)", value: $0.p95, align: .right),
             Column(title: "Lowest healthy p5", value: $0.lowest, align: .right)]
                + (rows.contains { $0.report.deadline != nil }
                    ? [Column(title: "Within " + (rows.compactMap(\.report.deadline).first.map(Figures.both) ?? "deadline"), value: $0.deadline, align: .right)] : [])
                + (rows.contains { !$0.requirements.isEmpty } ? [Column(title: "Requirements", value: $0.verdicts)] : [])
        }
        let text = (table.string(for: lines, style: Style.simple) ?? "").split(separator: "\n").map(String.init)
        return text + notes(rows)
    }

    /// The sentences under the table: which rows ran identically, and why.
    public static func notes(_ rows: [Row]) -> [String] {
        identical(rows).map { group, why in "Rows \(group.map { String($0 + 1) }.joined(separator: ", ")) ran identically: \(why)." }
    }
}
