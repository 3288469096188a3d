/// The `error.code` a rolling upgrade faults with: Azure's closed set, each case's raw value
/// Azure's own string (written only at the edge: JSON, text, the REST shapes).
public enum UpgradeErrorCode: String, CaseIterable, Sendable {
    /// Before the first batch, more instances were unhealthy than `maxUnhealthyInstancePercent` allows.
    case unhealthyBeforeUpgrade = "MaxUnhealthyInstancePercentExceededBeforeRollingUpgrade"
    /// Before a later batch, more instances were unhealthy than `maxUnhealthyInstancePercent` allows.
    case unhealthyDuringUpgrade = "MaxUnhealthyInstancePercentExceededInRollingUpgrade"
    /// After a batch, more upgraded instances were unhealthy or failed than
    /// `maxUnhealthyUpgradedInstancePercent` allows.
    case unhealthyUpgraded = "MaxUnhealthyUpgradedInstancePercentExceededInRollingUpgrade"
}

/// Why an instance entered or left service: the health state it reached, or its lifecycle
/// (`deleting`, `deleted`, …) when its health did not change.
public enum ServingReason: Equatable, Sendable {
    /// Its committed health changed to this state.
    case health(HealthState)
    /// Its health did not change; its lifecycle is now this.
    case lifecycle(Lifecycle)
}
