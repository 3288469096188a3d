public import Formats

/// One OS image upgrade as `az vmss get-os-upgrade-history` lists it
/// (`UpgradeOperationHistoricalStatusInfo`).
public struct OSUpgradeRecord: Equatable, Sendable {
    /// `startedBy`.
    public enum Invoker: String, Sendable {
        case unknown = "Unknown", user = "User", platform = "Platform"
    }

    /// `runningStatus.code`.
    public var code: RunningCode
    /// Milliseconds on the virtual clock.
    public var startTime: Millis
    /// When it reached its final code (ms); nil while it runs.
    public var endTime: Millis?
    /// Instance counts, as in `get-latest`.
    public var progress: Progress
    /// Why it stopped, when it did.
    public var error: UpgradeError?
    /// User (on demand) or Platform (automatic).
    public var startedBy: Invoker
    /// `version`, and `publisher`, `offer`, `sku` when the model names them.
    public var targetImageReference: [String: String]
    /// Instances returned to their previous image (or model) successfully.
    public var rolledBack: Int
    /// Instances whose return failed.
    public var rollbackFailed: Int

}
