import Plugins

/// The wrapper that makes a bundle's entry module check the options scripts pass its exported
/// functions against its manifest (`rehearse.bundle_options`): an option the bundle does not
/// declare, or one of the wrong type, is an error at the script's line naming the bundle, its
/// version and the options it reads.
enum BundleOptionGuard {
    /// `source` wrapped so that what it returns goes through the guard; unchanged when the
    /// manifest declares no options. The module's own text stays on its own lines (the prefix is
    /// on its first line), so its error locations do not move.
    static func wrap(_ source: String, manifest: PluginManifest) -> String {
        guard manifest.options != nil else { return source }
        var declared: [String] = []
        var listing: [String] = []
        for export in manifest.exports.keys.sorted() {
            let options = manifest.options(of: export) ?? []
            let kinds = options.map { "[\(literal($0.name))] = \(literal($0.kind.rawValue))" }.joined(separator: ", ")
            declared.append("[\(literal(export))] = { \(kinds) }")
            let text = options.isEmpty ? "\(manifest.label) declares no options for \(export)"
                : "\(manifest.label) declares for \(export): " + options.map(\.summary).joined(separator: ", ")
            listing.append("[\(literal(export))] = \(literal(text))")
        }
        return "local rehearse_bundle_exports = (function(...) " + source + "\nend)(...)\n"
            + "return require(\"rehearse.bundle_options\").guard(rehearse_bundle_exports, \(literal(manifest.label)), { "
            + declared.joined(separator: ", ") + " }, { " + listing.joined(separator: ", ") + " })\n"
    }

    /// A Lua string literal of `text`: every byte but letters, digits and a few marks as `\ddd`.
    static func literal(_ text: String) -> String {
        var out = "\""
        for byte in text.utf8 {
            let plain = (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A) || " .,:()_-^<>=".utf8.contains(byte)
            out += plain ? String(UnicodeScalar(byte)) : "\\" + String(format3(byte))
        }
        return out + "\""
    }

    private static func format3(_ byte: UInt8) -> String {
        let digits = String(byte)
        return String(repeating: "0", count: 3 - digits.count) + digits
    }
}
