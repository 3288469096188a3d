public import Formats
public import UpgradeEngine

extension HealthExtensionSettings {
    /// The settings as the extension's `settings` object, plus `typeHandlerVersion`; parsing this
    /// gives the same settings back.
    public var json: JSON {
        var fields: [String: JSON] = [
            "protocol": .string(`protocol`.rawValue), "intervalInSeconds": .int(intervalInSeconds),
            "numberOfProbes": .int(numberOfProbes), "gracePeriod": .int(gracePeriod), "typeHandlerVersion": .string(typeHandlerVersion),
        ]
        if let port { fields["port"] = .int(port) }
        if let requestPath { fields["requestPath"] = .string(requestPath) }
        return .object(fields)
    }

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
        // An empty path with tcp is no path (the Azure Verified Module writes it so, and Azure
        // deploys it); any other path with tcp is a problem.
        if let p = value.field("requestPath"), !(proto == .tcp && p == .string("")) {
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
        // None caused by another: a port given as a string is that problem, not also missing.
        let all = reader.problems + problems.filter { found in !reader.problems.contains { $0.field == found.field } }
        guard all.isEmpty else { throw ValidationFailure(all) }
        return (settings, warnings)
    }

    /// The extension as an ARM resource (seed 002's `extensionProfile.extensions[]` entry, or
    /// the body of its REST `PUT …/extensions/…`, whose `location` changes nothing):
    /// `name`, and `properties` with `publisher` Microsoft.ManagedServices, `type`
    /// ApplicationHealthLinux or ApplicationHealthWindows, `typeHandlerVersion`,
    /// `autoUpgradeMinorVersion` and `settings`.
    static func parseARM(_ members: [String: JSON], _ properties: JSON, prefix: String) throws(ValidationFailure) -> (HealthExtensionSettings, [Problem]) {
        var reader = FieldReader(prefix: prefix)
        reader.refuseUnknown(members, known: ["name", "location", "properties"])
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
