
/// A JSON document from another team (a scale set, an instance list, parameters, a sweep part):
/// size-checked before it is read, then parsed with line and column in its errors; a UTF-8
/// byte-order mark and `//` or `/* */` comments are accepted, as Azure accepts them in templates
/// and parameter files, and UTF-16 or UTF-32 with a byte-order mark is read as az reads it.
public enum JSONDocument {
    /// The largest document read, in bytes.
    public static let maxBytes = 16 << 20

    /// Why a document was not read: the path and what is wrong (its size, its kind, or where the
    /// JSON breaks).
    public struct Refusal: Error, CustomStringConvertible {
        /// The path as given.
        public var path: String
        /// What is wrong.
        public var problem: String
        /// What the document is instead of JSON text, when that can be told.
        public var notJSON: NotJSON? = nil
        public var description: String { "\(path): \(problem)" }
    }

    /// The document at `path`.
    public static func read(_ path: String, maxBytes: Int = maxBytes) throws(Refusal) -> JSON {
        let data: [UInt8]
        do {
            data = try BoundedFile.read(path, maxBytes: maxBytes)
        } catch {
            throw Refusal(path: path, problem: error.problem)
        }
        let text = try text(of: data, path: path)
        do {
            // UTF-16 text may take up to half as many bytes again in UTF-8.
            return try JSON.parse(text, maxBytes: max(maxBytes, text.utf8.count), comments: true)
        } catch {
            if let kind = notJSON(data, text: text, path: path) { throw refusal(path, kind) }
            throw Refusal(path: path, problem: "\(error)")
        }
    }
}
