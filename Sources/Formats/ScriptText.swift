/// Text that came from a script, made safe to show on a terminal or in a one-line log.
public enum ScriptText {
    /// `text` with every control character shown instead of interpreted: a newline as `\n`, a tab
    /// as `\t`, a carriage return as `\r`, others (escape, C1 controls, DEL, line and paragraph
    /// separators, bidirectional overrides) as `\u{1B}`. With `keepingNewlines`, `\n` stays a
    /// line break (for multi-line messages the host wrote itself). Text without any such
    /// character is returned as it is, without copying.
    public static func escaped(_ text: String, keepingNewlines: Bool = false) -> String {
        guard text.unicodeScalars.contains(where: { needsEscape($0, keepingNewlines) }) else { return text }
        var out = ""
        out.reserveCapacity(text.utf8.count + 16)
        for scalar in text.unicodeScalars {
            guard needsEscape(scalar, keepingNewlines) else {
                out.unicodeScalars.append(scalar)
                continue
            }
            switch scalar {
            case "\n": out += "\\n"
            case "\t": out += "\\t"
            case "\r": out += "\\r"
            default:
                let hex = String(scalar.value, radix: 16, uppercase: true)
                out += "\\u{" + String(repeating: "0", count: max(0, 2 - hex.count)) + hex + "}"
            }
        }
        return out
    }

    @inline(__always)
    static func needsEscape(_ scalar: Unicode.Scalar, _ keepingNewlines: Bool) -> Bool {
        let v = scalar.value
        if v < 0x20 { return !(keepingNewlines && v == 0x0A) }
        if v < 0x7F { return false }
        return v <= 0x9F || v == 0x2028 || v == 0x2029 || (0x202A...0x202E).contains(v) || (0x2066...0x2069).contains(v)
    }
}
