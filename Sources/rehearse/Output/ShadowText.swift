import Formats
import UpgradeEngine

/// `sweep --shadow-gate`'s renderings: how often the gate stopped a rollout that went well
/// without it (false stop) and let through one that was bad (false pass), each with its 95%
/// interval and its seeds, and the time it added.
enum ShadowText {
    /// The scored runs' counts by outcome, in `ShadowOutcome`'s order.
    static func counts(_ runs: [RunDigest]) -> [(ShadowOutcome, [UInt64])] {
        ShadowOutcome.allCases.map { outcome in (outcome, runs.filter { $0.shadow == outcome }.map(\.seed)) }
    }

    /// The time added, seconds, at p50 and p95 (nil when no run had both times).
    static func timeAdded(_ runs: [RunDigest]) -> (p50: Double, p95: Double)? {
        let added = runs.compactMap(\.shadowTimeAdded).sorted()
        guard !added.isEmpty else { return nil }
        // Nearest rank: the smallest value with at least p% of the runs at or below it.
        func at(_ p: Double) -> Double { added[max(0, Int((p / 100 * Double(added.count)).rounded(.up)) - 1)] }
        return (at(50), at(95))
    }

    /// Text lines.
    static func lines(_ runs: [RunDigest]) -> [String] {
        var lines = ["Shadow gate (the script's gate against each seed without it), \(runs.count) runs:"]
        for (outcome, seeds) in counts(runs) {
            let share = Share(seeds.count, of: runs.count), (low, high) = share.interval
            let listed = seeds.prefix(10).map(String.init).joined(separator: ", ") + (seeds.count > 10 ? ", …" : "")
            lines.append("  \(outcome.rawValue): \(seeds.count) (\(percent(share.fraction)), 95% CI \(percent(low))–\(percent(high)))"
                         + (seeds.isEmpty ? "" : ", seeds \(listed)"))
        }
        if let added = timeAdded(runs) { lines.append("  time added to finish: p50 \(Int(added.p50)) s, p95 \(Int(added.p95)) s") }
        return lines
    }

    static func percent(_ x: Double) -> String {
        let tenths = (x * 1000).rounded() / 10
        return "\(tenths)%"
    }

    /// JSON: each outcome's runs, share, interval and seeds; the time added.
    static func json(_ runs: [RunDigest]) -> JSON {
        var fields = [JSONField("runs", .int(runs.count))]
        for (outcome, seeds) in counts(runs) {
            let share = Share(seeds.count, of: runs.count), (low, high) = share.interval
            fields.append(JSONField(outcome.rawValue, .ordered([
                JSONField("runs", .int(seeds.count)), JSONField("share", .double(rounded(share.fraction))),
                JSONField("ci95", .array([.double(rounded(low)), .double(rounded(high))])), JSONField("seeds", .array(seeds.map { .string(String($0)) })),
            ])))
        }
        let added = timeAdded(runs)
        fields.append(JSONField("timeAddedSeconds", .ordered([JSONField("p50", added.map { .double($0.p50) } ?? .null),
                                                              JSONField("p95", added.map { .double($0.p95) } ?? .null)])))
        return .ordered(fields)
    }

    static func rounded(_ x: Double) -> Double { (x * 1_000_000).rounded() / 1_000_000 }
}
