/// What one model may hold: every version keeps its attributes, so both are bounded.
public enum ModelLimits {
    /// Attributes in one model.
    public static let attributes = 256
    /// Bytes of one attribute's value.
    public static let valueBytes = 64 * 1024

    /// What is wrong with `attributes` as a model, if anything.
    public static func problem(_ attributes: [String: String]) -> String? {
        if attributes.count > Self.attributes {
            return "the model would have \(attributes.count) attributes; at most \(Self.attributes) are allowed"
        }
        // The first in key order, so the message is the same on every run.
        if attributes.values.contains(where: { $0.utf8.count > valueBytes }),
           let key = attributes.keys.sorted().first(where: { attributes[$0]!.utf8.count > valueBytes }) {
            return "attribute \(key) is \(attributes[key]!.utf8.count) bytes; at most \(valueBytes) are allowed"
        }
        return nil
    }
}
