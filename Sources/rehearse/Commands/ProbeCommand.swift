import ArgumentParser
import Formats
import Foundation
import HealthProbe
import UpgradeEngine

/// `rehearse probe`: probe a live endpoint once, as the Application Health extension would, and
/// say what rehearse (and Azure) make of the answer.
struct ProbeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "probe",
        abstract: "Probe a live endpoint once as the health extension does and judge the answer.",
        discussion: """
            GET of an http(s) URL (one deadline for the whole answer, no redirects followed, no \
            certificate verification and no decompression, as the extension; body read up to 64 KiB) \
            or a TCP connect (tcp://host:port). Exit status: 0 when the result is Healthy, 1 when it \
            is Unhealthy or Unknown, 2 for a bad URL.
            """
    )

    @Argument(help: "http://host:port/path, https://…, or tcp://host:port") var url: String
    @Flag(help: "Binary states (typeHandlerVersion 1.0): Healthy on 2xx, Unhealthy otherwise.") var binary = false
    @OptionGroup var wire: StrictWireOption
    @Option(help: "Seconds to wait for the whole answer (at most 30, the extension's own timeout).") var timeout: Double = 30
    @Flag(name: .customLong("json"), help: "Print the outcome as one JSON object instead of text.") var jsonFlag = false
    @OptionGroup var format: OutputOption

    func validate() throws { try format.refuseTable("probe") }
    /// `--json` or `--output json`.
    var json: Bool { jsonFlag || format.output == .json }

    func run() throws {
        let probe: EndpointProbe
        probe = try EndpointProbe(url, timeout: timeout)
        let outcome = probe.run()
        let result = probe.settings(binary: binary).evaluate(outcome.reply, strictWire: wire.strictWire)
        if json {
            var fields: [String: JSON] = [
                "url": .string(url), "state": .string(result.state.rawValue), "bodyBytes": .int(outcome.bodyBytes),
                "failure": outcome.failure.map(JSON.string) ?? .null,
                "warnings": .array(result.diagnostics.map { .string($0.message) }),
            ]
            switch outcome.reply {
            case .http(let status, _): fields["status"] = .int(status)
            case .tcp(let connected): fields["connected"] = .bool(connected)
            default: break
            }
            if let metrics = result.metrics {
                fields["phase"] = metrics.phase.map(JSON.int) ?? .null
                fields["skipUpgrade"] = .bool(metrics.skipUpgrade)
            }
            print(JSON.object(fields).serialized(pretty: false))
            if result.state != .healthy { throw CommandFailure.shown(exitCode: 1) }
            return
        }
        switch outcome.reply {
        case .http(let status, _): printText("\(url): HTTP \(status), \(outcome.bodyBytes) bytes of body read")
        case .tcp(let connected): printText("\(url): connection \(connected ? "opened" : "failed: \(outcome.failure ?? "refused")")")
        default: printText("\(url): no answer (\(outcome.failure ?? "unknown reason"))")
        }
        printText("state: \(result.state.rawValue)")
        if let metrics = result.metrics {
            printText("phase: \(metrics.phase.map(String.init) ?? "none (last phase)")")
            printText("skipUpgrade: \(metrics.skipUpgrade)")
        }
        for diagnostic in result.diagnostics { warn(diagnostic.message) }
        if result.state != .healthy { throw CommandFailure.shown(exitCode: 1) }
    }
}
