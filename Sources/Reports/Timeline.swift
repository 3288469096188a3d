import Formats
import Foundation
public import UpgradeEngine

/// Turns events into readable timeline lines: `      PT1M  batchStarted        batch 1 …`. A line
/// about one instance names it; a batch that finished with failures names each failed instance
/// and why (its operation failed, or the health it was left in and how), which the timeline
/// follows from the events it is given, shown or not.
public final class Timeline {
    /// Whether health changes and every operation are shown too.
    public let verbose: Bool
    /// The latest health change of each instance (state and reason), and the operations that failed.
    private var health: [Int: (state: HealthState, reason: HealthChangeReason)] = [:]
    private var failedOperations: [Int: OperationKind] = [:]
    /// The instances of the batch in progress.
    private var batch: [Int] = []

    /// A timeline; `verbose` shows every health change and operation.
    public init(verbose: Bool) { self.verbose = verbose }

    /// The kinds always shown.
    public static let always: Set<Event.Kind> = [
        .modelUpdated, .upgradeStarted, .metricsRead, .preBatchCheck, .batchStarted, .batchFinished, .postBatchCheck, .pause,
        .upgradeCompleted, .upgradeFaulted, .upgradeCancelled, .rollbackStarted, .surgeFallback, .scaled, .manualUpgrade,
        .automaticUpgrade, .actionFailed, .imageReleased, .osUpgradeDeferred, .osUpgradeApproved, .imageRestoreStarted,
        .policyUpdated, .reimage, .hookRaised, .hookAnswered, .hookCompleted, .repairStarted, .repairsSuspended,
        .restart, .stop, .start,
    ]

    /// The line for `event`, or nil when it is not shown.
    public func line(for event: Event) -> String? {
        var failedOperation = false
        var detail = event.detail
        switch event.payload {
        case .healthChanged(_, let to, let reason):
            if let id = event.instance { health[id] = (to, reason) }
        case .operationStarted(let facts):
            // A restart starts the instance over: Initializing until its probes say otherwise.
            if let id = event.instance, facts.disruptive || facts.kind == .create { health[id] = (.initializing, .probes) }
        case .operationFinished(let kind, _, let succeeded):
            if let id = event.instance, !succeeded {
                failedOperations[id] = kind
                failedOperation = true
            }
        case .batchStarted(let ids, _):
            batch = ids
            for id in ids { failedOperations[id] = nil }
        case .batchFinished(let healthy, let count) where healthy < count:
            let reasons = batch.compactMap(reason)
            if !reasons.isEmpty { detail += " — not healthy: " + reasons.joined(separator: ", ") }
        default:
            break
        }
        guard verbose || Self.always.contains(event.kind) || failedOperation else { return nil }
        if event.kind == .wireWarning || event.kind == .metricsMissing || event.kind == .runEnded { return nil }
        // A line about one instance names it, unless its text already does.
        if let id = event.instance, !detail.contains("_\(id)") { detail = "instance \(id): " + detail }
        let time = ISODuration.format(event.time)
        let pad = String(repeating: " ", count: max(0, 10 - time.count))
        return "\(pad)\(time)  \(event.kind.rawValue.padding(toLength: 19, withPad: " ", startingAt: 0)) \(ScriptText.escaped(detail))"
    }

    /// Why instance `id` of a finished batch is not healthy, or nil when it is.
    private func reason(_ id: Int) -> String? {
        if let kind = failedOperations[id] { return "\(id) (\(kind.rawValue) failed)" }
        guard let last = health[id], last.state != .healthy else { return health[id] == nil ? "\(id) (no health reported)" : nil }
        return "\(id) (\(last.state.rawValue)\(last.reason == .gracePeriodEnded ? ", grace period ended" : ""))"
    }
}
