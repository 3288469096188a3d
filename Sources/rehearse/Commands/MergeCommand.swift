import ArgumentParser
import Formats
import Reports
import UpgradeEngine

/// `rehearse merge`: the parts of a sharded sweep, combined into the report one process prints.
struct MergeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "merge",
        abstract: "Combine the parts printed by rehearse sweep --shard I/N --json into the sweep's report.",
        discussion: "Every part must come from the same scenario, seeds, overrides and deadline, every shard 1..N must be there once, and a seed found in two parts must have the same result in both; the result is exactly what one unsharded sweep prints, whatever the order of the parts."
    )

    @Argument(help: "The parts (JSON files).") var parts: [String]
    @Flag(name: .customLong("json"), help: "Print the report as JSON (the same bytes as rehearse sweep --json).") var jsonFlag = false
    @OptionGroup var format: OutputOption

    func validate() throws { try format.refuseTable("merge") }
    /// `--json` or `--output json`.
    var json: Bool { jsonFlag || format.output == .json }

    func run() throws {
        guard !parts.isEmpty else { throw InputError(.command("merge"), problem: "needs the parts of a sweep", allowed: "rehearse merge part1.json part2.json …") }
        var read: [(name: String, part: SweepPart)] = []
        for path in parts {
            let value = try readJSONDocument(path, maxBytes: SweepPart.maxBytes)
            do {
                read.append((path, try SweepPart.read(value)))
            } catch {
                throw InputError(.file(path), problem: "\(error)")
            }
        }
        let report: SweepReport
        report = try SweepPart.merge(read)
        if json {
            print(SweepJSON.report(report).serialized())
        } else {
            for line in SweepText.report(report) { printText(line) }
        }
    }
}
