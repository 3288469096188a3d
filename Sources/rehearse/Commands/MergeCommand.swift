import ArgumentParser
import Formats
import Reports
import UpgradeEngine

/// `rehearse merge`: the parts of a sharded sweep, combined into the report one process prints,
/// and judged by the requirements the parts carry and those given here.
struct MergeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "merge",
        abstract: "Combine the parts printed by rehearse sweep --shard I/N --json into the sweep's report.",
        discussion: """
            Every part must come from the same scenario, overrides, deadline, requirements and version \
            of rehearse; the parts may cover one block of seeds or adjacent blocks (0..99 as 1/2 and 2/2, \
            100..199 as 1/1), every shard of a block there once, and a seed found in two parts must have \
            the same result in both. The result is exactly what one unsharded sweep of all the seeds \
            prints, whatever the order of the parts. Requirements (carried by the parts or given with \
            --require) make it a gate: 0 when every one held, 1 otherwise. Parts of a sequential gate \
            (sweep --until-decided --shard) are judged where one process looks (every 100 seeds) and \
            the report keeps the runs up to the first look that decides, as one process would.
            """
    )

    @Argument(help: "The parts (JSON files).") var parts: [String]
    @OptionGroup var risk: RiskArguments
    @Flag(name: .customLong("until-decided"), help: "Judge as a sequential gate: stop at the first look (every 100 seeds) that decides every requirement.")
    var untilDecided = false
    @Flag(name: .customLong("json"), help: "Print the report as JSON (the same bytes as rehearse sweep --json).") var jsonFlag = false
    @OptionGroup var format: OutputOption

    func validate() throws { try format.refuseTable("merge") }
    /// `--json` or `--output json`.
    var json: Bool { jsonFlag || format.output == .json }

    func run() throws {
        guard !parts.isEmpty else { throw InputError(.command("merge"), problem: "needs the parts of a sweep", allowed: "rehearse merge part1.json part2.json …") }
        let read = try readParts(parts)
        if read.contains(where: { $0.position != nil }) { return try mergeCombinations(read) }
        var report = try SweepPart.merge(read.map { ($0.name, $0.part) })
        let carried = read[0].part
        let question = try risk.question(script: carried.question, deadline: report.deadline, expectations: report.expectations)
        let sequential = untilDecided || carried.untilDecided
        if sequential && question == nil {
            throw InputError(option: "--until-decided", problem: "there is no requirement to decide", allowed: "--require \"Faulted <= 1%\" or parts written with requirements")
        }
        var judged = question?.judge(report.runs, keys: report.expectations)
        let held = report.runs.count
        if sequential, let question {
            let gate = SequentialGate.judge(report.runs, question: question, keys: report.expectations)
            report.runs.removeLast(report.runs.count - gate.count)
            if let last = report.runs.last { report.seeds.last = last.seed }
            judged = gate.results
        }
        if json {
            var document = SweepJSON.report(report)
            if let judged, let question, case .ordered(var fields) = document {
                fields.append(JSONField("requirements", RiskText.json(judged, confidence: question.confidence)))
                fields.append(JSONField("passed", .bool(RiskVerdict(judged).passed)))
                document = .ordered(fields)
            }
            print(document.serialized())
        } else {
            for line in SweepText.report(report) { printText(line) }
            if let judged, let question {
                printText("")
                for line in RiskText.requirements(judged, confidence: question.confidence) { printText(line) }
                if sequential { printText("Stopped after \(report.runs.count) of the \(held) seeds the parts hold.") }
            }
        }
        if let judged, !RiskVerdict(judged).passed { throw CommandFailure.shown(exitCode: 1) }
    }
}

extension MergeCommand {
    /// The parts of a comparison (`compare --shard I/N`: a list per file, one part per
    /// combination): each combination merged, printed as `compare` prints it.
    func mergeCombinations(_ read: [(name: String, part: SweepPart, position: Int?)]) throws {
        if let lone = read.first(where: { $0.position == nil }) {
            throw InputError(.file(lone.name), problem: "is one sweep's part among the parts of a comparison", allowed: "the files of one compare --shard run")
        }
        guard !untilDecided else { throw InputError(option: "--until-decided", problem: "does not go with a comparison's parts", allowed: "parts of one sweep") }
        var groups: [(position: Int, parts: [(name: String, part: SweepPart)])] = []
        for entry in read.sorted(by: { ($0.position!, $0.name) < ($1.position!, $1.name) }) {
            if let at = groups.firstIndex(where: { $0.parts[0].part.report.overrides == entry.part.report.overrides }) {
                guard groups[at].position == entry.position! else {
                    throw InputError(.file(entry.name), problem: "lists the combination [\(entry.part.report.overrides.joined(separator: ", "))] at [\(entry.position!)], "
                                         + "\(groups[at].parts[0].name) at [\(groups[at].position)]", allowed: "the files of one compare --shard run")
                }
                groups[at].parts.append((entry.name, entry.part))
            } else {
                groups.append((entry.position!, [(entry.name, entry.part)]))
            }
        }
        var rows: [CompareText.Row] = []
        for group in groups {
            let report = try SweepPart.merge(group.parts)
            let question = try risk.question(script: group.parts[0].part.question, deadline: report.deadline, expectations: report.expectations)
            rows.append(CompareText.Row(report: report, requirements: question?.judge(report.runs, keys: report.expectations) ?? []))
        }
        if json {
            print(compareJSON(rows).serialized())
        } else {
            for line in CompareText.table(rows) { printText(line) }
        }
        if compareFailed(rows) { throw CommandFailure.shown(exitCode: 1) }
    }
}

/// Reads part files: a part (`sweep --shard I/N --json`) or a list of parts, one per combination
/// (`compare --shard`, `tune --shard`), each file at most `SweepPart.maxBytes`; `position` is a
/// part's place in its list (nil for a lone part). Exit 2 naming the file for anything unreadable.
func readParts(_ paths: [String]) throws -> [(name: String, part: SweepPart, position: Int?)] {
    var read: [(name: String, part: SweepPart, position: Int?)] = []
    for path in paths {
        let value = try readJSONDocument(path, maxBytes: SweepPart.maxBytes)
        let items: [(JSON, Int?)]
        if case .array(let list) = value { items = list.enumerated().map { ($0.element, $0.offset) } } else { items = [(value, nil)] }
        for (item, position) in items {
            do {
                read.append((path, try SweepPart.read(item), position))
            } catch {
                throw InputError(.file(path), problem: (position.map { "[\($0)]." } ?? "") + "\(error)")
            }
        }
    }
    return read
}
