import Formats

/// Tick marks for a time axis from 0 to `end`: a step from a ladder of round durations (10 s up
/// to 7 days) giving at most `most` ticks, each labelled as a person reads it (`15 min`, `1 h 30 min`).
/// Computed here so the page draws them and does not decide them.
enum TimeAxis {
    /// The round steps, in milliseconds.
    static let steps: [Millis] = [1, 2, 5, 10, 15, 30].map { $0 * 1000 } + [1, 2, 5, 10, 15, 20, 30].map { $0 * 60_000 }
        + [1, 2, 3, 4, 6, 12].map { $0 * 3_600_000 } + [1, 2, 7].map { $0 * 86_400_000 }

    /// Ticks from 0 through `end` (ms) at the smallest round step giving at most `most` of them.
    static func ticks(end: Millis, most: Int = 10) -> [(time: Millis, label: String)] {
        let span = max(end, 1)
        let step = steps.first { span / $0 + 1 <= most } ?? max(1, span / Millis(max(1, most - 1)))
        return stride(from: Millis(0), through: span, by: step).map { ($0, Figures.human(seconds: Double($0) / 1000)) }
    }
}
