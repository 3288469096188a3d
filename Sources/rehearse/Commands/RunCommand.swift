import ArgumentParser
import AzureWire
import Formats
import Foundation
import Reports
import Scenario
import UpgradeEngine

/// `rehearse run`: run a scenario and show what Azure would do.
struct RunCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Run a scenario: a timeline of phases, batches and checks, then the final get-latest status."
    )

    @OptionGroup var scenario: ScenarioArguments
    @OptionGroup var seeded: SeedOption
    @OptionGroup var policy: PolicySetOption
    @Flag(help: "Print only the final get-latest JSON on standard output.") var json = false
    @Option(help: "text (the timeline and the outcome), json (the whole outcome as one JSON document: status, availability, durations, instances, expectations) or table (every instance at the end: zone, domains, model, health, why it is behind).")
    var output: OutputFormat = .text
    @Option(help: "With --json: az (the az CLI's flattened get-latest shape) or rest (the REST resource Azure's SDKs read).")
    var shape: StatusShape = .az
    @Flag(help: "With --json: print the OS image upgrade history (az vmss get-os-upgrade-history's list) instead of get-latest.")
    var osUpgradeHistory = false
    @OptionGroup var eventsOption: EventsOption
    @Flag(help: "Also show health changes and every operation in the timeline.") var verbose = false
    @OptionGroup var page: ReportOption

    func validate() throws {
        if output != .text && json { throw ValidationError("--output \(output.rawValue) and --json are two documents; choose one") }
        if osUpgradeHistory && !json { throw ValidationError("--os-upgrade-history goes with --json (the text output always shows the history)") }
    }

    func run() throws {
        let quiet = json || output != .text
        let printLine: (String) -> Void = { line in
            if quiet { printError("print: \(line)") } else { printText("print: \(line)") }
        }
        let overrides = try policy.overrides()
        var (loaded, inputs) = try scenario.load(seed: seeded.seed, overrides: overrides, print: printLine)
        // The report draws from every event.
        if page.reportFile != nil { inputs.recordEvents = true }
        _ = try Rehearsal.scaleSet(loaded, overrides: overrides)
        // Opened before the run, so that a path that cannot be written costs no run; a run that
        // fails leaves files already there as they were.
        let eventFile = try eventsOption.events.map { try openOutput($0, option: "--events", role: "the events file") }
        let pageFile = try page.reportFile.map { try openOutput($0, option: "--report", role: "the report") }
        let timeline = Timeline(verbose: verbose)
        let result: RunRecord
        do {
            // A print during the run carries its virtual time: "print PT1M30S: …".
            let timedLine: (Millis, String) -> Void = { time, line in
                if quiet { printError("print \(ISODuration.format(time)): \(line)") } else { printText("print \(ISODuration.format(time)): \(line)") }
            }
            result = try Rehearsal.run(loaded, inputs, printAt: timedLine) { event in
                eventFile?.writeLine(event.jsonLine)
                warnIfWire(event)
                if !quiet, let line = timeline.line(for: event) { printText(line) }
            }
        } catch {
            throw error.error
        }
        if let eventFile { try finishOutput(eventFile, option: "--events") }
        if output == .json {
            print(RunJSON.summary(result, scaleSet: loaded.scaleSet).serialized())
        } else if output == .table {
            for line in Tables.fleet(result) { printText(line) }
        } else if json && osUpgradeHistory {
            print(RunText.history(result, scaleSet: loaded.scaleSet).serialized())
        } else if json {
            if let status = RunText.status(result, scaleSet: loaded.scaleSet, rest: shape == .rest) {
                print(status)
            } else {
                note("no rolling upgrade ran, so get-latest has nothing to show")
            }
        } else {
            for line in RunText.summary(result, scaleSet: loaded.scaleSet, rest: shape == .rest) { printText(line) }
        }
        if let pageFile {
            let page: String
            do {
                page = try RunReport.html(result, scaleSet: try Rehearsal.scaleSet(loaded, overrides: overrides), scenario: scenario.scenario,
                                          statusText: RunText.status(result, scaleSet: loaded.scaleSet, rest: false))
            } catch {
                throw InputError(option: "--report", pageFile.path, problem: "cannot be made: \(error)")
            }
            try finishOutput(pageFile, option: "--report", writing: page)
        }
        let failed = result.failedExpectations
        if !failed.isEmpty { throw CommandFailure(failed.flatMap { Diagnostic.of($0) }, exitCode: 1) }
        if !quiet && !loaded.expectations.isEmpty {
            // Counted per key: expect { code = "Completed", successful = 10 } is two checks.
            let keys = result.expectations.count, calls = loaded.expectations.count
            printText("All \(keys) expected value\(keys == 1 ? "" : "s") held (\(calls) expect call\(calls == 1 ? "" : "s")).")
        }
    }
}
