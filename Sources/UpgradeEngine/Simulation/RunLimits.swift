public import Formats

/// Bounds on one run as a whole, beside the per-call limits of scripts: how many actions may be
/// scheduled, how many events recorded and how many instances created, so that a scenario whose
/// actions schedule themselves forever, or that creates instances without end, stops with a
/// clear error instead of exhausting the host's memory.
public struct RunLimits: Equatable, Sendable {
    /// Scheduled actions (`at` callbacks), counted over the whole run.
    public var actions: Int
    /// Events emitted over the whole run.
    public var events: Int
    /// Instances created over the whole run (the initial ones, scale-outs and MaxSurge).
    public var instances: Int
    /// Model versions over the whole run (every model update that changes something makes one).
    public var modelVersions: Int
    /// Health probes over the whole run (100,000 instances probed every 5 s for days would
    /// otherwise run for hours).
    public var probes: Int

    /// 100,000 actions, 5,000,000 events, 1,000,000 instances, 10,000 model versions,
    /// 50,000,000 probes.
    public init(actions: Int = 100_000, events: Int = 5_000_000, instances: Int = 1_000_000, modelVersions: Int = 10_000,
                probes: Int = 50_000_000) {
        self.actions = actions
        self.events = events
        self.instances = instances
        self.modelVersions = modelVersions
        self.probes = probes
    }
}


/// One of the run-level limits of `RunLimits`, named as the engine counts it (the command line
/// names the option that raises it).
public enum RunLimit: String, CaseIterable, Sendable {
    /// Scheduled actions.
    case actions
    /// Events emitted.
    case events
    /// Instances created.
    case instances
    /// Model versions made.
    case modelVersions
    /// Health probes.
    case probes

    /// The plural noun a message counts (`model versions`).
    public var noun: String { self == .modelVersions ? "model versions" : rawValue }
}

/// A run-level limit was reached: the run ends (the command exits 2).
public struct RunLimitExceeded: Error, Equatable, Sendable, CustomStringConvertible {
    /// Which limit.
    public var limit: RunLimit
    /// Its value.
    public var allowed: Int
    /// Virtual time when it was reached, in milliseconds.
    public var time: Millis
    /// What was being done (the action scheduled, where the script asked for it).
    public var detail: String

    /// `limit`, whose value is `allowed`, reached at `time` (milliseconds) while doing `detail`.
    public init(limit: RunLimit, allowed: Int, time: Millis, detail: String) {
        self.limit = limit
        self.allowed = allowed
        self.time = time
        self.detail = detail
    }

    /// The sentence without the way to raise the limit, which the command line adds: `run limit
    /// reached: more than 5 actions in one run at PT1M (scheduling …)`.
    public var description: String {
        "run limit reached: more than \(allowed) \(limit.noun) in one run at \(ISODuration.format(time))\(detail.isEmpty ? "" : " (\(detail))")"
    }
}

extension RunLimitExceeded: UserFacingError {
    /// A run limit belongs to the run, not to a place in its input.
    public var place: Location? { nil }
    /// Bad input (a scenario that needs more than it is allowed): 2.
    public var exitCode: Int32 { 2 }
}
