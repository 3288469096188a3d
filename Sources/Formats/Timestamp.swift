/// Virtual times as the ISO 8601 timestamps Azure prints (`2024-01-01T00:02:00.0000000+00:00`).
public enum Timestamp {
    /// 2024-01-01T00:00:00Z, the default scenario epoch, in Unix seconds.
    public static let defaultEpoch = 1_704_067_200

    /// Formats `millis` after `epoch` (Unix seconds) in UTC with seven fractional digits.
    public static func format(_ millis: Millis, epoch: Int = defaultEpoch) -> String {
        let totalMillis = epoch * 1000 + millis
        let seconds = Int((Double(totalMillis) / 1000).rounded(.down))
        let fraction = totalMillis - seconds * 1000
        var days = seconds / 86_400
        var rest = seconds - days * 86_400
        if rest < 0 { rest += 86_400; days -= 1 }
        // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let day = doy - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        let year = yoe + era * 400 + (month <= 2 ? 1 : 0)
        func two(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }
        var frac = String(fraction * 10_000)
        while frac.count < 7 { frac = "0" + frac }
        return "\(year)-\(two(month))-\(two(day))T\(two(rest / 3600)):\(two(rest / 60 % 60)):\(two(rest % 60)).\(frac)+00:00"
    }
}
