/// A number a user or a document supplied that its field does not allow: which field (an
/// option such as `--max-probes`, a policy path, a JSON field such as `runs[3].lowestHealthy`),
/// the value as given, and the range allowed.
public struct NumberOutOfRange: Error, Equatable, Sendable, CustomStringConvertible {
    /// The option or field.
    public var field: String
    /// The value as given (`9223372036854775807`, `1e+300`, `inf`).
    public var value: String
    /// What is allowed, e.g. `a whole number from 1 to 1000000000000000`.
    public var allowed: String

    /// `value` refused at `field`, which allows `allowed`.
    public init(field: String, value: String, allowed: String) {
        self.field = field
        self.value = value
        self.allowed = allowed
    }

    /// The same as a problem of an input checked field by field.
    public var problem: Problem { Problem(field: field, "\(value) is out of range; allowed \(allowed)") }

    /// `--max-probes 0: allowed a whole number from 1 to …`, as every bad option reads.
    public var description: String { "\(field) \(value): allowed \(allowed)" }
}

/// The one conversion of every number a user or a document supplies (command-line options,
/// policy fields, durations, the parts `merge` reads): a value outside its field's range, not a
/// whole number where one is needed, or not finite, is refused with a `NumberOutOfRange` naming
/// the field and the range, never converted with a trap or silently wrapped. Figures computed
/// from checked numbers use the saturating operations below, so no product of two allowed
/// values can trap either.
public enum CheckedNumber {
    /// The largest count an option of a run takes (`--max-probes`, `--max-events`, …): 10^15, far
    /// beyond what a run can reach and far from where `Int` arithmetic on it could overflow.
    public static let largestCount = 1_000_000_000_000_000

    /// `value` when it lies in `range`.
    public static func whole(_ value: Int, field: String, in range: ClosedRange<Int>) throws(NumberOutOfRange) -> Int {
        guard range.contains(value) else { throw NumberOutOfRange(field: field, value: String(value), allowed: describe(range)) }
        return value
    }

    /// `value` as a whole number when it is one and lies in `range` (NaN, infinities and fractions
    /// are refused: `Int(value)` would trap or cut).
    public static func whole(_ value: Double, field: String, in range: ClosedRange<Int>) throws(NumberOutOfRange) -> Int {
        // Doubles of magnitude 2^63 and more do not fit an Int; every double below is exact.
        guard value.isFinite, value == value.rounded(), abs(value) < 9.2e18, range.contains(Int(value)) else {
            throw NumberOutOfRange(field: field, value: String(value), allowed: describe(range))
        }
        return Int(value)
    }

    /// `text` as a whole number in `range` (decimal digits, an optional sign).
    public static func whole(_ text: String, field: String, in range: ClosedRange<Int>) throws(NumberOutOfRange) -> Int {
        guard let value = Int(text), range.contains(value) else { throw NumberOutOfRange(field: field, value: text, allowed: describe(range)) }
        return value
    }

    /// `value` when it is finite and lies in `range`.
    public static func finite(_ value: Double, field: String, in range: ClosedRange<Double>) throws(NumberOutOfRange) -> Double {
        guard value.isFinite, range.contains(value) else {
            throw NumberOutOfRange(field: field, value: String(value), allowed: "a finite number from \(range.lowerBound) to \(range.upperBound)")
        }
        return value
    }

    /// A figure as a whole number, rounded, clamped to ±`largestCount` (NaN reads as 0): for
    /// displaying and comparing figures that were computed, never for reading input.
    public static func clampedWhole(_ value: Double) -> Int {
        guard !value.isNaN else { return 0 }
        let bound = Double(largestCount)
        return Int(min(max(value.rounded(), -bound), bound))
    }

    /// `a + b`, or `ceiling` when the sum is above it (or overflows); both at least 0.
    public static func sum(_ a: Int, _ b: Int, atMost ceiling: Int) -> Int {
        let (total, overflow) = a.addingReportingOverflow(b)
        return overflow || total > ceiling ? ceiling : total
    }

    /// `a × b`, or `ceiling` when the product is above it (or overflows); both at least 0.
    public static func product(_ a: Int, _ b: Int, atMost ceiling: Int) -> Int {
        let (total, overflow) = a.multipliedReportingOverflow(by: b)
        return overflow || total > ceiling ? ceiling : total
    }

    /// `a whole number from 1 to 10`.
    public static func describe(_ range: ClosedRange<Int>) -> String { "a whole number from \(range.lowerBound) to \(range.upperBound)" }
}
