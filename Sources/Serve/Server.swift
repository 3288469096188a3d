public import Foundation
public import Formats
import Hummingbird
import HummingbirdCore
import HummingbirdTLS
import Logging
import NIOCore
import ServiceLifecycle
import UnixSignals
import Synchronization
public import Scenario
public import UpgradeEngine

/// `rehearse serve`'s settings.
public struct ServeConfiguration: Sendable {
    /// The port on 127.0.0.1 (0: any free port).
    public var port = 8443
    /// How the virtual clock follows real time (60 virtual seconds per real second by default).
    public var mode = ClockMode.speed(60)
    /// The real instant the virtual clock starts running from in speed mode (`--start-at`): in
    /// the past, the clock has run since then; in the future, it stands at zero until then. Nil:
    /// the first request's arrival.
    public var startAt: Date?
    /// The Unix second served times count from (virtual time 0 is served as this instant); nil:
    /// `startAt`'s second, or, without it, the second the server starts. A pipeline's own
    /// wall-clock instants (`waitUntil = now + 20 min`) are then instants of the served clock.
    public var epoch: Int?
    /// HTTPS with the generated CA (the default), or plain HTTP.
    public var tls = true
    /// Where to write the CA certificate (PEM).
    public var caCertPath: String?
    /// Told every event as it happens (the CLI writes `--events` from it, as `run` does).
    public var onEvent: (@Sendable (Event) -> Void)?
    /// The run's inputs: seed, limits, whether the record keeps its events (the report draws from them).
    public var inputs = RunInputs()
    /// The largest request body read (bytes); a larger one is answered 413.
    public var maxBodyBytes = 4 << 20
    /// Told every step that reached the engine: its virtual time and its actions in order (a
    /// refused one included; it is an `actionFailed` event). A timeline of these actions at
    /// these times, run by `Rehearsal.run`, gives the served run's events.
    public var onPerform: (@Sendable (Millis, [SessionAction]) -> Void)?

    /// The defaults: port 8443, HTTPS, speed 60, no files written.
    public init() {}
}

/// A failure to start serving: the events file, the certificate file, the port.
public enum ServeError: Error, CustomStringConvertible, UserFacingError {
    /// An input of the server could not be used: which, the value given, what went wrong.
    case input(Setting, value: String?, problem: String)
    /// The served run ended with an error (a script error, a run limit).
    case run(ScenarioError)
    /// The last events could not be written.
    case events(String)

    /// The input, or where the run's error is.
    public var place: Location? {
        switch self {
        case .input(let setting, let value, _): return .setting(setting, value: value)
        case .run(let error): return error.place
        case .events: return .setting(.eventsFile, value: nil)
        }
    }
    /// Bad input (a file or port that cannot be used, a scenario that fails): 2.
    public var exitCode: Int32 { 2 }

    /// What went wrong, without the command line's spelling of the input.
    public var description: String {
        switch self {
        case .input(_, _, let problem): return problem
        case .run(let error): return "\(error)"
        case .events(let problem): return problem
        }
    }
}

/// The server: Compute's scale set routes over a steppable run, the identity endpoints, the clock.
public enum Server {
    /// How long requests in progress may take to finish after SIGTERM or SIGINT before their
    /// connections are closed (a client still sending a body is not waited for longer).
    static let shutdownGrace: Duration = .seconds(2)

    /// Serves `definition` until SIGINT or SIGTERM; `ready` is told the base URL once listening.
    /// Returns the run's record, driven to its end; throws the error that ended the run, if one
    /// did (the events file is then left as it was).
    public static func run(_ definition: ScenarioDefinition, configuration: ServeConfiguration,
                           ready: @escaping @Sendable (String) -> Void) async throws -> RunRecord {
        let run: ServedRun
        do {
            let epoch = configuration.epoch ?? Int((configuration.startAt ?? Date()).timeIntervalSince1970.rounded(.down))
            run = try ServedRun(definition, configuration.inputs, mode: configuration.mode, epoch: epoch, onEvent: configuration.onEvent,
                                onPerform: configuration.onPerform)
            // A stepped clock stands still whatever the start: there it only anchors the times served.
            if let startAt = configuration.startAt, case .speed = configuration.mode {
                await run.start(at: ContinuousClock.now.advanced(by: .seconds(startAt.timeIntervalSinceNow)))
            }
        } catch {
            throw ServeError.run(error.error)
        }
        var tls: TLSMaterial?
        if configuration.tls {
            tls = try TLSMaterial.prepared(caCertPath: configuration.caCertPath)
        }
        let scheme = tls == nil ? "http" : "https"
        // Set once the port is bound: an error before that is the port's.
        let listening = Mutex(false)
        var logger = Logger(label: "rehearse-serve")
        logger.logLevel = .critical
        let app = try application(ServeAPI(run: run, scheme: scheme, maxBodyBytes: configuration.maxBodyBytes), tls: tls,
                                  port: configuration.port, logger: logger) { channel in
            listening.withLock { $0 = true }
            let port = channel.localAddress?.port ?? configuration.port
            ready("\(scheme)://127.0.0.1:\(port)")
        }
        var group = ServiceGroupConfiguration(services: [app], gracefulShutdownSignals: [.sigterm, .sigint], cancellationSignals: [], logger: logger)
        // No bound on the cancellation that follows: ServiceLifecycle traps past it. A connection
        // cancellation cannot close (a TLS keep-alive) ends by the idle timeout.
        group.maximumGracefulShutdownDuration = shutdownGrace
        do {
            try await ServiceGroup(configuration: group).run()
        } catch where !listening.withLock({ $0 }) {
            throw ServeError.input(.port, value: String(configuration.port), problem: "cannot listen on 127.0.0.1: \(error)")
        } catch {
            // A shutdown that had to cancel connections still ends the run as usual.
        }
        return try await run.close()
    }

    /// The Hummingbird application: the routes of `api`, HTTP/1.1 (over TLS with `tls`) with
    /// serve's one HTTP configuration, on 127.0.0.1:`port`.
    static func application(_ api: ServeAPI, tls: TLSMaterial?, port: Int, logger: Logger,
                            onServerRunning: @escaping @Sendable (any Channel) async -> Void) throws -> some ApplicationProtocol {
        let responder = api.responder()
        let http: HTTPServerBuilder = .http1(configuration: ServeHTTP.channel)
        let server: HTTPServerBuilder = if let tls { try .tls(http, tlsConfiguration: tls.configuration) } else { http }
        let configuration = ApplicationConfiguration(address: .hostname("127.0.0.1", port: port), serverName: "rehearse", backlog: 1024,
                                                     availableConnectionsDelegate: MaximumAvailableConnections(ServeHTTP.connectionLimit))
        return Application(responder: responder, server: server, configuration: configuration, onServerRunning: onServerRunning, logger: logger)
    }
}
