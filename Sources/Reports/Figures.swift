public import Formats
import Foundation
public import UpgradeEngine

/// The figures every rendering shares, so that a page, the text and the JSON of the same report
/// can never disagree: one interval text, one list of final codes, one human duration.
public enum Figures {
    /// A share's 95% interval as every rendering prints it: `0.0%–0.8%` for 0 of 500 (Wilson's
    /// score interval, `Share.interval`, the only interval function).
    public static func interval(_ share: Share) -> String { range(share.interval.lower, share.interval.upper) }

    /// `lower–upper` as percentages with one decimal.
    public static func range(_ lower: Double, _ upper: Double) -> String { "\(SweepText.percent(lower))–\(SweepText.percent(upper))" }

    /// The share of runs per final code in `SweepReport.codes` order: the codes some run showed,
    /// and Faulted always (at 0 with its interval when no run faulted: the row a team looks for).
    public static func outcomes(_ r: SweepReport) -> [(code: String, share: Share)] {
        let shown = r.outcomes
        guard r.total > 0, !shown.contains(where: { $0.code == "Faulted" }) else { return shown }
        return SweepReport.codes.compactMap { code in
            code == "Faulted" ? (code, Share(0, of: r.total)) : shown.first { $0.code == code }
        }
    }

    /// A duration as a person reads it, exact to the second from a minute up: `1 h 10 min`,
    /// `1 h 30 min 50 s` (5,450 s beside a `PT1H30M` deadline it misses must not read as
    /// `1 h 30 min`), `4 min 30 s`, `2 d 3 h`, `0.5 s`; units that are zero are left out.
    public static func human(seconds: Double) -> String {
        guard seconds.isFinite else { return "-" }
        if abs(seconds) < 60 {
            return seconds == seconds.rounded() ? "\(Int(seconds)) s" : String(format: "%.1f s", seconds)
        }
        // Beyond Int's range a duration is only its order of magnitude.
        guard abs(seconds) < 9e15 else { return String(format: "%.3g s", seconds) }
        let total = Int(seconds.rounded())
        var rest = abs(total)
        var parts: [String] = []
        for (size, name) in [(86_400, "d"), (3_600, "h"), (60, "min"), (1, "s")] {
            let value = rest / size
            rest -= value * size
            if value > 0 { parts.append("\(value) \(name)") }
        }
        let text = parts.joined(separator: " ")
        return total < 0 ? "-" + text : text
    }

    /// A duration in milliseconds as `PT1H10M (1 h 10 min)`: the ISO value, then the human one.
    public static func both(_ millis: Millis) -> String { "\(ISODuration.format(millis)) (\(human(seconds: Double(millis) / 1000)))" }
}
