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
    /// The run's seed.
    public var seed: UInt64 = 0
    /// The largest request body read (bytes); a larger one is answered 413.
    public var maxBodyBytes = 4 << 20

    /// The defaults: port 8443, HTTPS, speed 60, no files written.
    public init() {}
}

/// A failure to start serving: the events file, the certificate file, the port.
public struct ServeError: Error, CustomStringConvertible, UserFacingError {
    /// What failed, naming the option or file.
    public var description: String
    /// The sentence names its option or file itself.
    public var place: Location? { nil }
    /// Bad input (a file or port that cannot be used): 2.
    public var exitCode: Int32 { 2 }
}

/// The server: Compute's scale set routes over a steppable run, the identity endpoints, the clock.
public enum Server {
    /// Serves `definition` until SIGINT or SIGTERM; `ready` is told the base URL once listening.
    /// Returns the error that ended the run, if one did.
    public static func run(_ definition: ScenarioDefinition, configuration: ServeConfiguration,
                           ready: @escaping @Sendable (String) -> Void) async throws -> String? {
        let run: ServedRun
        do {
            run = try ServedRun(definition, seed: configuration.seed, mode: configuration.mode, eventsPath: configuration.eventsPath)
        } catch let error as RunFailure {
            throw ServeError(description: "\(error.error)")
        } catch {
            throw ServeError(description: "--events: \(error)")
        }
        var tls: TLSMaterial?
        if configuration.tls {
            let material = try TLSMaterial()
            if let path = configuration.caCertPath {
                do { try material.caPEM.write(toFile: path, atomically: true, encoding: .utf8) } catch {
                    throw ServeError(description: "--ca-cert \(path): cannot be written: \(error.localizedDescription)")
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
            throw ServeError(description: "--port \(configuration.port): cannot listen on 127.0.0.1: \(error)")
        }
        return await run.close(reportPath: configuration.reportPath)
    }
}
