public import Formats

/// What automatic instance repairs do to an instance that stays unhealthy past the grace period.
public enum RepairAction: String, Sendable, ParsesCaseInsensitively {
    /// Delete it and create a new instance in its place, on the latest model.
    case replace = "Replace"
    /// Restart it on the model it runs.
    case restart = "Restart"
    /// Reimage it on the model it runs.
    case reimage = "Reimage"
}

/// `automaticRepairsPolicy` (SPEC §6b; Azure's automatic instance repairs page).
public struct AutomaticRepairsPolicy: Equatable, Sendable {
    public var enabled: Bool
    /// How long after the last state-changing operation (and after an instance became unhealthy)
    /// a repair may start, in milliseconds: PT10M–PT90M, default PT10M.
    public var gracePeriod: Millis
    public var repairAction: RepairAction

    /// The grace periods Azure accepts.
    public static let graceRange: ClosedRange<Millis> = 600_000...5_400_000
    /// Repairs of one instance (and the instances that replaced it) that may leave it unhealthy
    /// before the service suspends itself (our decision: Azure gives no number).
    public static let attemptsBeforeSuspension = 5

    /// A policy; the grace period and action default as Azure's do.
    public init(enabled: Bool = true, gracePeriod: Millis = 600_000, repairAction: RepairAction = .replace) {
        self.enabled = enabled
        self.gracePeriod = gracePeriod
        self.repairAction = repairAction
    }

    /// Instances one batch of repairs may take: at most 5% of `capacity` (rounded down), and one at
    /// a time below 20 instances.
    public static func batchSize(capacity: Int) -> Int { max(1, capacity * 5 / 100) }
}

extension ScaleSetDefinition {
    /// What Azure refuses in `automaticRepairsPolicy`: a grace period outside PT10M–PT90M, repairs
    /// on without a health source.
    public var repairProblems: [Problem] {
        guard let policy = automaticRepairs, policy.enabled else { return [] }
        var problems: [Problem] = []
        if !AutomaticRepairsPolicy.graceRange.contains(policy.gracePeriod) {
            problems.append(Problem(field: "automaticRepairsPolicy.gracePeriod", "\(ISODuration.format(policy.gracePeriod)) is out of range; allowed PT10M to PT1H30M"))
        }
        if !hasHealthSource {
            problems.append(Problem(field: "automaticRepairsPolicy.enabled", "automatic instance repairs need application health monitoring: add healthExtension" + (orchestration == .uniform ? " or loadBalancerProbe" : "")))
        }
        return problems
    }
}
