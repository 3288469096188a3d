public import Formats

/// What an instance answered to one probe of the health extension.
public enum ProbeReply: Equatable, Sendable {
    /// No answer at once: a refused connection (nothing listens yet) or the instance is down.
    case noAnswer
    /// The application accepted the connection and never replied: the extension's result comes
    /// when its 30 s timeout ends (`probeTimeout`), and the next probe starts then.
    case timeout
    /// An HTTP(S) response: its status and body, as the extension reads them off the wire.
    case http(status: Int, body: String)
    /// A TCP probe: whether the connection opened.
    case tcp(connected: Bool)
    /// An answer already in structured form (a scenario script's table): the state string and the
    /// custom metrics, which may be a JSON string (the wire form) or an object.
    case structured(state: String?, metrics: MetricsPayload?)
    /// The usual scripted answer, named by the source: "Healthy" or "Unhealthy", its metrics
    /// kept by the source until an upgrade asks (`.structured(state:, metrics: .deferred)`
    /// without a string or payload to copy: the engine's hot path).
    case named(HealthState)
}

/// Custom metrics as they arrive: the wire's JSON string, an object, already read by the
/// caller (a script's table read field by field), or kept by the health source until a rolling
/// upgrade starts and asks for them with `HealthSource.latestMetrics(of:)` (metrics are read
/// only then, so a source may spare itself reading them on every probe).
public enum MetricsPayload: Equatable, Sendable {
    case string(String)
    case object(JSON)
    case parsed(CustomMetrics)
    case deferred
}

/// The rolling-upgrade custom metrics of one instance.
public struct CustomMetrics: Equatable, Sendable {
    /// `PhaseOrderingNumber`: the phase, non-negative; nil puts the instance in the last phase.
    public var phase: Int?
    /// `SkipUpgrade`: leave this instance out of rolling upgrades.
    public var skipUpgrade: Bool

    /// Metrics with a phase (nil: none) and SkipUpgrade.
    public init(phase: Int? = nil, skipUpgrade: Bool = false) {
        self.phase = phase
        self.skipUpgrade = skipUpgrade
    }
}

/// Something odd about a probe's answer: reported as a warning naming the instance.
public struct WireDiagnostic: Equatable, Hashable, Sendable, CustomStringConvertible {
    /// Stable names for the oddities, so tests and tools can tell them apart.
    public enum Kind: String, Sendable {
        case bodyNotJSON, bodyNotObject, bodyTooLarge, stateMissing, stateUnknown
        case metricsAsObject, metricsNotJSON, metricsNotObject, metricsEmpty, metricsNoRollingUpgrade
        case metricsBadPhase, metricsBadSkip, metricsUnknownKey, metricsRefused
        /// A candidate whose latest answer was not Healthy when an upgrade started: no phase, no skip.
        case metricsNotFromHealthy
    }

    /// What kind of oddity.
    public var kind: Kind
    /// The oddity, said so a person can fix it.
    public var message: String

    public var description: String { message }
}

/// One probe's verdict: the result the committed-state machine consumes, the metrics it
/// carried, and any oddities.
public struct ProbeResult: Equatable, Sendable {
    /// Healthy, Unhealthy or Unknown (never Initializing).
    public var state: HealthState
    /// The metrics of a Healthy answer (nil otherwise, or none sent).
    public var metrics: CustomMetrics?
    /// Every wire oddity met.
    public var diagnostics: [WireDiagnostic]
    /// The health source keeps this probe's metrics (`MetricsPayload.deferred`).
    public var metricsDeferred = false

    /// A verdict.
    public init(state: HealthState, metrics: CustomMetrics? = nil, diagnostics: [WireDiagnostic] = []) {
        self.state = state
        self.metrics = metrics
        self.diagnostics = diagnostics
    }
}

/// How long the extension waits for a reply before the probe's result is "no answer", in
/// milliseconds (its HTTP client's and TCP dialer's timeout).
public let probeTimeout: Millis = 30_000

/// Bodies larger than this are not read (Unknown), so a hostile endpoint cannot exhaust memory.
public let maxProbeBodyBytes = 64 * 1024

extension HealthExtensionSettings {
    /// Judges one reply as the extension does (SPEC §3). With `strictWire`, custom metrics sent as
    /// a JSON object make the result Unknown, as Azure's current extension does; otherwise they
    /// are accepted with a diagnostic.
    public func evaluate(_ reply: ProbeReply, strictWire: Bool = false) -> ProbeResult {
        ProbeJudge(self).evaluate(reply, strictWire: strictWire)
    }
}

/// The part of the settings that judging a probe needs, without strings, so the engine can keep
/// one and judge every probe without copying the settings.
struct ProbeJudge: Equatable, Sendable {
    let `protocol`: ProbeProtocol
    let richStates: Bool

    init(_ settings: HealthExtensionSettings) {
        `protocol` = settings.protocol
        richStates = settings.richStates
    }

    /// Whether a named state is the verdict on it (rich states over http or https).
    var namesStates: Bool { richStates && `protocol` != .tcp }

    /// The verdict on the usual scripted answer (a state the script named, its metrics kept by
    /// the source until an upgrade reads them), which `evaluate` would give with no diagnostic and
    /// the metrics deferred; nil for any other answer. The engine's hot path: no result to build.
    func quickVerdict(_ reply: ProbeReply) -> HealthState? {
        guard namesStates else { return nil }
        switch reply {
        // Only Healthy and Unhealthy are verdicts; any other named state is judged as its text.
        case .named(let state): return state == .healthy || state == .unhealthy ? state : nil
        case .structured(let text?, .deferred?): return text == "Healthy" ? .healthy : text == "Unhealthy" ? .unhealthy : nil
        default: return nil
        }
    }

    func evaluate(_ reply: ProbeReply, strictWire: Bool) -> ProbeResult {
        if case .named(let state) = reply { return evaluate(.structured(state: state.rawValue, metrics: .deferred), strictWire: strictWire) }
        switch `protocol` {
        case .tcp:
            switch reply {
            case .noAnswer, .timeout, .tcp(connected: false): return ProbeResult(state: .unhealthy)
            default: return ProbeResult(state: .healthy, diagnostics: refusedMetrics(reply))
            }
        case .http, .https:
            guard richStates else {
                switch reply {
                // Binary states: "expected to return a 200 response code"; any other status is Unhealthy.
                case .http(let status, _) where status == 200: return ProbeResult(state: .healthy, diagnostics: refusedMetrics(reply))
                case .structured: return ProbeResult(state: .healthy, diagnostics: refusedMetrics(reply))
                case .tcp(connected: true): return ProbeResult(state: .healthy)
                default: return ProbeResult(state: .unhealthy)
                }
            }
            return evaluateRich(reply, strictWire: strictWire)
        }
    }

    private func refusedMetrics(_ reply: ProbeReply) -> [WireDiagnostic] {
        let carriesMetrics: Bool
        switch reply {
        case .structured(_, let metrics): carriesMetrics = metrics != nil
        case .http(_, let body): carriesMetrics = (try? JSON.parse(body, maxBytes: maxProbeBodyBytes))?.member("customMetrics") != nil
        default: carriesMetrics = false
        }
        guard carriesMetrics else { return [] }
        let why = `protocol` == .tcp ? "a tcp probe cannot carry them" : "typeHandlerVersion 1.0 reports binary states"
        return [WireDiagnostic(kind: .metricsRefused, message: "customMetrics refused: they need rich health states (typeHandlerVersion 2.0) over http or https, and \(why)")]
    }

    private func evaluateRich(_ reply: ProbeReply, strictWire: Bool) -> ProbeResult {
        let stateText: String?
        let metricsPayload: MetricsPayload?
        var diagnostics: [WireDiagnostic] = []
        var metricsFromWire = false
        switch reply {
        case .noAnswer, .timeout, .tcp: return ProbeResult(state: .unknown)
        case .structured(let state, let metrics):
            stateText = state
            metricsPayload = metrics
        case .named(let state):
            stateText = state.rawValue
            metricsPayload = .deferred
        case .http(let status, let body):
            guard (200...299).contains(status) else { return ProbeResult(state: .unknown) }
            let json: JSON
            do {
                json = try JSON.parse(body, maxBytes: maxProbeBodyBytes, maxDepth: 32)
            } catch {
                let kind: WireDiagnostic.Kind = body.utf8.count > maxProbeBodyBytes ? .bodyTooLarge : .bodyNotJSON
                return ProbeResult(state: .unknown, diagnostics: [WireDiagnostic(kind: kind, message: "response body \(error.problem): health is Unknown")])
            }
            guard json.object != nil else {
                return ProbeResult(state: .unknown, diagnostics: [WireDiagnostic(kind: .bodyNotObject, message: "response body is \(json.kindName), not a JSON object: health is Unknown")])
            }
            switch json.member("applicationHealthState") {
            case .string(let s)?: stateText = s
            case nil: stateText = nil
            case let other?:
                stateText = nil
                diagnostics.append(WireDiagnostic(kind: .stateUnknown, message: "applicationHealthState is \(other.kindName), not \"Healthy\" or \"Unhealthy\": health is Unknown"))
            }
            switch json.member("customMetrics") {
            case .string(let s)?: metricsPayload = .string(s)
            case .object(let o)?:
                metricsPayload = .object(.object(o))
                metricsFromWire = true
            case nil, .null?: metricsPayload = nil
            case let other?:
                metricsPayload = nil
                diagnostics.append(WireDiagnostic(kind: .metricsNotJSON, message: "customMetrics is \(other.kindName); expected a string holding JSON: no phase, no skip"))
            }
        }
        var state: HealthState
        switch stateText {
        case "Healthy"?: state = .healthy
        case "Unhealthy"?: state = .unhealthy
        case let text?:
            state = .unknown
            diagnostics.append(WireDiagnostic(kind: .stateUnknown, message: "applicationHealthState \"\(text)\" is not \"Healthy\" or \"Unhealthy\" (the value is case-sensitive): health is Unknown"))
        case nil:
            state = .unknown
            if !diagnostics.contains(where: { $0.kind == .stateUnknown }) {
                diagnostics.append(WireDiagnostic(kind: .stateMissing, message: "no applicationHealthState in the answer: health is Unknown"))
            }
        }
        var metrics: CustomMetrics?
        if metricsPayload == .deferred {
            var result = ProbeResult(state: state, diagnostics: diagnostics)
            result.metricsDeferred = true
            return result
        }
        if let metricsPayload {
            if metricsFromWire {
                if strictWire {
                    diagnostics.append(WireDiagnostic(kind: .metricsAsObject, message: "customMetrics sent as a JSON object; Azure's extension wants a string holding JSON, and judged as strictly as it is the result is Unknown"))
                    return ProbeResult(state: .unknown, diagnostics: diagnostics)
                }
                diagnostics.append(WireDiagnostic(kind: .metricsAsObject, message: "customMetrics sent as a JSON object; Azure's extension wants a string holding JSON (accepted here; strict wire judging refuses it)"))
            }
            metrics = CustomMetrics.parse(metricsPayload, diagnostics: &diagnostics)
        }
        return ProbeResult(state: state, metrics: metrics, diagnostics: diagnostics)
    }
}

extension CustomMetrics {
    /// Reads `rollingUpgrade.PhaseOrderingNumber` and `SkipUpgrade` (keys case-insensitive).
    /// Anything malformed adds a diagnostic; the instance then has no phase and no skip.
    public static func parse(_ payload: MetricsPayload, diagnostics: inout [WireDiagnostic]) -> CustomMetrics? {
        let root: JSON
        switch payload {
        case .deferred: return nil
        case .parsed(let metrics): return metrics
        case .object(let o): root = o
        case .string(let text):
            guard let parsed = try? JSON.parse(text, maxBytes: maxProbeBodyBytes, maxDepth: 16) else {
                diagnostics.append(WireDiagnostic(kind: .metricsNotJSON, message: "customMetrics is not valid JSON: no phase, no skip"))
                return nil
            }
            root = parsed
        }
        guard let members = root.object else {
            diagnostics.append(WireDiagnostic(kind: .metricsNotObject, message: "customMetrics holds \(root.kindName), not an object: no phase, no skip"))
            return nil
        }
        guard !members.isEmpty else {
            diagnostics.append(WireDiagnostic(kind: .metricsEmpty, message: "customMetrics is {}: no phase, no skip"))
            return nil
        }
        guard let rolling = root.member("rollingUpgrade"), let fields = rolling.object else {
            diagnostics.append(WireDiagnostic(kind: .metricsNoRollingUpgrade, message: "customMetrics has no rollingUpgrade object: no phase, no skip"))
            return nil
        }
        var metrics = CustomMetrics()
        let isKnown = { (key: String) in
            key == "PhaseOrderingNumber" || key == "SkipUpgrade" || ["phaseorderingnumber", "skipupgrade"].contains(key.lowercased())
        }
        if !fields.keys.allSatisfy(isKnown) {
            for key in fields.keys.sorted() where !isKnown(key) {
                diagnostics.append(WireDiagnostic(kind: .metricsUnknownKey, message: "customMetrics.rollingUpgrade.\(key) is not a known metric (PhaseOrderingNumber, SkipUpgrade): ignored"))
            }
        }
        switch rolling.member("PhaseOrderingNumber") {
        case nil: break
        case .int(let n)? where n >= 0: metrics.phase = n
        case .double(let d)? where d >= 0 && d == d.rounded() && d < 1e9: metrics.phase = Int(d)
        case let other?:
            diagnostics.append(WireDiagnostic(kind: .metricsBadPhase, message: "PhaseOrderingNumber \(other.serialized(pretty: false)) is not a non-negative integer: no phase, no skip"))
            return nil
        }
        switch rolling.member("SkipUpgrade") {
        case nil: break
        case .bool(let b)?: metrics.skipUpgrade = b
        case .string(let s)? where ["true", "false"].contains(s.lowercased()): metrics.skipUpgrade = s.lowercased() == "true"
        case let other?:
            diagnostics.append(WireDiagnostic(kind: .metricsBadSkip, message: "SkipUpgrade \(other.serialized(pretty: false)) is not true/false or \"true\"/\"false\": no phase, no skip"))
            return nil
        }
        return metrics
    }
}

/// The committed health state of one instance (SPEC §3): Initializing from each (re)start;
/// during the grace period it leaves Initializing after `numberOfProbes` identical results that
/// are not the grace-expiry state; when grace ends first it becomes that state; afterwards it
/// changes only after `numberOfProbes` identical results that differ from it.
public struct HealthTracker: Equatable, Sendable {
    // Small fields first and narrow counts: a probe reads the whole tracker, and in a large
    // fleet each instance's bytes come from memory (see `Instance`).
    /// The committed state.
    public private(set) var state: HealthState = .initializing
    let expiryState: HealthState
    var candidate: HealthState?
    let probesNeeded: Int32
    var streak: Int32 = 0
    /// The grace period in milliseconds (at most 14,400,000: 32 bits keep the tracker's size).
    let graceMillis: Int32
    /// When the instance last (re)started, in milliseconds.
    public private(set) var startedAt: Millis
    /// When grace ends for the current start (or for the extension installed since), in milliseconds.
    public private(set) var graceEndsAt: Millis

    /// A tracker for an instance started at `startedAt` (milliseconds): Initializing, its grace
    /// measured from `graceFrom` (default: the start; the moment the health extension was
    /// installed on an instance already running).
    public init(settings: HealthExtensionSettings, startedAt: Millis, graceFrom: Millis? = nil) {
        probesNeeded = Int32(clamping: settings.numberOfProbes)
        graceMillis = Int32(clamping: settings.gracePeriod * 1000)
        expiryState = settings.graceExpiryState
        self.startedAt = startedAt
        graceEndsAt = (graceFrom ?? startedAt) + Millis(graceMillis)
    }

    /// The instance (re)started: back to Initializing.
    public mutating func restart(at time: Millis) {
        state = .initializing
        startedAt = time
        graceEndsAt = time + Millis(graceMillis)
        candidate = nil
        streak = 0
    }

    /// The instance stopped: it reports nothing, so its state is Unknown until it starts again.
    public mutating func powerOff() {
        state = .unknown
        candidate = nil
        streak = 0
    }

    /// Ends the grace period if it is over. Returns whether the state changed.
    @discardableResult
    public mutating func expireGrace(at time: Millis) -> Bool {
        guard state == .initializing, time >= graceEndsAt else { return false }
        state = expiryState
        candidate = nil
        streak = 0
        return true
    }

    /// Takes a result that names the committed Healthy or Unhealthy state: `record` of it, which
    /// changes nothing but the count of different results in a row.
    /// No run of results that differ from the committed state is being counted.
    var isSettled: Bool { candidate == nil && streak == 0 }

    mutating func confirm() {
        assert(state == .healthy || state == .unhealthy)
        candidate = nil
        streak = 0
    }

    /// Takes one probe result, which arrives at `time`. Grace is looked at only here, when a
    /// result arrives (the extension checks it once per probe, before counting the result): a
    /// result at or after the end of grace while still Initializing commits the grace-expiry
    /// state and is not counted, even if it would have completed a run of valid answers.
    /// Returns what changed the committed state, or nil when it stayed.
    @discardableResult
    public mutating func record(_ result: HealthState, at time: Millis) -> HealthChangeReason? {
        if expireGrace(at: time) { return .gracePeriodEnded }
        let counts = state == .initializing ? result != expiryState : result != state
        guard counts else {
            candidate = nil
            streak = 0
            return nil
        }
        if candidate == result { streak += 1 } else {
            candidate = result
            streak = 1
        }
        guard streak >= probesNeeded else { return nil }
        state = result
        candidate = nil
        streak = 0
        return .probes
    }
}
