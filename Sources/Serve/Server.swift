import Foundation
public import Formats
import Hummingbird
import HummingbirdCore
import HummingbirdTLS
import Logging
import NIOCore
import Synchronization
public import Scenario
import UpgradeEngine

/// `rehearse serve`'s settings.
public struct ServeConfiguration: Sendable {
    /// The port on 127.0.0.1 (0: any free port).
    public var port = 8443
    /// How the virtual clock follows real time (60 virtual seconds per real second by default).
    public var mode = ClockMode.speed(60)
    /// HTTPS with the generated CA (the default), or plain HTTP.
    public var tls = true
    /// Where to write the CA certificate (PEM).
    public var caCertPath: String?
    /// Where to write every event, one JSON object per line, as it happens.
    public var eventsPath: String?
    /// Where to write the run's HTML report when the server stops.
    public var reportPath: String?
    /// The run's inputs: seed, limits, whether the record keeps its events (the report draws from them).
    public var inputs = RunInputs()
    /// The largest request body read (bytes); a larger one is answered 413.
    public var maxBodyBytes = 4 << 20

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
    /// Serves `definition` until SIGINT or SIGTERM; `ready` is told the base URL once listening.
    /// Returns the error that ended the run, if one did.
    public static func run(_ definition: ScenarioDefinition, configuration: ServeConfiguration,
                           ready: @escaping @Sendable (String) -> Void) async throws -> ServeError? {
        let run: ServedRun
        do {
            run = try ServedRun(definition, configuration.inputs, mode: configuration.mode, eventsPath: configuration.eventsPath)
        } catch let error as RunFailure {
            throw ServeError.run(error.error)
        } catch {
            throw ServeError.input(.eventsFile, value: nil, problem: "\(error)")
        }
        var tls: TLSMaterial?
        if configuration.tls {
            let material = try TLSMaterial()
            if let path = configuration.caCertPath {
                do { try material.caPEM.write(toFile: path, atomically: true, encoding: .utf8) } catch {
                    throw ServeError.input(.caCertificate, value: path, problem: "cannot be written: \(error.localizedDescription)")
                }
            }
            tls = material
        }
        let scheme = tls == nil ? "http" : "https"
        // Set once the port is bound: an error before that is the port's.
        let listening = Mutex(false)
        // The port is known once bound; the handler reads the base from the Host header.
        let api = ServeAPI(run: run, scheme: scheme, maxBodyBytes: configuration.maxBodyBytes)
        let responder = CallbackResponder<BasicRequestContext> { request, _ in await api.respond(request) }
        var logger = Logger(label: "rehearse-serve")
        logger.logLevel = .critical
        let server: HTTPServerBuilder = if let tls { try .tls(.http1(), tlsConfiguration: tls.configuration) } else { .http1() }
        let app = Application(responder: responder, server: server,
                              configuration: ApplicationConfiguration(address: .hostname("127.0.0.1", port: configuration.port),
                                                                      serverName: "rehearse", backlog: 1024),
                              onServerRunning: { channel in
                                  listening.withLock { $0 = true }
                                  let port = channel.localAddress?.port ?? configuration.port
                                  ready("\(scheme)://127.0.0.1:\(port)")
                              },
                              logger: logger)
        do {
            try await app.runService()
        } catch where !listening.withLock({ $0 }) {
            throw ServeError.input(.port, value: String(configuration.port), problem: "cannot listen on 127.0.0.1: \(error)")
        }
        return await run.close(reportPath: configuration.reportPath)
    }
}
