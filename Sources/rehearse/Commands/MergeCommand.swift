import ArgumentParser
import Formats
import Reports
import UpgradeEngine

/// `rehearse merge`: the parts of a sharded sweep, combined into the report one process prints.
struct MergeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "merge",
        abstract: "Combine the parts printed by rehearse sweep --shard I/N --json into the sweep's report.",
        discussion: "Every part must come from the same scenario, seeds, overrides and deadline, and every shard 1..N must be there once; the result is exactly what one unsharded sweep prints."
    )

    @Argument(help: "The parts (JSON files).") var parts: [String]
    @Flag(name: .customLong("json"), help: "Print the report as JSON (the same bytes as rehearse sweep --json).") var jsonFlag = false
    @OptionGroup var format: OutputOption

    func validate() throws { try format.refuseTable("merge") }
    /// `--json` or `--output json`.
    var json: Bool { jsonFlag || format.output == .json }

    func run() throws {
        guard !parts.isEmpty else { throw fail(InputError("merge", problem: "needs the parts of a sweep", allowed: "rehearse merge part1.json part2.json …")) }
        var read: [(path: String, part: SweepJSON.Part)] = []
        for path in parts {
            let value = try readJSONDocument(path, maxBytes: 512 << 20)
            do {
                read.append((path, try SweepJSON.readPart(value)))
            } catch {
                throw fail(InputError(path, problem: "\(error)"))
            }
        }
        let first = read[0].part
        for (path, part) in read.dropFirst() {
            let a = first.report, b = part.report
            let differences = [("scenario", a.scenario != b.scenario), ("seeds", a.seeds != b.seeds), ("overrides", a.overrides != b.overrides),
                               ("deadline", a.deadline != b.deadline), ("expectations", a.expectations != b.expectations),
                               ("shard count", first.shard.count != part.shard.count)].filter(\.1).map(\.0)
            guard differences.isEmpty else {
                throw fail(InputError(path, problem: "not a part of the same sweep as \(read[0].path): its \(differences.joined(separator: ", ")) differ"))
            }
        }
        let count = first.shard.count
        for index in 1...count {
            let holders = read.filter { $0.part.shard.index == index }.map(\.path)
            guard holders.count == 1 else {
                throw fail(InputError("merge", problem: holders.isEmpty ? "part \(index)/\(count) is missing; given: \(parts.joined(separator: ", "))"
                                                                   : "part \(index)/\(count) is given more than once: \(holders.joined(separator: ", "))"))
            }
        }
        let bySeed = Dictionary(read.flatMap(\.part.report.runs).map { ($0.seed, $0) }, uniquingKeysWith: { a, _ in a })
        let seeds = first.report.seeds.seeds()
        guard bySeed.count == seeds.count, seeds.allSatisfy({ bySeed[$0] != nil }) else {
            throw fail(InputError("merge", problem: "the parts do not hold exactly the runs of seeds \(first.report.seeds): \(bySeed.count) runs for \(seeds.count) seeds"))
        }
        var report = first.report
        report.runs = seeds.map { bySeed[$0]! }
        if json {
            print(SweepJSON.report(report).serialized())
        } else {
            for line in SweepText.report(report) { printText(line) }
        }
    }
}
