import AzureWire
import Formats
import Reports
import Scenario
import UpgradeEngine

/// `explain`'s renderings: the causal chain in a few lines, every candidate tried, the smallest
/// change that passes; and the same as one JSON document.
enum ExplainText {
    /// The explanation as text lines.
    static func lines(_ e: Explanation, scenario: String) -> [String] {
        var lines = ["Seed \(e.seed) of \(scenario): \(verdict(e.outcome))", ""]
        lines.append("Why:")
        lines += e.chain.map { "  " + line($0) }
        if e.chain.isEmpty { lines.append("  no rolling upgrade ran and every expectation held") }
        guard !e.passed else { return lines + ["", "The run passes as given: nothing to change."] }
        lines += ["", "Tried with the same seed (\(e.candidates.count) runs):"]
        for c in e.candidates {
            lines.append("  \(c.passed ? "passes" : "fails ") \(c.change.map(\.description).joined(separator: " + ")): \(verdict(c))")
        }
        lines.append("")
        if e.passing.isEmpty {
            let searched = e.searchedPairs ? "no single change and no pair of changes tried" : "no single change tried"
            lines.append("No change found: \(searched) makes seed \(e.seed) pass\(e.exhausted ? " (the search stopped at its bound of runs)" : "").")
        } else {
            lines.append(e.searchedPairs ? "No single change passes; the smallest pairs that do:" : "The smallest changes that pass seed \(e.seed), one per field:")
            lines += e.passing.map { "  --set " + $0.map(\.description).joined(separator: " --set ") }
        }
        return lines
    }

    /// `Completed`, `Faulted (MaxUnhealthy…)`, with the lowest healthy and the failed expectations.
    static func verdict(_ c: CandidateOutcome) -> String {
        let d = c.digest
        var text = d.code?.rawValue ?? "no upgrade"
        if let error = d.errorCode { text += " (\(error.rawValue))" }
        if let low = d.lowestHealthy { text += ", lowest healthy \(low)" }
        if let time = d.timeToFinish { text += ", \(ISODuration.format(Millis(time * 1000)))" }
        if d.hitTimeLimit { text += ", stopped at the time limit" }
        if !c.failedKeys.isEmpty { text += ", expect \(c.failedKeys.joined(separator: ", ")) failed" }
        return text
    }

    /// One step of the chain in words.
    static func line(_ s: ChainStep) -> String {
        let at = ISODuration.format(s.time), f = s.figures
        let batch = s.batch.map { "batch \($0)" } ?? ""
        func v(_ key: String) -> String { f[key] ?? "?" }
        switch s.kind {
        case .started:
            return "\(at) upgrade \(v("upgrade")) starts: \(v("candidates")) instances in batches of \(v("batchSize")) of capacity \(v("capacity")); "
                + "upgraded budget \(v("upgradedBudget")) (\(v("upgradedPercent"))% of \(v("capacity"))), unhealthy budget \(v("unhealthyBudget")) (\(v("unhealthyPercent"))%)"
        case .batch: return "\(at) \(batch) upgrades \(ids(s.instances))\(f["shrunk"] == "true" ? " (shrunk by the unhealthy budget)" : "")"
        case .instanceFailed:
            let why = f["operation"].map { "its \($0) failed" } ?? "became \(v("health")) (\(v("reason")))"
            return "\(at) instance \(ids(s.instances)) of \(batch) \(why): it counts against the upgraded budget"
        case .checkFailed:
            return "\(at) \(batch): the check \(v("check")) the batch fails: \(v("counted")) of \(v("capacity")) (\(v("percent"))%) counted, "
                + "allowed \(v("thresholdPercent"))%: " + v("batches").split(separator: ",").map { pair in
                    let parts = pair.split(separator: ":")
                    return parts.count == 2 ? "\(parts[0]) (batch \(parts[1]))" : String(pair)
                }.joined(separator: ", ")
        case .faulted: return "\(at) the upgrade faults: \(v("code"))"
        case .completed: return "\(at) the upgrade completes: \(v("successful")) upgraded, \(v("failed")) failed"
        case .expectationFailed: return "expect \(v("key")) at \(v("location")) did not hold"
        }
    }

    static func ids(_ list: [Int]) -> String { list.map(String.init).joined(separator: ", ") }

    /// The explanation as one JSON document.
    static func json(_ e: Explanation, scenario: String) -> JSON {
        func candidate(_ c: CandidateOutcome) -> JSON {
            .ordered([JSONField("change", .array(c.change.map { .string($0.description) })), JSONField("passed", .bool(c.passed)),
                      JSONField("run", SweepJSON.run(c.digest)), JSONField("failedExpectations", .array(c.failedKeys.map(JSON.string)))])
        }
        let chain = e.chain.map { s in
            JSON.ordered([JSONField("kind", .string(s.kind.rawValue)), JSONField("time", .string(ISODuration.format(s.time))),
                          JSONField("batch", s.batch.map(JSON.int) ?? .null), JSONField("instances", .array(s.instances.map(JSON.int))),
                          JSONField("figures", .object(s.figures.mapValues(JSON.string)))])
        }
        return .ordered([
            JSONField("scenario", .string(scenario)), JSONField("seed", .string(String(e.seed))), JSONField("passed", .bool(e.passed)),
            JSONField("run", candidate(e.outcome)), JSONField("chain", .array(chain)), JSONField("candidates", .array(e.candidates.map(candidate))),
            JSONField("searchedPairs", .bool(e.searchedPairs)), JSONField("exhausted", .bool(e.exhausted)),
            JSONField("passing", .array(e.passing.map { .array($0.map { .string($0.description) }) })),
        ])
    }

    /// `sweep --explain` as text: how many seeds failed, and each single change with the share of
    /// the explained ones it passes, most first.
    static func lines(_ e: SweepExplanation) -> [String] {
        guard !e.explained.isEmpty else { return ["Explain: no seed failed (no fault, no time limit reached, every expectation held)."] }
        var lines = ["Explain: \(e.failing) seeds failed; \(e.explained.count) explained (\(e.explained.first!)…\(e.explained.last!)), each run again with one change:"]
        for score in e.ranked {
            lines.append("  \(score.change.description): passes \(score.passes.count) of \(e.explained.count)")
        }
        return lines
    }

    /// `sweep --explain` as JSON.
    static func json(_ e: SweepExplanation) -> JSON {
        .ordered([JSONField("failing", .int(e.failing)), JSONField("explained", .array(e.explained.map { .string(String($0)) })),
                  JSONField("changes", .array(e.ranked.map { score in
                      .ordered([JSONField("change", .string(score.change.description)), JSONField("passes", .int(score.passes.count)),
                                JSONField("of", .int(e.explained.count)), JSONField("seeds", .array(score.passes.map { .string(String($0)) }))])
                  }))])
    }
}

/// What `sweep --explain` found: the failing seeds, those explained, each change's score.
struct SweepExplanation {
    /// How many seeds of the sweep failed.
    var failing: Int
    /// The failing seeds explained (the lowest ones).
    var explained: [UInt64]
    /// Every single change, with the explained seeds it passes.
    var scores: [ChangeScore]

    /// The scores, most seeds passed first (ties: the order they were tried in).
    var ranked: [ChangeScore] {
        scores.enumerated().sorted { ($1.element.passes.count, $0.offset) < ($0.element.passes.count, $1.offset) }.map(\.element)
    }
}
