/// Lua modules every scenario can `require` without a plugin path. Their sources are Lua files
/// in `Sources/Scenario/Lua` (so the lint and the editor see them as Lua), carried inside the
/// executable as `embedded` (BuiltinLibrary+Embedded.swift, written by `.ci/embed-resources`):
/// a binary copied anywhere finds them without a resource folder or its build tree.
enum BuiltinLibrary {
    /// `require` name → source.
    static var modules: [String: String] { embedded }
}
