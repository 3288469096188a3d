import ArgumentParser

/// `--output text|json|table`: the same option on every command that prints results. `--json`,
/// where a command had it first, means the same as `--output json`. `table` is one row per thing
/// (instance, batch member, scenario, run, combination) where a command has such rows.
enum OutputFormat: String, ExpressibleByArgument, CaseIterable {
    case text, json, table
}

/// The `--output` option, for commands that take it as a group.
struct OutputOption: ParsableArguments {
    @Option(help: "text (for a person), json (for a program) or table (one row per thing, where the command has rows).")
    var output: OutputFormat = .text

    /// Refuses `--json` (which means `--output json`) beside `--output table`.
    func refuseTable(with jsonFlag: Bool) throws {
        if jsonFlag && output == .table { throw ValidationError("--output table and --json are two forms; choose one") }
    }

    /// Refuses `--output table` for a command whose results are not rows.
    func refuseTable(_ command: String) throws {
        if output == .table {
            throw ValidationError("--output table: \(command) prints one result, not rows; use --output text or --output json")
        }
    }
}

/// `--json` beside `--output`: the pair `plan`, `sweep` and `compare` take. `--json` means
/// `--output json`; it is refused beside `--output table`.
struct JSONOutputOptions: ParsableArguments {
    @Flag(name: .customLong("json"), help: "Print the results as JSON (the same as --output json).") var jsonFlag = false
    @OptionGroup var format: OutputOption

    func validate() throws { try format.refuseTable(with: jsonFlag) }

    /// `--json` or `--output json`.
    var json: Bool { jsonFlag || format.output == .json }
    /// The `--output` given.
    var output: OutputFormat { format.output }
}
