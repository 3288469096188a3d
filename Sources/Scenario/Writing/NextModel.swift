import UpgradeEngine

/// The model change a starter rehearses: the next version of what the document names. A pinned
/// image version (`imageReference.version` 1.0.4, or a gallery image id ending in
/// `/versions/1.0.4`) goes to the next patch (1.0.5); any other version (`latest`) becomes
/// `next`; a model that names no image version changes its `image`.
public enum NextModel {
    /// The fields to change in `model` (the scale set's model as the importer read it).
    public static func changes(from model: [String: String]) -> [String: String] {
        if let version = model["imageReference.version"] { return ["imageReference.version": bumped(version) ?? "next"] }
        if let id = model["imageReference.id"] {
            // …/images/NAME/versions/1.0.4 (ids compare in any case).
            let parts = id.split(separator: "/", omittingEmptySubsequences: false)
            if parts.count >= 2, parts[parts.count - 2].lowercased() == "versions", let next = bumped(String(parts[parts.count - 1])) {
                return ["imageReference.id": (parts.dropLast().map(String.init) + [next]).joined(separator: "/")]
            }
        }
        return ["image": "next"]
    }

    /// `version` with its last number one higher (1.0.4 → 1.0.5, 2024.11.01 → 2024.11.02 keeps
    /// its width); nil when it is not dot-separated numbers.
    static func bumped(_ version: String) -> String? {
        let parts = version.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.allSatisfy({ !$0.isEmpty && $0.allSatisfy { $0.isASCII && $0.isNumber } }) else { return nil }
        return ImageVersion.successor(of: version)
    }
}
