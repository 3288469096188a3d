/// Percentages as Azure prints them in its rolling-upgrade messages: whole numbers, rounded half up.
public enum AzurePercent {
    /// `count` in percent of `total`, rounded half up (2 of 7 is 28.57%: 29); 0 when `total` is 0.
    public static func rounded(_ count: Int, of total: Int) -> Int {
        total == 0 ? 0 : (count * 200 + total) / (2 * total)
    }
}
