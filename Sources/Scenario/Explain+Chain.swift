public import UpgradeEngine

/// A run's causal chain, read from its events: the latest upgrade's start with its budgets,
/// each batch, each upgraded instance that failed or became unhealthy, the check that failed,
/// how it ended, and the expectations that did not hold. Figures only: `Reports` words them.
public enum ExplainChain {
    /// The chain of `record` (whose events were kept).
    public static func steps(_ record: RunRecord) -> [ChainStep] {
        var steps: [ChainStep] = []
        let rolling = record.policy.rolling
        var inBatch: [Int: Int] = [:]  // instance → its batch
        var counted = Set<Int>()
        for event in record.events {
            switch event.payload {
            case .upgradeStarted(let upgrade, _, _, let candidates, let capacity, let batchSize, _, _):
                // A later upgrade (one superseding another) starts the chain again.
                steps.removeAll()
                inBatch.removeAll()
                counted.removeAll()
                let upgraded = Planner.unhealthyAllowance(capacity: capacity, percent: rolling.maxUnhealthyUpgradedInstancePercent)
                let all = Planner.unhealthyAllowance(capacity: capacity, percent: rolling.maxUnhealthyInstancePercent)
                steps.append(ChainStep(kind: .started, time: event.time, batch: nil, instances: [], figures: [
                    "upgrade": String(upgrade), "candidates": String(candidates), "capacity": String(capacity), "batchSize": String(batchSize),
                    "upgradedBudget": String(upgraded), "upgradedPercent": String(rolling.maxUnhealthyUpgradedInstancePercent),
                    "unhealthyBudget": String(all), "unhealthyPercent": String(rolling.maxUnhealthyInstancePercent),
                ]))
            case .batchStarted(let instances, let shrunk):
                for id in instances { inBatch[id] = event.batch ?? 0 }
                steps.append(ChainStep(kind: .batch, time: event.time, batch: event.batch, instances: instances, figures: ["shrunk": String(shrunk)]))
            case .operationFinished(let kind, _, false):
                guard let id = event.instance, let batch = inBatch[id], counted.insert(id).inserted else { continue }
                steps.append(ChainStep(kind: .instanceFailed, time: event.time, batch: batch, instances: [id],
                                       figures: ["operation": kind.rawValue]))
            // Unknown counts as unhealthy, as the thresholds count it (an instance that never answers).
            case .healthChanged(_, let to, let reason) where to == .unhealthy || to == .unknown:
                guard let id = event.instance, let batch = inBatch[id], counted.insert(id).inserted else { continue }
                steps.append(ChainStep(kind: .instanceFailed, time: event.time, batch: batch, instances: [id],
                                       figures: ["health": to.rawValue, "reason": reason.rawValue]))
            case .preBatchCheck(let check), .postBatchCheck(let check):
                guard !check.passed else { continue }
                let after: Bool
                if case .postBatchCheck = event.payload { after = true } else { after = false }
                steps.append(ChainStep(kind: .checkFailed, time: event.time, batch: event.batch, instances: check.counted, figures: [
                    "check": after ? "after" : "before", "counted": String(check.counted.count), "capacity": String(check.capacity),
                    "thresholdPercent": String(check.thresholdPercent), "percent": String(check.percent),
                    "batches": check.counted.map { "\($0):\(inBatch[$0].map(String.init) ?? "-")" }.joined(separator: ","),
                ]))
            case .upgradeFaulted(let code, let message):
                steps.append(ChainStep(kind: .faulted, time: event.time, batch: event.batch, instances: [],
                                       figures: ["code": code.rawValue, "message": message]))
            case .upgradeCompleted(_, let successful, let failed):
                steps.append(ChainStep(kind: .completed, time: event.time, batch: nil, instances: [],
                                       figures: ["successful": String(successful), "failed": String(failed)]))
            default:
                continue
            }
        }
        for failed in record.failedExpectations {
            steps.append(ChainStep(kind: .expectationFailed, time: record.summary.endTime, batch: nil, instances: [],
                                   figures: ["key": failed.key.rawValue, "location": failed.location]))
        }
        return steps
    }
}
