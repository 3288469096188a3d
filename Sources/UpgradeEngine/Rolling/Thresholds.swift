/// The two threshold checks of a rolling upgrade (SPEC §4.5) as functions of the numbers alone:
/// whether the check passed and, when it did not, Azure's own error (code, message with its
/// percentages, one detail per instance counted). The simulation asks; it decides nothing here.
public enum Thresholds {
    /// A check and, when it failed, the error the upgrade faults with.
    public struct Verdict: Equatable, Sendable {
        public var check: ThresholdCheck
        /// nil when the check passed.
        public var error: UpgradeError?
    }

    /// Before a batch: the unhealthy instances anywhere in the scale set (`unhealthy`, ids)
    /// against `maxUnhealthyInstancePercent` (`thresholdPercent`) of `capacity` (instances at
    /// the upgrade's start). Azure words it differently before the first batch (`firstBatch`).
    /// Every error code a rolling upgrade can fault with, Azure's own strings.
    public static let errorCodes = UpgradeErrorCode.allCases.map(\.rawValue)

    public static func beforeBatch(unhealthy: [Int], capacity: Int, thresholdPercent: Int, firstBatch: Bool,
                                   scaleSet: String, wireID: (Int) -> String = { String($0) }) -> Verdict {
        let passed = unhealthy.count * 100 <= thresholdPercent * capacity
        let check = ThresholdCheck(counted: unhealthy, capacity: capacity, thresholdPercent: thresholdPercent, passed: passed)
        guard !passed else { return Verdict(check: check, error: nil) }
        let p = AzurePercent.rounded(unhealthy.count, of: capacity), t = thresholdPercent
        let message = firstBatch
            ? "Rolling Upgrade failed due to exceeding the MaxUnhealthyInstancePercent value (defined in the RollingUpgradePolicy) before any batch was attempted. \(p)% of instances are in an unhealthy state, more than the threshold of \(t)% configured in the RollingUpgradePolicy. The most impactful error is:  Instance found to be unhealthy or unreachable. For details on rolling upgrades, use http://aka.ms/AzureVMSSRollingUpgrade"
            : "Rolling Upgrade failed after exceeding the MaxUnhealthyInstancePercent value defined in the RollingUpgradePolicy. \(p)% of instances are in an unhealthy state - more than the threshold of \(t)%. To apply upgrades, consider increasing the MaxUnhealthyInstancePercent value."
        let details = unhealthy.map { ErrorDetail(code: "RollingUpgradeInstanceUnhealthyError", target: target(scaleSet, wireID($0)), message: "Instance found to be unhealthy or unreachable.") }
        let code: UpgradeErrorCode = firstBatch ? .unhealthyBeforeUpgrade : .unhealthyDuringUpgrade
        return Verdict(check: check, error: UpgradeError(code: code, message: message, details: details))
    }

    /// After a batch: the upgraded instances that failed or are unhealthy (`counted`, ids)
    /// against `maxUnhealthyUpgradedInstancePercent` (`thresholdPercent`) of `capacity`.
    /// `failedToUpgrade` are those whose operation failed; `lastBatch` the batch just finished,
    /// whose lowest bad id Azure names as the first failed instance.
    public static func afterBatch(counted: [Int], failedToUpgrade: InstanceIDSet, lastBatch: InstanceIDSet, capacity: Int,
                                  thresholdPercent: Int, scaleSet: String, wireID: (Int) -> String = { String($0) }) -> Verdict {
        let passed = counted.count * 100 <= thresholdPercent * capacity
        let check = ThresholdCheck(counted: counted, capacity: capacity, thresholdPercent: thresholdPercent, passed: passed)
        guard !passed else { return Verdict(check: check, error: nil) }
        let first = counted.filter { lastBatch.contains($0) }.min() ?? counted.min()!
        let p = AzurePercent.rounded(counted.count, of: capacity), t = thresholdPercent
        let details = counted.map { id in
            ErrorDetail(code: "RollingUpgradeInstanceUnhealthyError", target: target(scaleSet, wireID(id)),
                        message: failedToUpgrade.contains(id) ? "Instance failed to upgrade." : "Instance found to be unhealthy or unreachable.")
        }
        let message = "Rolling Upgrade failed after exceeding the MaxUnhealthyUpgradedInstancePercent value defined in the RollingUpgradePolicy. \(p)% of instances are in an unhealthy state after being upgraded - more than the threshold of \(t)%. The most impactful error is: Instance found to be unhealthy or unreachable.. First failed instance ID is: \(wireID(first))."
        return Verdict(check: check, error: UpgradeError(code: .unhealthyUpgraded, message: message, details: details,
                                                         firstFailedInstance: wireID(first)))
    }

    /// An instance as error details name it: `<scaleSet>/virtualMachines/<id>` (for a Flexible
    /// scale set, the VM's name in place of the id).
    static func target(_ scaleSet: String, _ id: String) -> String { "\(scaleSet)/virtualMachines/\(id)" }
}
