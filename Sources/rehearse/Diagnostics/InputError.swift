import Formats

/// Bad input named on the command line: where (an option, a file, a command), what was given,
/// what is wrong and what is allowed, as data; the renderer makes it one line.
struct InputError: UserFacingError {
    /// An option (`--seeds`), a file, or a command (`merge`).
    var place: Location?
    /// The value given, when there is one.
    var value: String?
    /// What is wrong; nil when `allowed` says it all.
    var problem: String?
    /// What is allowed instead.
    var allowed: String?
    /// Bad input: 2.
    var exitCode: Int32 { 2 }

    /// Bad input at `place`: `value` given, `problem` found, `allowed` allowed.
    init(_ place: Location, _ value: String? = nil, problem: String? = nil, allowed: String? = nil) {
        self.place = place
        self.value = value
        self.problem = problem
        self.allowed = allowed
    }

    /// Bad input given to the option `option` (`--seeds`).
    init(option: String, _ value: String? = nil, problem: String? = nil, allowed: String? = nil) {
        self.init(.option(option), value, problem: problem, allowed: allowed)
    }
}
