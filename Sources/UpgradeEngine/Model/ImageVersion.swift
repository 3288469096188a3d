/// Versions the engine names itself: the image an on-demand OS upgrade brings, or the extension
/// version of an extension upgrade, when the action names none.
public enum ImageVersion {
    /// The image a model without an `image` attribute is taken to run.
    public static let firstImage = "1.0.0"
    /// The extension version a model without an `extensions` attribute is taken to run.
    public static let firstExtension = "1.0"

    /// `version` with its trailing number one higher, keeping its width: 1.0.4 → 1.0.5,
    /// 2024.02.01 → 2024.02.02, v9 → v10. A version that does not end in a digit gets `.1`.
    public static func successor(of version: String) -> String {
        var digits = Array(version.utf8)
        var index = digits.count
        guard index > 0, isDigit(digits[index - 1]) else { return version + ".1" }
        // Decimal addition with carry, on the characters: no width limit, no overflow.
        while index > 0, isDigit(digits[index - 1]) {
            index -= 1
            if digits[index] == UInt8(ascii: "9") {
                digits[index] = UInt8(ascii: "0")
            } else {
                digits[index] += 1
                return String(decoding: digits, as: UTF8.self)
            }
        }
        digits.insert(UInt8(ascii: "1"), at: index)
        return String(decoding: digits, as: UTF8.self)
    }

    private static func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }
}
