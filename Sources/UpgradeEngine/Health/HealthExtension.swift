public import Formats

/// The committed health of an instance as a rolling upgrade reads it.
public enum HealthState: String, Sendable, CaseIterable {
    case initializing = "Initializing", healthy = "Healthy", unhealthy = "Unhealthy", unknown = "Unknown"

    /// Unknown counts as unhealthy for every threshold (SPEC §3).
    public var countsAsUnhealthy: Bool { self == .unhealthy || self == .unknown }
}

/// How the health extension probes: a TCP connect, or an HTTP(S) GET of `requestPath`.
public enum ProbeProtocol: String, Sendable, CaseIterable { case tcp, http, https }

/// The Application Health extension's settings (SPEC §3).
public struct HealthExtensionSettings: Equatable, Sendable {
    /// tcp, http or https.
    public var `protocol`: ProbeProtocol
    /// 1–65535; required for tcp.
    public var port: Int?
    /// Required for http/https, refused for tcp.
    public var requestPath: String?
    /// Seconds between probes, 5–60.
    public var intervalInSeconds: Int
    /// Consecutive identical results needed to change state, 1–24.
    public var numberOfProbes: Int
    /// Seconds an instance may stay Initializing after it starts, 5–14400; default interval × probes.
    public var gracePeriod: Int
    /// "2.0" for rich states (Healthy/Unhealthy/Unknown from the body), "1.0" for binary.
    public var typeHandlerVersion: String

    /// Settings; the defaults are the extension's (interval 5 s, 1 probe, rich states).
    public init(protocol: ProbeProtocol = .http, port: Int? = nil, requestPath: String? = "/health", intervalInSeconds: Int = 5,
                numberOfProbes: Int = 1, gracePeriod: Int? = nil, typeHandlerVersion: String = "2.0") {
        self.protocol = `protocol`
        self.port = port
        self.requestPath = `protocol` == .tcp ? nil : requestPath
        self.intervalInSeconds = intervalInSeconds
        self.numberOfProbes = numberOfProbes
        self.gracePeriod = gracePeriod ?? intervalInSeconds * numberOfProbes
        self.typeHandlerVersion = typeHandlerVersion
    }

    /// Rich states come from the body: http/https with handler version 2.0.
    public var richStates: Bool { `protocol` != .tcp && typeHandlerVersion == "2.0" }

    /// The state a grace period ends in when nothing was committed: Unknown for http/https,
    /// Unhealthy for tcp.
    public var graceExpiryState: HealthState { `protocol` == .tcp ? .unhealthy : .unknown }

    /// Every problem with these settings, and warnings that do not stop a run.
    public func validate(prefix: String = "healthExtension") -> (problems: [Problem], warnings: [Problem]) {
        var problems: [Problem] = [], warnings: [Problem] = []
        func bad(_ field: String, _ message: String) { problems.append(Problem(field: "\(prefix).\(field)", message)) }
        if let port, !(1...65535).contains(port) { bad("port", "\(port) is out of range; allowed 1–65535") }
        if `protocol` == .tcp && port == nil { bad("port", "is required for protocol tcp") }
        if `protocol` != .tcp && (requestPath ?? "").isEmpty {
            // Azure's documentation requires it; the extension itself probes "/" without complaint.
            warnings.append(Problem(field: "\(prefix).requestPath", "is missing for protocol \(`protocol`.rawValue): Azure's documentation requires it; the extension probes \"/\""))
        }
        if !(5...60).contains(intervalInSeconds) { bad("intervalInSeconds", "\(intervalInSeconds) is out of range; allowed 5–60 (seconds)") }
        if !(1...24).contains(numberOfProbes) { bad("numberOfProbes", "\(numberOfProbes) is out of range; allowed 1–24") }
        if intervalInSeconds * numberOfProbes > 240 {
            bad("numberOfProbes", "intervalInSeconds × numberOfProbes is \(intervalInSeconds * numberOfProbes); allowed at most 240 seconds")
        }
        if !(5...14400).contains(gracePeriod) {
            bad("gracePeriod", "\(gracePeriod) is out of range; allowed 5–14400 (seconds)")
        } else if gracePeriod > 7200 {
            warnings.append(Problem(field: "\(prefix).gracePeriod", "\(gracePeriod) s is above the 7200 s Azure documents as the maximum"))
        }
        if !["1.0", "2.0"].contains(typeHandlerVersion) {
            bad("typeHandlerVersion", "\"\(typeHandlerVersion)\" is not a handler version; allowed \"1.0\" (binary states) or \"2.0\" (rich states)")
        }
        return (problems, warnings)
    }
}
