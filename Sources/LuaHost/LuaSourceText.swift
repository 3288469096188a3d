/// A Lua source file's bytes as the text the host loads. Lua itself takes any bytes, but the
/// host hands sources over as Swift strings, and decoding replaces what is not UTF-8: a raw
/// `\xff` in a string literal would become U+FFFD silently, so such a source is refused instead,
/// naming the first line that holds one (a byte that is not text is written `\255` in Lua).
public enum LuaSourceText {
    /// The text of `bytes`, or the 1-based line of the first byte that is not UTF-8.
    public static func decode(_ bytes: [UInt8]) -> Result<String, BadLine> {
        if let text = String(validating: bytes, as: UTF8.self) { return .success(text) }
        // Not UTF-8: find the first byte that is not, to name its line.
        var parser = Unicode.UTF8.ForwardParser()
        var iterator = bytes.makeIterator()
        var offset = 0
        while true {
            switch parser.parseScalar(from: &iterator) {
            case .valid(let scalar): offset += scalar.count
            case .emptyInput: return .success(String(decoding: bytes, as: UTF8.self)) // not reached: validated above
            case .error:
                return .failure(BadLine(line: 1 + bytes[..<offset].count { $0 == 0x0A }))
            }
        }
    }

    /// Where a source stops being UTF-8 text.
    public struct BadLine: Error, Equatable {
        /// 1-based.
        public var line: Int
        /// The first bad byte is on `line`.
        public init(line: Int) { self.line = line }
        /// What is wrong and what is allowed; with `chunk` (a file's name as Lua shows it), its
        /// `chunk:line: ` first (without, the error's location says where).
        public func message(_ chunk: String? = nil) -> String {
            (chunk.map { "\($0):\(line): " } ?? "")
                + "holds bytes that are not UTF-8 text; allowed UTF-8 source (write another byte in a string as \\ddd, e.g. \"\\255\")"
        }
    }
}
