import Formats

/// A command that ends with problems it collected as it went (every finding of `plugins
/// verify`, every document problem) or with an outcome its output already shows (a failed
/// expectation in `test`, a requirement a sweep did not hold): the diagnostics to render,
/// possibly none, and the exit status.
struct CommandFailure: UserFacingError {
    /// What to render, in order; empty when the command's output already said it.
    var diagnostics: [Diagnostic]
    /// The line above several problems of one input (`file: `), as the definition's header.
    var header: String?
    /// 1 for an expectation or requirement that did not hold, 2 for bad input.
    var exitCode: Int32
    /// Where the first problem is.
    var place: Location? { diagnostics.first?.location }

    /// A failure rendering `diagnostics` (under `header` when there are several), ending with `exitCode`.
    init(_ diagnostics: [Diagnostic], header: String? = nil, exitCode: Int32) {
        self.diagnostics = diagnostics
        self.header = header
        self.exitCode = exitCode
    }

    /// An outcome the output already shows: nothing more to render.
    static func shown(exitCode: Int32) -> CommandFailure { CommandFailure([], exitCode: exitCode) }
}
