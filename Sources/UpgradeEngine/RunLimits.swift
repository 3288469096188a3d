public import AzureWire

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

    /// 100,000 actions, 5,000,000 events, 1,000,000 instances.
    public init(actions: Int = 100_000, events: Int = 5_000_000, instances: Int = 1_000_000) {
        self.actions = actions
        self.events = events
        self.instances = instances
    }
}

/// A run-level limit was reached: the run ends (the command exits 2).
public struct RunLimitExceeded: Error, Equatable, Sendable, CustomStringConvertible {
    /// Which limit: `actions`, `events` or `instances`.
    public var limit: String
    /// Its value.
    public var allowed: Int
    /// Virtual time when it was reached, in milliseconds.
    public var time: Millis
    /// What was being done (the action scheduled, where the script asked for it).
    public var detail: String

    public var description: String {
        let option = "--max-\(limit)"
        return "run limit reached: more than \(allowed) \(limit) in one run at \(ISODuration.format(time))\(detail.isEmpty ? "" : " (\(detail))"); raise it with \(option) if the scenario really needs more"
    }
}
