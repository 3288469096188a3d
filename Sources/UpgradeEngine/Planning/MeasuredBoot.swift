public import Formats

/// What one run says of the application's boot: for every upgrade of the first rolling upgrade
/// that succeeded, how long the operation took and how long after it the instance was first
/// Healthy. `plan` adds the medians to the shortest duration, which otherwise assumes every
/// instance is back and Healthy the moment its operation ends.
public struct MeasuredBoot: Equatable, Sendable {
    /// Median operation time, in ms.
    public var operation: Millis
    /// Median time from the end of an upgrade to Healthy, in ms.
    public var toHealthy: Millis
    /// How many upgrades were measured.
    public var upgrades: Int

    /// The measurement from `events`, or nil when no upgraded instance became Healthy.
    public init?(_ events: [Event]) {
        var started: [Int: Millis] = [:], ended: [Int: Millis] = [:]
        var operations: [Millis] = [], boots: [Millis] = []
        var inFirstUpgrade = false
        for event in events {
            switch event.payload {
            case .upgradeStarted:
                guard !inFirstUpgrade, operations.isEmpty else { continue }
                inFirstUpgrade = true
            case .upgradeCompleted, .upgradeFaulted, .upgradeCancelled:
                inFirstUpgrade = false
            case .operationStarted(let facts) where inFirstUpgrade && facts.kind == .upgrade:
                if let id = event.instance { started[id] = event.time }
            case .operationFinished(.upgrade, _, true):
                if let id = event.instance, let from = started.removeValue(forKey: id) {
                    operations.append(event.time - from)
                    ended[id] = event.time
                }
            case .healthChanged(_, .healthy, _):
                if let id = event.instance, let from = ended.removeValue(forKey: id) { boots.append(event.time - from) }
            default:
                continue
            }
        }
        guard !boots.isEmpty else { return nil }
        operation = operations.sorted()[operations.count / 2]
        toHealthy = boots.sorted()[boots.count / 2]
        upgrades = boots.count
    }

    /// The shortest duration of `batches` batches with this boot: each batch's operation and
    /// its instances' way to Healthy, and the pauses between batches (saturating).
    public func shortest(batches: Int, pause: Millis) -> Millis {
        guard batches > 0 else { return 0 }
        let each = operation.addingReportingOverflow(toHealthy)
        let work = Millis(batches).multipliedReportingOverflow(by: each.partialValue)
        let pauses = Millis(batches - 1).multipliedReportingOverflow(by: pause)
        let total = work.partialValue.addingReportingOverflow(pauses.partialValue)
        guard !each.overflow, !work.overflow, !pauses.overflow, !total.overflow else { return ISODuration.longest }
        return min(total.partialValue, ISODuration.longest)
    }
}
