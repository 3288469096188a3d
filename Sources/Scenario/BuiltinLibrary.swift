import Foundation

/// Lua modules every scenario can `require` without a plugin path. Their sources are Lua files
/// in `Sources/Scenario/Lua` (copied beside the binary as the target's resources), so the lint
/// and the editor see them as Lua.
enum BuiltinLibrary {
    /// `require` name → source.
    static let modules: [String: String] = ["rehearse.faults": load("rehearse/faults"),
                                           "rehearse.bundle_options": load("rehearse/bundle_options")]

    /// The module's text, or one that explains it is missing (an installation without the
    /// resources folder) when required.
    private static func load(_ name: String) -> String {
        guard let url = Bundle.module.url(forResource: "Lua/" + name, withExtension: "lua"),
              let text = try? String(contentsOf: url, encoding: .utf8)
        else {
            return "error(\"the built-in module \(name.replacingOccurrences(of: "/", with: ".")) is missing from this installation (rehearse_Scenario.resources beside the binary)\", 0)"
        }
        return text
    }
}
