import Formats
public import UpgradeEngine

/// An expectation's values as the status prints them: `Faulted`, `at least 8`, `within PT45M`,
/// `[3, 7]`, `none`. The one place their text is made (runs, tests, JUnit, sweeps, errors).
public enum ExpectationText {
    /// What was asked: the value itself, or `at least N`, `at most N`, `within DURATION`.
    public static func expected(_ value: ExpectedValue) -> String {
        switch value {
        case .equal(let exactly): return actual(exactly)
        case .atLeast(let n): return "at least \(n)"
        case .atMost(let n): return "at most \(n)"
        case .within(let ms): return "within \(ISODuration.format(ms))"
        }
    }

    /// What the run showed: the value, or why there is none.
    public static func actual(_ value: ObservedValue) -> String {
        switch value {
        case .none: return "none"
        case .text(let text): return text
        case .count(let n): return String(n)
        case .ids(let ids): return "\(ids)"
        case .duration(let ms): return ISODuration.format(ms)
        case .notFinished: return "not finished by the time limit"
        case .noUpgradeActivity: return "no upgrade activity"
        }
    }

    /// `code is Completed, expected Faulted`: a failed key in one sentence.
    public static func failure(_ result: ExpectationResult) -> String {
        "\(result.key.rawValue) is \(actual(result.actual)), expected \(expected(result.expected))"
    }

    /// The keys of `expectations` in the order runs check them, each labelled as sweep reports
    /// and part files print it.
    public static func keys(of expectations: [Expectation]) -> [SweepReport.ExpectationKey] {
        SweepReport.keys(of: expectations, label: expected)
    }
}
