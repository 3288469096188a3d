public import AzureWire

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

extension HealthExtensionSettings {
    /// Parses the extension's `settings` object (keys case-insensitive), plus `typeHandlerVersion`,
    /// reporting every problem at once. `requestPath` given for tcp is a problem, not ignored.
    public static func parse(_ value: JSON, prefix: String = "healthExtension") throws(ValidationFailure) -> (HealthExtensionSettings, [Problem]) {
        var reader = FieldReader(prefix: prefix)
        guard let members = value.object else {
            throw ValidationFailure([Problem(field: prefix, "is \(value.kindName); expected an object")])
        }
        if let properties = value.field("properties") {
            return try parseARM(members, properties, prefix: prefix)
        }
        reader.refuseUnknown(members, known: ["protocol", "port", "requestPath", "intervalInSeconds", "numberOfProbes", "gracePeriod", "typeHandlerVersion"])
        var proto = ProbeProtocol.http
        if let p = value.field("protocol") {
            if case .string(let s) = p, let parsed = ProbeProtocol(rawValue: s.lowercased()) { proto = parsed } else {
                reader.problem("protocol", "\(p.serialized(pretty: false)) is not a protocol; allowed tcp, http, https")
            }
        }
        let port = value.field("port").flatMap { _ in reader.integer(value, "", "port", 1...65535, unit: "port") }
        var path: String?
        if let p = value.field("requestPath") {
            if case .string(let s) = p { path = s } else { reader.problem("requestPath", "is \(p.kindName); expected a path string such as \"/health\"") }
            if proto == .tcp { reader.problem("requestPath", "is not allowed with protocol tcp") }
        }
        let interval = reader.integer(value, "", "intervalInSeconds", 5...60, unit: "seconds") ?? 5
        let probes = reader.integer(value, "", "numberOfProbes", 1...24, unit: "probes") ?? 1
        let grace = reader.integer(value, "", "gracePeriod", 5...14400, unit: "seconds")
        var version = "2.0"
        if let v = value.field("typeHandlerVersion") {
            switch v {
            case .string(let s): version = s
            case .double(let d): version = String((d * 10).rounded() / 10)
            case .int(let i): version = "\(i).0"
            default: reader.problem("typeHandlerVersion", "is \(v.kindName); allowed \"1.0\" or \"2.0\"")
            }
        }
        let settings = HealthExtensionSettings(protocol: proto, port: port, requestPath: path ?? (proto == .tcp ? nil : ""),
                                               intervalInSeconds: interval, numberOfProbes: probes, gracePeriod: grace,
                                               typeHandlerVersion: version)
        let (problems, warnings) = settings.validate(prefix: prefix)
        let all = reader.problems + problems
        guard all.isEmpty else { throw ValidationFailure(all) }
        return (settings, warnings)
    }

    /// The extension as an ARM resource (seed 002's `extensionProfile.extensions[]` entry):
    /// `name`, and `properties` with `publisher` Microsoft.ManagedServices, `type`
    /// ApplicationHealthLinux or ApplicationHealthWindows, `typeHandlerVersion`,
    /// `autoUpgradeMinorVersion` and `settings`.
    static func parseARM(_ members: [String: JSON], _ properties: JSON, prefix: String) throws(ValidationFailure) -> (HealthExtensionSettings, [Problem]) {
        var reader = FieldReader(prefix: prefix)
        reader.refuseUnknown(members, known: ["name", "properties"])
        guard let inner = properties.object else {
            throw ValidationFailure([Problem(field: "\(prefix).properties", "is \(properties.kindName); expected an object")])
        }
        reader.refuseUnknown(inner, known: ["publisher", "type", "typeHandlerVersion", "autoUpgradeMinorVersion", "enableAutomaticUpgrade", "settings"],
                             under: "properties")
        if let publisher = properties.field("publisher"), publisher != .string("Microsoft.ManagedServices") {
            reader.problem("properties.publisher", "\(publisher.serialized(pretty: false)) is not the Application Health extension's; allowed \"Microsoft.ManagedServices\"")
        }
        if let type = properties.field("type"), type != .string("ApplicationHealthLinux") && type != .string("ApplicationHealthWindows") {
            reader.problem("properties.type", "\(type.serialized(pretty: false)) is not the Application Health extension; allowed ApplicationHealthLinux, ApplicationHealthWindows")
        }
        for flag in ["autoUpgradeMinorVersion", "enableAutomaticUpgrade"] {
            if let value = properties.field(flag) {
                if case .bool = value {} else { reader.problem("properties.\(flag)", "\(value.serialized(pretty: false)) is not true or false") }
            }
        }
        var settings = properties.field("settings")?.object ?? [:]
        if properties.field("settings") == nil { reader.problem("properties.settings", "is missing: the probe's protocol, port and path") }
        if let version = properties.field("typeHandlerVersion") { settings["typeHandlerVersion"] = version }
        let parsed: (HealthExtensionSettings, [Problem])
        do {
            parsed = try parse(.object(settings), prefix: "\(prefix).properties.settings")
        } catch {
            throw ValidationFailure(reader.problems + error.problems)
        }
        guard reader.problems.isEmpty else { throw ValidationFailure(reader.problems) }
        return parsed
    }
}
