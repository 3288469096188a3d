/// Why an instance's committed health changed.
public enum HealthChangeReason: String, Sendable {
    /// `numberOfProbes` consecutive identical probe results.
    case probes
    /// The grace period ended while the instance was still Initializing.
    case gracePeriodEnded
}
