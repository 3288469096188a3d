public import Formats

/// How the instances of one model version are probed: the judge and the interval, plain values
/// the hot path reads without copying the settings' strings.
struct ProbeConfig: Equatable {
    let judge: ProbeJudge
    /// Milliseconds between two probes.
    let interval: Millis

    init(judge: ProbeJudge, interval: Millis) {
        self.judge = judge
        self.interval = interval
    }

    init(_ settings: HealthExtensionSettings) {
        self.init(judge: ProbeJudge(settings), interval: settings.intervalInSeconds * 1000)
    }
}

extension ProbeReply {
    /// The reply without metrics kept by the source for later (`MetricsPayload.deferred`), which
    /// may or may not exist: a named state, or a state whose metrics were kept, with none.
    var forgettingKeptMetrics: ProbeReply {
        switch self {
        case .named(let state): return .structured(state: state.rawValue, metrics: nil)
        case .structured(let state, .deferred?): return .structured(state: state, metrics: nil)
        default: return self
        }
    }
}


/// The health extension as part of the model (SPEC §6, fourth printing): each model version has
/// it or not; an instance reports application health only while the model it runs has a health
/// source, and the upgrade policy may change during a run.
extension Simulation {
    /// The Application Health extension of model `version`; nil when it has none.
    public func healthExtension(ofVersion version: Int) -> HealthExtensionSettings? { probes.plan.extensions[version - 1] }

    /// How instances of model `version` are probed: its extension's settings, or a load-balancer
    /// probe's (binary http); nil when they report no health.
    public func probeSettings(ofVersion version: Int) -> HealthExtensionSettings? {
        if let settings = probes.plan.extensions[version - 1] { return settings }
        return definition.loadBalancerProbe ? Self.loadBalancerProbeSettings : nil
    }

    /// A load-balancer probe, probed as the extension's binary http would be.
    static let loadBalancerProbeSettings = HealthExtensionSettings(protocol: .http, requestPath: "/", typeHandlerVersion: "1.0")

    /// Whether the newest model has a health source (Rolling mode and OS upgrades need one).
    public var hasHealthSource: Bool { definition.hasHealthSource(extension: probes.plan.extensions[models.count - 1]) }

    /// Whether instance `id` runs a model with a health source, so it has a health state of its own.
    func reportsHealth(_ id: Int) -> Bool { probes.plan.byVersion[fleet.instances[id].modelVersion - 1] != nil }

    /// The judge and interval of instance `id`'s probes.
    func probeConfig(of id: Int) -> ProbeConfig {
        probes.plan.byVersion[fleet.instances[id].modelVersion - 1] ?? ProbeConfig(judge: probes.plan.judge, interval: probes.plan.interval)
    }

    /// Adds model version `models.count + 1` with `attributes` and the health extension `extension`.
    func appendModel(_ attributes: [String: String], extension settings: HealthExtensionSettings?) {
        models.append(attributes)
        probes.plan.extensions.append(settings)
        let config = probeSettings(ofVersion: models.count).map(ProbeConfig.init)
        probes.plan.byVersion.append(config)
        if config != probes.plan.byVersion[0] { probes.plan.uniformProbing = false }
        if config != nil { probes.plan.probing = true }
    }

    /// Instance `id` moved from model `old` to the one it runs now: when their health extensions
    /// differ, its health starts again with the new settings (Initializing from now, grace from
    /// now; `startedAt` stays its last restart) or, without one, it stops reporting. Returns
    /// whether its probing must start again.
    func healthExtensionMoved(_ id: Int, from old: Int) -> Bool {
        let new = fleet.instances[id].modelVersion
        guard probes.plan.extensions[old - 1] != probes.plan.extensions[new - 1] else { return false }
        let settings = probeSettings(ofVersion: new)
        probes.last[id] = nil
        updateInstance(id) { vm in
            vm.health = HealthTracker(settings: settings ?? HealthExtensionSettings(), startedAt: vm.health.startedAt, graceFrom: now)
            if settings == nil { vm.health.markHealthyWithoutProbes() }
        }
        return true
    }

    /// Applies `patch` to the policy in effect (the fields given replace theirs, as Azure's
    /// PATCH does) and changes the policy to the result, as `updatePolicy(_:)` does.
    public func updatePolicy(_ patch: PolicyPatch) throws(EngineError) {
        try updatePolicy(patch.applied(to: policy))
    }

    /// Changes the upgrade policy to `new`, checked as the definition's policy is (every problem
    /// at once, Azure's texts; `readProblems`: those found reading it, reported with the rest).
    /// A running rolling upgrade keeps the policy it started with; the next one uses `new`.
    public func updatePolicy(_ new: UpgradePolicy, readProblems: [Problem] = []) throws(EngineError) {
        let problems = readProblems + new.rolling.problems() + definition.policyProblems(new, healthSource: hasHealthSource)
        guard problems.isEmpty else { throw EngineError(problems.map(\.description).joined(separator: "; "), .invalid(problems)) }
        let old = policy
        policy = new
        let running = upgrades.current.flatMap { $0.code == .rollingForward || $0.code == .rollingBack ? $0.number : nil }
        emit(.policyUpdated(new, changed: new.changedFields(from: old), runningUpgrade: running))
    }
}
