/// Virtual time in milliseconds since the scenario's epoch.
public typealias Millis = Int

/// ISO 8601 durations as ARM uses them (`PT2S`, `PT1M30S`, `P1DT2H`, `PT0.5S`).
public enum ISODuration {
    /// The longest duration read or computed: 10^12 seconds (about 31,700 years), in ms. A
    /// longer text is refused; a figure computed from durations (a plan's shortest duration)
    /// stops here instead of overflowing.
    public static let longest: Millis = 1_000_000_000_000_000

    /// The virtual instant `amount` after `time` (both ms, neither negative), or nil when it
    /// would pass `longest`, the latest instant a virtual clock reaches: a clock moved on again
    /// and again stops there with a refusal instead of overflowing.
    public static func later(_ time: Millis, by amount: Millis) -> Millis? {
        guard time >= 0, amount >= 0 else { return nil }
        let (sum, overflow) = time.addingReportingOverflow(amount)
        return overflow || sum > longest ? nil : sum
    }

    /// Parses `PnDTnHnMnS` (each part optional but at least one present; a decimal fraction only
    /// on the last part). Years, months and weeks are refused: their length is not fixed.
    /// Returns milliseconds, or a sentence saying what is wrong.
    public static func parse(_ text: String) -> Result<Millis, DurationError> {
        var rest = Substring(text)
        guard rest.first == "P" || rest.first == "p" else { return .failure(.init(text, "it must start with 'P'")) }
        rest = rest.dropFirst()
        var total = 0.0
        var inTime = false
        var sawPart = false
        var sawFraction = false
        var lastRank = 0  // D = 1, H = 2, M = 3, S = 4: each at most once, in that order
        while !rest.isEmpty {
            if rest.first == "T" || rest.first == "t" {
                guard !inTime else { return .failure(.init(text, "it has a second 'T'")) }
                inTime = true
                rest = rest.dropFirst()
                guard !rest.isEmpty else { return .failure(.init(text, "it has 'T' with no hours, minutes or seconds after it")) }
                continue
            }
            let number = rest.prefix(while: { $0.isASCII && ($0.isNumber || $0 == "." || $0 == ",") })
            guard !number.isEmpty else { return .failure(.init(text, "a number was expected at '\(rest)'")) }
            rest = rest.dropFirst(number.count)
            guard let unit = rest.first else { return .failure(.init(text, "number \(number) has no unit")) }
            rest = rest.dropFirst()
            guard !sawFraction else { return .failure(.init(text, "only the last part may have a fraction")) }
            guard let value = Double(String(number.map { $0 == "," ? "." : $0 })) else {
                return .failure(.init(text, "'\(number)' is not a number"))
            }
            sawFraction = number.contains(".") || number.contains(",")
            let seconds: Double
            let rank: Int
            switch (unit.uppercased(), inTime) {
            case ("D", false): (seconds, rank) = (86_400, 1)
            case ("H", true): (seconds, rank) = (3_600, 2)
            case ("M", true): (seconds, rank) = (60, 3)
            case ("S", true): (seconds, rank) = (1, 4)
            case ("Y", false), ("M", false), ("W", false):
                return .failure(.init(text, "years, months and weeks are not allowed (their length varies); use days, hours, minutes, seconds"))
            default:
                return .failure(.init(text, "unit '\(unit)' is not allowed \(inTime ? "after" : "before") 'T'"))
            }
            guard rank > lastRank else {
                return .failure(.init(text, rank == lastRank
                    ? "'\(unit)' appears twice; each of D, H, M, S at most once"
                    : "'\(unit)' comes after a smaller unit; the order is D, then T, then H, M, S"))
            }
            lastRank = rank
            total += value * seconds
            sawPart = true
        }
        guard sawPart else { return .failure(.init(text, "it has no parts")) }
        let millis = (total * 1000).rounded()
        guard millis <= Double(longest) else {
            return .failure(.init(text, "it is longer than \(format(longest)) (10^12 seconds), the longest duration allowed"))
        }
        return .success(Millis(millis))
    }

    /// Formats milliseconds the way ARM prints policy durations: `PT0S`, `PT2S`, `PT1M30S`, `PT0.5S`.
    public static func format(_ millis: Millis) -> String {
        if millis == 0 { return "PT0S" }
        var rest = millis
        var text = "P"
        let days = rest / 86_400_000
        rest %= 86_400_000
        if days > 0 { text += "\(days)D" }
        guard rest > 0 else { return text }
        text += "T"
        let hours = rest / 3_600_000
        rest %= 3_600_000
        let minutes = rest / 60_000
        rest %= 60_000
        if hours > 0 { text += "\(hours)H" }
        if minutes > 0 { text += "\(minutes)M" }
        if rest > 0 {
            let whole = rest / 1000, fraction = rest % 1000
            if fraction == 0 {
                text += "\(whole)S"
            } else {
                var digits = String(fraction)
                while digits.count < 3 { digits = "0" + digits }
                while digits.hasSuffix("0") { digits.removeLast() }
                text += "\(whole).\(digits)S"
            }
        }
        return text
    }
}

/// A malformed duration, with the text and what is wrong with it.
public struct DurationError: Error, Equatable, CustomStringConvertible {
    /// The text that was refused.
    public let text: String
    /// What is wrong with it.
    public let problem: String
    init(_ text: String, _ problem: String) {
        self.text = text
        self.problem = problem
    }
    public var description: String { "'\(text)' is not an ISO 8601 duration: \(problem)" }
}
