public import Formats
import Foundation
import TextTable
public import UpgradeEngine

/// Requirements judged over a sweep, and `tune`'s search, as a person and a program read them.
public enum RiskText {
    struct RequirementLine {
        var requirement: String
        var runs: String
        var share: String
        var interval: String
        var verdict: String
    }

    /// One row per requirement: the share, its confidence-sequence interval, the runs, the verdict.
    public static func requirements(_ results: [RequirementResult], confidence: Double) -> [String] {
        let lines = results.map { r in
            RequirementLine(requirement: ScriptText.escaped(r.requirement.description), runs: "\(r.share.count)/\(r.share.total)",
                            share: SweepText.percent(r.share.fraction),
                            interval: Figures.range(r.lower, r.upper), verdict: r.verdict.rawValue)
        }
        let level = Requirement.percentText(confidence)
        let table = TextTable<RequirementLine> {
            [Column(title: "Requirement", value: $0.requirement), Column(title: "Runs", value: $0.runs, align: .right),
             Column(title: "Share", value: $0.share, align: .right), Column(title: "\(level)% CS", value: $0.interval, align: .right),
             Column(title: "Verdict", value: $0.verdict)]
        }
        return table.string(for: lines, style: Style.simple)!.split(separator: "\n").map(String.init)
    }

    /// One requirement's result in a line: `Faulted <= 5%: failed, 77 of 1000 runs (7.7%), interval 5.2%–10.8% at 95%`.
    public static func summary(_ r: RequirementResult) -> String {
        "\(r.requirement): \(r.verdict.rawValue), \(r.share.count) of \(r.share.total) runs (\(SweepText.percent(r.share.fraction))), interval "
            + "\(Figures.range(r.lower, r.upper)) at \(Requirement.percentText(r.confidence))%"
    }

    /// The requirements as JSON: each with its share, interval, runs and verdict.
    public static func json(_ results: [RequirementResult], confidence: Double) -> JSON {
        .array(results.map { r in
            .ordered([JSONField("requirement", .string(r.requirement.description)), JSONField("verdict", .string(r.verdict.rawValue)),
                      JSONField("runs", .int(r.share.count)), JSONField("of", .int(r.share.total)),
                      JSONField("share", .double(SweepJSON.rounded(r.share.fraction))),
                      JSONField("interval", .array([.double(SweepJSON.rounded(r.lower)), .double(SweepJSON.rounded(r.upper))])),
                      JSONField("confidence", .double(confidence))])
        })
    }

    struct CandidateLine {
        var mark: String
        var label: String
        var standing: String
        var runs: String
        var faulted: String
        var objective: String
        var p95: String
        var lowest: String
        var decidedBy: String
    }

    /// The requirements that decided a candidate's standing: for an infeasible one those that
    /// failed, for an undecided one those still undecided, each with its share and interval
    /// (`Faulted <= 2%: 9 of 60 (15.0%, 7.8%–26.1%)`); empty for the others.
    public static func decidedBy(_ c: Tune.Result) -> [String] {
        let verdict: Requirement.Verdict
        switch c.standing {
        case .infeasible: verdict = .failed
        case .undecided: verdict = .undecided
        case .feasible, .dominated: return []
        }
        return c.requirements.filter { $0.verdict == verdict }.map { r in
            "\(ScriptText.escaped(r.requirement.description)) \(r.verdict.rawValue): \(r.share.count) of \(r.share.total) (\(SweepText.percent(r.share.fraction)), \(Figures.range(r.lower, r.upper)))"
        }
    }

    /// `tune`'s outcome: every candidate (the best marked `*`, the Pareto front `+`), then the runs
    /// spent against the grid's.
    public static func tune(_ outcome: Tune.Outcome, objective: Tune.Objective) -> [String] {
        let lines = outcome.candidates.enumerated().map { i, c in
            let faulted = c.runs.faulted
            let mark = (i == outcome.best ? "*" : "") + (outcome.front.contains(i) ? "+" : "")
            return CandidateLine(mark: mark, label: ScriptText.escaped(c.label.joined(separator: " ")), standing: c.standing.rawValue,
                                 runs: String(c.runs.count),
                                 faulted: "\(SweepText.percent(faulted.fraction)) (\(Figures.interval(faulted)))",
                                 objective: SweepText.figure(c.objective.estimate), p95: SweepText.figure(c.runs.timeToFinish.percentile(95)),
                                 lowest: SweepText.figure(c.runs.lowestHealthy.percentile(5)),
                                 decidedBy: decidedBy(c).joined(separator: "; "))
        }
        let table = TextTable<CandidateLine> {
            [Column(title: "", value: $0.mark), Column(title: "Candidate", value: $0.label), Column(title: "Standing", value: $0.standing),
             Column(title: "Runs", value: $0.runs, align: .right), Column(title: "P(Faulted) (95% CI)", value: $0.faulted, align: .right),
             Column(title: "Objective", value: $0.objective, align: .right), Column(title: "Finish p95 (s)", value: $0.p95, align: .right),
             Column(title: "Lowest healthy p5", value: $0.lowest, align: .right)]
                + (lines.contains { !$0.decidedBy.isEmpty } ? [Column(title: "Decided by", value: $0.decidedBy)] : [])
        }
        var text = table.string(for: lines, style: Style.simple)!.split(separator: "\n").map(String.init)
        text.append("")
        if let best = outcome.best {
            text.append("Best: \(ScriptText.escaped(outcome.candidates[best].label.joined(separator: " "))) (\(objective) \(SweepText.figure(outcome.candidates[best].objective.estimate)))")
        } else if outcome.candidates.contains(where: { $0.standing == .feasible }) {
            text.append("Best: none (the feasible candidates' runs had no upgrade activity to measure \(objective) on)")
        } else {
            text.append("Best: none (no candidate was shown to meet every requirement)")
        }
        let saved = outcome.gridRuns > 0 ? Double(outcome.runsSpent) / Double(outcome.gridRuns) : 1
        text.append("Runs: \(outcome.runsSpent), against \(outcome.gridRuns) for a grid at the same confidence (\(SweepText.percent(saved)))")
        text.append("* best   + Pareto front (P(Faulted), finish p95, lowest healthy p5)")
        return text
    }

    /// `tune --json`.
    public static func tuneJSON(_ outcome: Tune.Outcome, objective: Tune.Objective, confidence: Double) -> JSON {
        .ordered([
            JSONField("objective", .string(objective.description)),
            JSONField("best", outcome.best.map { .int($0) } ?? .null),
            JSONField("runsSpent", .int(outcome.runsSpent)), JSONField("gridRuns", .int(outcome.gridRuns)),
            JSONField("front", .array(outcome.front.map { .int($0) })),
            JSONField("candidates", .array(outcome.candidates.enumerated().map { i, c in
                return .ordered([
                    JSONField("index", .int(i)), JSONField("overrides", .array(c.label.map(JSON.string))),
                    JSONField("standing", .string(c.standing.rawValue)), JSONField("runs", .int(c.runs.count)),
                    JSONField("decidedBy", .array(c.requirements.filter { r in
                        (c.standing == .infeasible && r.verdict == .failed) || (c.standing == .undecided && r.verdict == .undecided)
                    }.map { .string($0.requirement.description) })),
                    JSONField("decidedAfter", c.decidedAfter.map { .int($0) } ?? .null),
                    JSONField("requirements", json(c.requirements, confidence: confidence)),
                    JSONField("objective", .ordered([JSONField("estimate", c.objective.estimate.map { .double(SweepJSON.rounded($0)) } ?? .null),
                                                     JSONField("lower", c.objective.lower.map { .double($0) } ?? .null),
                                                     JSONField("upper", c.objective.upper.map { .double($0) } ?? .null)])),
                    JSONField("faulted", SweepJSON.share(c.runs.faulted, [])),
                    JSONField("timeToFinishSeconds", SweepJSON.distribution(c.runs.timeToFinish, [50, 95])),
                    JSONField("lowestHealthy", SweepJSON.distribution(c.runs.lowestHealthy, [5])),
                ])
            })),
        ])
    }
}
