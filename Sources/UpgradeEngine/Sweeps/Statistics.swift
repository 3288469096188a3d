/// A share of runs with its 95% confidence interval (Wilson's score interval), so 3 faults in
/// 200 runs reads as 1.5% (0.5–4.3%), not as an exact 1.5%.
public struct Share: Equatable, Sendable {
    /// Runs that showed it.
    public var count: Int
    /// Runs in all.
    public var total: Int

    /// `count` of `total`.
    public init(_ count: Int, of total: Int) {
        self.count = count
        self.total = total
    }

    /// count / total (0 when there are no runs).
    public var fraction: Double { total == 0 ? 0 : Double(count) / Double(total) }

    /// The 95% Wilson score interval of the fraction: (lower, upper), both in 0...1.
    public var interval: (lower: Double, upper: Double) {
        guard total > 0 else { return (0, 1) }
        let z = 1.959963984540054, n = Double(total), p = fraction
        let z2 = z * z
        let centre = (p + z2 / (2 * n)) / (1 + z2 / n)
        let half = z * (p * (1 - p) / n + z2 / (4 * n * n)).squareRoot() / (1 + z2 / n)
        return (max(0, centre - half), min(1, centre + half))
    }
}

/// Order statistics of one figure over runs, by the nearest-rank method: the p-th percentile is
/// the smallest value at or above which p% of the runs lie, always a value some run showed.
public struct Distribution: Equatable, Sendable {
    /// The values, ascending.
    public let sorted: [Double]

    /// The distribution of `values` (any order).
    public init(_ values: [Double]) { sorted = values.sorted() }

    /// How many runs showed a value.
    public var count: Int { sorted.count }

    /// The `p`-th percentile (0–100); nil without values. 0 is the minimum, 100 the maximum.
    public func percentile(_ p: Double) -> Double? {
        guard !sorted.isEmpty else { return nil }
        let rank = Int((p / 100 * Double(sorted.count)).rounded(.up))
        return sorted[min(max(rank, 1), sorted.count) - 1]
    }
}
