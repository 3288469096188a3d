public import Formats

/// `runningStatus.code` of a rolling upgrade.
public enum RunningCode: String, Sendable, CaseIterable {
    case rollingForward = "RollingForward", rollingBack = "RollingBack", cancelled = "Cancelled", completed = "Completed", faulted = "Faulted"
}

/// One entry of `error.details`.
public struct ErrorDetail: Equatable, Sendable {
    /// Azure's code, e.g. RollingUpgradeInstanceUnhealthyError.
    public var code: String
    /// The instance, `<scaleSet>/virtualMachines/<id>`.
    public var target: String
    /// Azure's message for it.
    public var message: String

    /// A detail.
    public init(code: String, target: String, message: String) {
        self.code = code
        self.target = target
        self.message = message
    }
}

/// The `error` of a stopped rolling upgrade.
public struct UpgradeError: Equatable, Sendable {
    /// Azure's code, e.g. MaxUnhealthyInstancePercentExceededInRollingUpgrade.
    public var code: UpgradeErrorCode
    /// Azure's message, with its percentages.
    public var message: String
    /// One detail per instance counted.
    public var details: [ErrorDetail]
    /// The instance Azure's message names as the first that failed (as the wire spells it), when
    /// it names one: a breach after a batch.
    public var firstFailedInstance: String?
}

/// Instance counts of a rolling upgrade (skipped and protected instances are in none).
public struct Progress: Equatable, Sendable {
    /// Instances upgraded and healthy.
    public var successfulInstanceCount = 0
    /// Instances whose upgrade failed or that were unhealthy once upgraded.
    public var failedInstanceCount = 0
    /// Instances of the batch in flight.
    public var inProgressInstanceCount = 0
    /// Instances not reached yet.
    public var pendingInstanceCount = 0

    /// Counts, in instances.
    public init(successfulInstanceCount: Int = 0, failedInstanceCount: Int = 0, inProgressInstanceCount: Int = 0, pendingInstanceCount: Int = 0) {
        self.successfulInstanceCount = successfulInstanceCount
        self.failedInstanceCount = failedInstanceCount
        self.inProgressInstanceCount = inProgressInstanceCount
        self.pendingInstanceCount = pendingInstanceCount
    }

}

/// What `az vmss rolling-upgrade get-latest` prints for one rolling upgrade.
public struct RollingUpgradeStatus: Equatable, Sendable {
    /// The scale set's region.
    public var location: String
    /// The policy applied.
    public var policy: RollingUpgradePolicy
    /// Instance counts.
    public var progress: Progress
    /// RollingForward, RollingBack, Cancelled, Completed or Faulted.
    public var code: RunningCode
    /// "Start" or "Cancel".
    public var lastAction: String
    /// When the last action happened, in milliseconds.
    public var lastActionTime: Millis
    /// When the upgrade started, in milliseconds.
    public var startTime: Millis
    /// Why it stopped, when it did.
    public var error: UpgradeError?

}
