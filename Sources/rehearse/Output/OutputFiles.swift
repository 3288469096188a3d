import Formats

/// Opens the file `option` names for writing `role` (`the report`), the one way every output
/// file is opened (see `OutputFile`); exit 2 naming the option, the path and why otherwise.
func openOutput(_ path: String, option: String, role: String, followable: Bool = false) throws -> OutputFile {
    do { return try OutputFile(path: path, role: role, followable: followable) } catch { throw InputError(option: option, problem: error.description) }
}

/// Writes `text` into `file` and commits it; exit 2 naming the option when a write failed (an
/// existing file is then left as it was).
func finishOutput(_ file: OutputFile, option: String, writing text: String? = nil) throws {
    if let text { file.write(text) }
    do { try file.commit() } catch { throw InputError(option: option, problem: error.description) }
}
