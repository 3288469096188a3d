import Formats
import LuaHost
import ArgumentParser
import Foundation
import Reports
import Scenario
import Serve
import UpgradeEngine

/// `rehearse serve`: the scenario's scale set behind Compute's REST API on 127.0.0.1.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Serve the scenario's scale set behind the Microsoft.Compute REST subset a rollout pipeline uses (HTTPS on 127.0.0.1, a fake Entra authority), on a virtual clock.",
        discussion: """
            Prints one line, "rehearse serve: URL (…)", once listening; runs until SIGINT or SIGTERM, then \
            finishes the run. --events FILE grows in FILE.partial as events happen (follow it with \
            `tail -F FILE.partial`) and replaces FILE once the run ends well; a run that fails leaves \
            FILE as it was. Point clients at URL: the Azure SDK with \
            base_url=URL and the CA bundle from --ca-cert; az after `az cloud register --endpoint-resource-manager URL`.
            """
    )

    @OptionGroup var scenario: ScenarioArguments
    @OptionGroup var seeded: SeedOption
    @Option(help: "The port on 127.0.0.1 (0: any free port; the line printed says which).") var port = 8443
    @Option(help: "Virtual seconds per real second (default 60).") var speed: Double?
    @Flag(help: "Keep the virtual clock still; each client poll (an operation's status, get-latest, the OS upgrade history) advances it to the next event.")
    var step = false
    @Option(name: .customLong("start-at"),
            help: "When the virtual clock starts running, as an RFC 3339 UTC time such as 2026-11-26T19:00:00Z (default: the first request). Past: it has run since then; future: it stays at zero until then. Not with --step.")
    var startAt: String?
    @Option(name: .customLong("ca-cert"), help: "Write the generated CA certificate (PEM) here, for clients' CA bundles.") var caCert: String?
    @OptionGroup var eventsOption: EventsOption
    @OptionGroup var page: ReportOption
    @Flag(help: "Serve plain HTTP instead of HTTPS (no certificates).") var http = false

    func validate() throws {
        if step && speed != nil { throw ValidationError("--speed and --step are two clocks; choose one") }
        if let speed, !(speed > 0 && speed <= 1_000_000) { throw ValidationError("--speed \(speed): allowed a factor above 0 and at most 1000000") }
        if !(0...65_535).contains(port) { throw ValidationError("--port \(port): allowed 0–65535") }
        if http && caCert != nil { throw ValidationError("--ca-cert goes with HTTPS; drop --http") }
        if let startAt {
            if step { throw ValidationError("--start-at starts a running clock; --step keeps it still: choose one") }
            if Self.instant(startAt) == nil {
                throw ValidationError("--start-at \(startAt): not an RFC 3339 UTC time; allowed such as 2026-11-26T19:00:00Z")
            }
        }
    }

    /// `2026-11-26T19:00:00Z` (fractional seconds allowed) as an instant; nil for anything else.
    static func instant(_ text: String) -> Date? {
        guard text.hasSuffix("Z") || text.hasSuffix("z") else { return nil }
        let plain = ISO8601DateFormatter()
        let fractional = ISO8601DateFormatter()
        fractional.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return plain.date(from: text) ?? fractional.date(from: text)
    }

    func run() async throws {
        let (definition, loadedInputs) = try scenario.load(seed: seeded.seed, print: { line in printError("print: \(line)") })
        // A served run lasts as long as the server: the run-wide backstop on script seconds would
        // end a healthy server after minutes of probes. Each call keeps its own budget and limit.
        var inputs = loadedInputs
        inputs.limits.runWallClockMilliseconds = 0
        // The report draws from every event.
        if page.reportFile != nil { inputs.recordEvents = true }
        // Opened before serving, as `run` opens it: a path that cannot be written costs no server.
        // Followable: the events grow in FILE.partial as they happen, and replace FILE when the run ends well.
        let eventFile = try eventsOption.events.map { try openOutput($0, option: "--events", role: "the events file", followable: true) }
        let pageFile = try page.reportFile.map { try openOutput($0, option: "--report", role: "the report") }
        if let caCert, !http { _ = try openOutput(caCert, option: "--ca-cert", role: "the CA certificate") }
        var configuration = ServeConfiguration()
        configuration.port = port
        configuration.mode = step ? .step : .speed(speed ?? 60)
        configuration.startAt = startAt.flatMap(Self.instant)
        configuration.tls = !http
        configuration.caCertPath = caCert
        // Written by the run's task alone, one event after another, and committed once it ends well.
        if let eventFile { configuration.onEvent = { [eventFile = Unchecked(eventFile)] in eventFile.value.writeLine($0.jsonLine) } }
        configuration.inputs = inputs
        let clock = step ? "clock stepped by polls" : "clock speed \(speed ?? 60)"
        let summary = "\(definition.scaleSet.name), \(definition.scaleSet.capacity) instances, \(definition.scaleSet.policy.mode.rawValue) mode; \(clock)"
        let record = try await Server.run(definition, configuration: configuration) { url in
            // Written at once (not through print's buffer): a client waits for this line.
            StandardStream.output.write("rehearse serve: \(url) (\(summary))\n")
        }
        // The served run's record, as `run` would have it: the events file's end, then the report.
        if let eventFile { try finishOutput(eventFile, option: "--events") }
        if let pageFile {
            let scaleSet = try Rehearsal.scaleSet(definition, overrides: inputs.overrides)
            let html: String
            do {
                html = try RunReport.html(record, scaleSet: scaleSet, scenario: scenario.scenario,
                                          statusText: RunText.status(record, scaleSet: scaleSet, rest: false))
            } catch {
                throw InputError(option: "--report", pageFile.path, problem: "cannot be made: \(error)")
            }
            try finishOutput(pageFile, option: "--report", writing: html)
        }
    }
}

/// The events file, written by the served run's task alone, one event after another.
private struct Unchecked<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
