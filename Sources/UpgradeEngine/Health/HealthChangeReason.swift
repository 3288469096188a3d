/// Why an instance's committed health changed.
public enum HealthChangeReason: String, Sendable {
    /// `numberOfProbes` consecutive identical probe results.
    case probes
    /// The grace period ended while the instance was still Initializing.
    case gracePeriodEnded
    /// The instance (re)started (a restart, reimage, upgrade, creation or replacement) or its
    /// model's health extension changed: Initializing again, whatever it was.
    case restarted
    /// No health source reports on it: Healthy once it runs.
    case noHealthSource
    /// It was stopped or deallocated: it reports nothing (Unknown) until it starts again.
    case poweredOff
}
