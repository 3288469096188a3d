import ArgumentParser
import AzureWire
import Foundation
import LuaHost
import Scenario
import UpgradeEngine

/// `rehearse run`: run a scenario and show what Azure would do.
struct RunCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Run a scenario: a timeline of phases, batches and checks, then the final get-latest status."
    )

    @OptionGroup var scenario: ScenarioArguments
    @Flag(help: "Print only the final get-latest JSON on standard output.") var json = false
    @Option(help: "With --json: az (the az CLI's flattened get-latest shape) or rest (the REST resource Azure's SDKs read).")
    var shape: StatusShape = .az
    @Flag(help: "With --json: print the OS image upgrade history (az vmss get-os-upgrade-history's list) instead of get-latest.")
    var osUpgradeHistory = false
    @Option(help: "Write every event to this file as one JSON object per line, as it happens.") var events: String?
    @Flag(help: "Also show health changes and every operation in the timeline.") var verbose = false

    func validate() throws {
        if osUpgradeHistory && !json { throw ValidationError("--os-upgrade-history goes with --json (the text output always shows the history)") }
    }

    func run() throws {
        let quiet = json
        let printLine: (String) -> Void = { line in
            if quiet { printError("print: \(line)") } else { print("print: \(line)") }
        }
        let loaded = try loadScenario(scenario, print: printLine)
        var eventFile: EventsFile?
        if let events {
            do { eventFile = try EventsFile(path: events) } catch { throw fail(error) }
        }
        let timeline = Timeline(verbose: verbose)
        let result: RunRecord
        do {
            result = try Rehearsal.run(loaded, seed: scenario.seed, print: printLine) { event in
                eventFile?.writeLine(event.jsonLine)
                warnIfWire(event)
                if !quiet, let line = timeline.line(for: event) { print(line) }
            }
        } catch {
            throw fail(error.error)
        }
        do { try eventFile?.finish() } catch { throw fail(error) }
        let history = JSON.array(result.summary.osUpgradeHistory.map { $0.json(location: loaded.scaleSet.location) })
        let statusJSON = shape == .rest
            ? result.summary.status?.restJSON(scaleSet: loaded.scaleSet.name).serialized()
            : result.summary.status?.json().serialized()
        if json && osUpgradeHistory {
            print(history.serialized())
        } else if json {
            if let statusJSON { print(statusJSON) } else { printError("rehearse: no rolling upgrade ran, so get-latest has nothing to show") }
        } else {
            print("")
            if let statusJSON {
                print("Final status (az vmss rolling-upgrade get-latest):")
                print(statusJSON)
            } else {
                print("No rolling upgrade ran.")
            }
            if !result.summary.osUpgradeHistory.isEmpty {
                print("OS image upgrade history (az vmss get-os-upgrade-history):")
                print(history.serialized())
            }
            if !result.summary.skipped.isEmpty { print("Skipped (SkipUpgrade): \(result.summary.skipped)") }
            if !result.summary.protected.isEmpty { print("Protected (protectFromScaleSetActions): \(result.summary.protected)") }
            if !result.summary.rollbackFailed.isEmpty { print("Rollback failed (still on the new model): \(result.summary.rollbackFailed)") }
            let behind = result.instances.filter { $0.leftBehind != nil }
            if !behind.isEmpty {
                let byReason = LeftBehind.allCases.compactMap { reason -> String? in
                    let ids = behind.filter { $0.leftBehind == reason }.map(\.id)
                    return ids.isEmpty ? nil : "\(reason.rawValue) \(ids)"
                }
                print("Not on the newest model: " + byReason.joined(separator: ", "))
            }
            if let a = result.summary.availability {
                print("Availability: lowest healthy \(a.lowestHealthy) (capacity \(result.summary.capacity)), "
                    + "\(String(format: "%.0f", a.unavailableInstanceSeconds)) instance-seconds unavailable, "
                    + "finished in \(ISODuration.format(Int(a.timeToFinishSeconds * 1000)))")
            }
            if result.summary.hitTimeLimit { print("Stopped at the time limit with work left.") }
        }
        let failed = result.failedExpectations
        report(failed.flatMap { Diagnostic.of($0) })
        if !failed.isEmpty { throw ExitCode(1) }
        if !json && !loaded.expectations.isEmpty { print("All \(loaded.expectations.count) expectation(s) held.") }
    }
}

/// Turns events into readable timeline lines.
struct Timeline {
    let verbose: Bool

    static let always: Set<Event.Kind> = [
        .modelUpdated, .upgradeStarted, .metricsRead, .preBatchCheck, .batchStarted, .batchFinished, .postBatchCheck, .pause,
        .upgradeCompleted, .upgradeFaulted, .upgradeCancelled, .rollbackStarted, .surgeFallback, .scaled, .manualUpgrade,
        .automaticUpgrade, .actionFailed, .imageReleased, .osUpgradeDeferred, .osUpgradeApproved, .imageRestoreStarted,
    ]

    func line(for event: Event) -> String? {
        var failedOperation = false
        if case .operationFinished(_, _, succeeded: false) = event.payload { failedOperation = true }
        guard verbose || Self.always.contains(event.kind) || failedOperation else { return nil }
        if event.kind == .wireWarning || event.kind == .metricsMissing || event.kind == .runEnded { return nil }
        let time = ISODuration.format(event.time)
        let pad = String(repeating: " ", count: max(0, 10 - time.count))
        return "\(pad)\(time)  \(event.kind.rawValue.padding(toLength: 19, withPad: " ", startingAt: 0)) \(ScriptText.escaped(event.detail))"
    }
}

/// The two JSON shapes of a rolling upgrade's status.
enum StatusShape: String, ExpressibleByArgument, CaseIterable {
    case az, rest
}
