import ArgumentParser
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
            GET of an http(s) URL (no redirects followed, body read up to 64 KiB) or a TCP connect \
            (tcp://host:port). Exit status: 0 when the result is Healthy, 1 when it is Unhealthy or \
            Unknown, 2 for a bad URL. On Linux certificates of https endpoints are verified; an \
            endpoint with an invalid certificate gives no answer (Azure's extension does not verify).
            """
    )

    @Argument(help: "http://host:port/path, https://…, or tcp://host:port") var url: String
    @Flag(help: "Binary states (typeHandlerVersion 1.0): Healthy on 2xx, Unhealthy otherwise.") var binary = false
    @Flag(name: .customLong("strict-wire"), help: "Judge customMetrics sent as a JSON object as Azure's extension does.") var strictWire = false
    @Option(help: "Seconds to wait for the answer (at most 30, the extension's own timeout).") var timeout: Double = 30

    func run() throws {
        let probe: EndpointProbe
        do { probe = try EndpointProbe(url, timeout: timeout) } catch { throw fail(error) }
        let outcome = probe.run()
        let result = probe.settings(binary: binary).evaluate(outcome.reply, strictWire: strictWire)
        switch outcome.reply {
        case .http(let status, _): print("\(url): HTTP \(status), \(outcome.bodyBytes) bytes of body read")
        case .tcp(let connected): print("\(url): connection \(connected ? "opened" : "failed: \(outcome.failure ?? "refused")")")
        default: print("\(url): no answer (\(outcome.failure ?? "unknown reason"))")
        }
        print("state: \(result.state.rawValue)")
        if let metrics = result.metrics {
            print("phase: \(metrics.phase.map(String.init) ?? "none (last phase)")")
            print("skipUpgrade: \(metrics.skipUpgrade)")
        }
        for diagnostic in result.diagnostics { printError("rehearse: warning: \(diagnostic.message)") }
        if result.state != .healthy { throw ExitCode(1) }
    }
}
