extension JSONDocument {
    /// A text encoding a document may be saved in.
    public enum Encoding: Equatable, Sendable {
        case utf8, utf16LittleEndian, utf16BigEndian, utf32LittleEndian, utf32BigEndian

        /// Its name as editors show it (`UTF-16 LE`).
        public var name: String {
            let width = switch self {
            case .utf8: "8"
            case .utf16LittleEndian, .utf16BigEndian: "16"
            case .utf32LittleEndian, .utf32BigEndian: "32"
            }
            let order = switch self {
            case .utf16LittleEndian, .utf32LittleEndian: " LE"
            case .utf16BigEndian, .utf32BigEndian: " BE"
            case .utf8: ""
            }
            return "UTF-\(width)\(order)"
        }
    }

    /// What a document that is not JSON text was found to be, when it can be told.
    public enum NotJSON: Equatable, Sendable {
        /// A Bicep file (`param`/`resource` lines, or a `.bicep` name): it must be compiled first.
        case bicep
        /// Text in this encoding, by its NUL bytes, with no byte-order mark to say so.
        case withoutByteOrderMark(Encoding)
        /// A byte-order mark for this encoding, then bytes that are not text in it, at this offset.
        case badEncoding(Encoding, byteOffset: Int)
    }

    /// The text of `bytes` as az reads a template or parameters file: by its byte-order mark,
    /// UTF-8 (the mark is left for the parser to skip), UTF-16 or UTF-32 in either byte
    /// order; without a mark, UTF-8. Bytes that break the marked encoding are a refusal.
    static func text(of bytes: [UInt8], path: String) throws(Refusal) -> String {
        guard let (encoding, markLength) = byteOrderMark(bytes), encoding != .utf8 else { return String(decoding: bytes, as: UTF8.self) }
        var scalars = String.UnicodeScalarView()
        let body = bytes[markLength...]
        switch encoding {
        case .utf16LittleEndian, .utf16BigEndian:
            guard body.count % 2 == 0 else { throw refusal(path, .badEncoding(encoding, byteOffset: bytes.count - 1)) }
            let big = encoding == .utf16BigEndian
            let units: [UInt16] = stride(from: body.startIndex, to: body.endIndex, by: 2).map { i in
                let (high, low) = big ? (bytes[i], bytes[i + 1]) : (bytes[i + 1], bytes[i])
                return UInt16(high) << 8 | UInt16(low)
            }
            var decoder = UTF16()
            var iterator = units.makeIterator()
            var offset = markLength
            loop: while true {
                switch decoder.decode(&iterator) {
                case .scalarValue(let scalar):
                    scalars.append(scalar)
                    offset += scalar.value > 0xFFFF ? 4 : 2
                case .emptyInput: break loop
                case .error: throw refusal(path, .badEncoding(encoding, byteOffset: offset))
                }
            }
        default:
            guard body.count % 4 == 0 else { throw refusal(path, .badEncoding(encoding, byteOffset: bytes.count - body.count % 4)) }
            let big = encoding == .utf32BigEndian
            for i in stride(from: body.startIndex, to: body.endIndex, by: 4) {
                let quad: [UInt8] = big ? Array(bytes[i..<i + 4]) : bytes[i..<i + 4].reversed()
                let value: UInt32 = quad.reduce(0) { $0 << 8 | UInt32($1) }
                guard let scalar = Unicode.Scalar(value) else { throw refusal(path, .badEncoding(encoding, byteOffset: i)) }
                scalars.append(scalar)
            }
        }
        return String(scalars)
    }

    /// The encoding `bytes`' byte-order mark names, with the mark's length; nil without one.
    /// UTF-32 LE's mark begins as UTF-16 LE's does, so it is looked for first.
    static func byteOrderMark(_ bytes: [UInt8]) -> (Encoding, Int)? {
        let head = Array(bytes.prefix(4))
        if head.starts(with: [0xEF, 0xBB, 0xBF]) { return (.utf8, 3) }
        if head == [0xFF, 0xFE, 0, 0] { return (.utf32LittleEndian, 4) }
        if head == [0, 0, 0xFE, 0xFF] { return (.utf32BigEndian, 4) }
        if head.starts(with: [0xFF, 0xFE]) { return (.utf16LittleEndian, 2) }
        if head.starts(with: [0xFE, 0xFF]) { return (.utf16BigEndian, 2) }
        return nil
    }

    /// What text that did not parse as JSON is, when it can be told: UTF-16 or UTF-32 saved
    /// without a byte-order mark (NUL bytes beside its first characters), or a Bicep file.
    static func notJSON(_ bytes: [UInt8], text: String, path: String) -> NotJSON? {
        if byteOrderMark(bytes) == nil, bytes.count >= 4 {
            let zero = bytes.prefix(4).map { $0 == 0 }
            switch (zero[0], zero[1], zero[2], zero[3]) {
            case (false, true, true, true): return .withoutByteOrderMark(.utf32LittleEndian)
            case (true, true, true, false): return .withoutByteOrderMark(.utf32BigEndian)
            case (false, true, _, true): return .withoutByteOrderMark(.utf16LittleEndian)
            case (true, false, true, _): return .withoutByteOrderMark(.utf16BigEndian)
            default: break
            }
        }
        if path.lowercased().hasSuffix(".bicep") { return .bicep }
        let first = text.unicodeScalars.first { !$0.properties.isWhitespace && $0 != "\u{FEFF}" }
        guard first != "{", first != "[" else { return nil }
        let bicepLine = text.split(whereSeparator: \.isNewline).contains { line in
            let words = line.drop { $0 == " " || $0 == "\t" }
            return ["param ", "resource ", "module ", "targetScope "].contains { words.hasPrefix($0) }
        }
        return bicepLine ? .bicep : nil
    }

    /// The refusal of the document at `path` for being `kind`, said with what to do.
    static func refusal(_ path: String, _ kind: NotJSON) -> Refusal {
        let problem = switch kind {
        case .bicep:
            "is a Bicep file, not JSON: compile it to JSON first (az bicep build --file \(path))"
        case .withoutByteOrderMark(let encoding):
            "is not valid JSON: it looks like \(encoding.name) text (NUL bytes between its characters) without a byte-order mark; "
                + "save it as UTF-8, or with its byte-order mark"
        case .badEncoding(let encoding, let offset):
            "begins with the byte-order mark of \(encoding.name) but is not \(encoding.name) text (at byte \(offset)); allowed UTF-8, or UTF-16 or UTF-32 with its byte-order mark"
        }
        return Refusal(path: path, problem: problem, notJSON: kind)
    }
}
