import ArgumentParser

/// `--output text|json`: the same option on every command that prints results. `--json`, where
/// a command had it first, means the same as `--output json`.
enum OutputFormat: String, ExpressibleByArgument, CaseIterable {
    case text, json
}

/// The `--output` option, for commands that take it as a group.
struct OutputOption: ParsableArguments {
    @Option(help: "text (for a person) or json (for a program).") var output: OutputFormat = .text
}
