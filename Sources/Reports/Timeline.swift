import Formats
import Foundation
import LuaHost
public import UpgradeEngine

/// Turns events into readable timeline lines: `      PT1M  batchStarted        batch 1 …`.
public struct Timeline {
    /// Whether health changes and every operation are shown too.
    public let verbose: Bool

    /// A timeline; `verbose` shows every health change and operation.
    public init(verbose: Bool) { self.verbose = verbose }

    /// The kinds always shown.
    public static let always: Set<Event.Kind> = [
        .modelUpdated, .upgradeStarted, .metricsRead, .preBatchCheck, .batchStarted, .batchFinished, .postBatchCheck, .pause,
        .upgradeCompleted, .upgradeFaulted, .upgradeCancelled, .rollbackStarted, .surgeFallback, .scaled, .manualUpgrade,
        .automaticUpgrade, .actionFailed, .imageReleased, .osUpgradeDeferred, .osUpgradeApproved, .imageRestoreStarted,
    ]

    /// The line for `event`, or nil when it is not shown.
    public func line(for event: Event) -> String? {
        var failedOperation = false
        if case .operationFinished(_, _, succeeded: false) = event.payload { failedOperation = true }
        guard verbose || Self.always.contains(event.kind) || failedOperation else { return nil }
        if event.kind == .wireWarning || event.kind == .metricsMissing || event.kind == .runEnded { return nil }
        let time = ISODuration.format(event.time)
        let pad = String(repeating: " ", count: max(0, 10 - time.count))
        return "\(pad)\(time)  \(event.kind.rawValue.padding(toLength: 19, withPad: " ", startingAt: 0)) \(ScriptText.escaped(event.detail))"
    }
}
