import AzureWire
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
    @Flag(help: "Keep the virtual clock still; each client poll (the status of an operation still in progress, get-latest, the OS upgrade history) advances it to the next event, none while a lifecycle hook event is Active (POST /rehearse/clock moves it then).")
    var step = false
    @Option(name: .customLong("start-at"),
            help: "When the virtual clock starts running, as an RFC 3339 UTC time such as 2026-11-26T19:00:00Z (default: the first request). Past: it has run since then; future: it stays at zero until then. Served times count from it (default: the server's start), with --step too, where it only anchors them.")
    var startAt: String?
    @Option(name: .customLong("ca-cert"), help: "Keep the CA here (PEM, its key beside it as FILE.key, mode 600): made and written on the first start, read back on later ones, so clients' CA bundles keep working across restarts.") var caCert: String?
    @OptionGroup var eventsOption: EventsOption
    @OptionGroup var page: ReportOption
    @Flag(help: "Serve plain HTTP instead of HTTPS (no certificates).") var http = false

    func validate() throws {
        if step && speed != nil { throw ValidationError("--speed and --step are two clocks; choose one") }
        if let speed, !(speed > 0 && speed <= 1_000_000) { throw ValidationError("--speed \(speed): allowed a factor above 0 and at most 1000000") }
        if !(0...65_535).contains(port) { throw ValidationError("--port \(port): allowed 0–65535") }
        if http && caCert != nil { throw ValidationError("--ca-cert goes with HTTPS; drop --http") }
        if let startAt, case .failure(let problem) = Self.instant(startAt) {
            throw ValidationError("--start-at \(JSON.string(startAt).brief()): \(problem.text) (give an RFC 3339 UTC time such as 2026-11-26T19:00:00Z, years 1970 to 9999)")
        }
    }

    /// `2026-11-26T19:00:00Z` (fractional seconds allowed) as an instant; an impossible instant
    /// (30 February, 31 November, hour 24, second 60) or any other text is refused, named.
    static func instant(_ text: String) -> Result<Date, StartAtProblem> {
        guard text.hasSuffix("Z") || text.hasSuffix("z") else { return .failure(StartAtProblem(text: "not a UTC time (it must end in Z)")) }
        let utc = text.dropLast() + "Z"
        if let ms = LifecycleHooksWire.instant(String(utc), epoch: 0), ms >= 0 {
            return .success(Date(timeIntervalSince1970: Double(ms) / 1000))
        }
        return .failure(StartAtProblem(text: StartAtProblem.impossible(String(utc)) ?? "not an RFC 3339 UTC time"))
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
        configuration.startAt = startAt.flatMap { try? Self.instant($0).get() }
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

/// Why a `--start-at` text is not an instant.
struct StartAtProblem: Error {
    let text: String

    /// For `YYYY-MM-DDThh:mm:ss…Z` whose fields are out of range, which one and its range (30
    /// February, 31 November, hour 24); nil when the text is not of that form or is before 1970.
    static func impossible(_ text: String) -> String? {
        let parts = text.dropLast().split(separator: "T", omittingEmptySubsequences: false)
        guard parts.count == 2 else { return nil }
        let date = parts[0].split(separator: "-", omittingEmptySubsequences: false).map { Int($0) }
        let clock = parts[1].split(separator: ".", maxSplits: 1).first?.split(separator: ":", omittingEmptySubsequences: false).map { Int($0) } ?? []
        guard date.count == 3, clock.count == 3, let y = date[0], let m = date[1], let d = date[2], let h = clock[0], let mi = clock[1], let s = clock[2]
        else { return nil }
        let months = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"]
        if y < 1970 { return "year \(y) is before 1970" }
        guard (1...12).contains(m) else { return "month \(m) does not exist; allowed 01–12" }
        let days = Calendar(identifier: .gregorian).range(of: .day, in: .month,
                                                          for: DateComponents(calendar: Calendar(identifier: .gregorian), timeZone: TimeZone(identifier: "UTC"), year: y, month: m, day: 1).date!)?.count ?? 31
        guard (1...days).contains(d) else { return "\(d) \(months[m - 1]) \(y) does not exist; \(months[m - 1]) \(y) has \(days) days" }
        guard (0...23).contains(h) else { return "hour \(h) does not exist; allowed 00–23" }
        guard (0...59).contains(mi) else { return "minute \(mi) does not exist; allowed 00–59" }
        guard (0...59).contains(s) else { return "second \(s) does not exist; allowed 00–59" }
        return nil
    }
}

/// The events file, written by the served run's task alone, one event after another.
private struct Unchecked<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
