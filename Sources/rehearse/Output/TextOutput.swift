import Formats

/// Prints one line of human-readable output on standard output with its control characters
/// shown rather than interpreted (`\u{1B}`, `\n`), through the one escaper the timeline and
/// every message use: scripts and documents supply names, values and messages, and none of them
/// may move the cursor, recolour the terminal or forge a line. JSON is printed with `print`: its
/// serializer already escapes what a string holds. A tab stays a tab (it separates `print`'s
/// arguments and moves the cursor nowhere but right).
func printText(_ line: String) {
    print(line.split(separator: "\t", omittingEmptySubsequences: false).map { ScriptText.escaped(String($0)) }.joined(separator: "\t"))
}
