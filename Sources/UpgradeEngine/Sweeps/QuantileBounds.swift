/// Distribution-free bounds on a percentile of a figure over runs, read off the same confidence
/// sequence as a requirement's share: the `level`-th percentile q is above a value x when the share
/// of runs at or below x is provably under `level`, and at or below x when that share is provably
/// over it. Each bound is an order statistic, a value some run showed.
///
/// These are pointwise bounds (valid for each value x considered); a bound uniform over every x at
/// once (S. R. Howard, A. Ramdas, "Sequential estimation of quantiles with applications to A/B
/// testing and best-arm identification", Bernoulli 28, 2022) would be somewhat wider. `tune` uses
/// them only to stop running a candidate that is clearly worse than a feasible one.
public struct QuantileBounds: Equatable, Sendable {
    /// The percentile's estimate (nearest rank); nil without values.
    public var estimate: Double?
    /// The largest value the percentile is provably above; nil when none is.
    public var lower: Double?
    /// The smallest value the percentile is provably at or below; nil when none is.
    public var upper: Double?

    /// An estimate with the bounds given (none: nothing is proved).
    public init(estimate: Double?, lower: Double? = nil, upper: Double? = nil) {
        self.estimate = estimate
        self.lower = lower
        self.upper = upper
    }

    /// Bounds on the `percentile`-th percentile (0 < percentile < 100) of `distribution` at `confidence`.
    public init(_ distribution: Distribution, percentile: Double, confidence: Double) {
        let values = distribution.sorted, n = values.count, level = percentile / 100
        estimate = distribution.percentile(percentile)
        guard n > 0 else { return }
        let sequence = ConfidenceSequence(centredOn: level, confidence: confidence)
        // upper(k) and lower(k) of the share k/n both grow with k: binary searches.
        func firstIndex(where holds: (Int) -> Bool) -> Int {
            var low = 1, high = n + 1
            while low < high {
                let middle = (low + high) / 2
                if holds(middle) { high = middle } else { low = middle + 1 }
            }
            return low
        }
        // The runs at or below values[k - 1], ties included (k is 1-based).
        func atOrBelow(_ k: Int) -> Int {
            let value = values[k - 1]
            var low = k, high = n
            while low < high {
                let middle = (low + high + 1) / 2
                if values[middle - 1] <= value { low = middle } else { high = middle - 1 }
            }
            return low
        }
        let notBelow = firstIndex { k in k > n || (k >= 1 && sequence.interval(count: atOrBelow(k), total: n).upper >= level) }
        if notBelow >= 2 { lower = values[notBelow - 2] }
        let above = firstIndex { k in k > n || (k >= 1 && sequence.interval(count: atOrBelow(k), total: n).lower > level) }
        if above >= 1, above <= n { upper = values[above - 1] }
    }
}
