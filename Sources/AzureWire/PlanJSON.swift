public import Formats
public import UpgradeEngine

extension PlannedInstance {
    var json: JSON {
        .ordered([JSONField("id", .int(id)), JSONField("zone", zone.map(JSON.string) ?? .null),
                  JSONField("faultDomain", .int(faultDomain)), JSONField("updateDomain", .int(updateDomain))])
    }
}

extension BatchRule {
    /// `{"rule": "zone", "zone": "1"}`, `{"rule": "shrunkByBudget", "size": 9, "budget": 6, "unhealthyNow": 0}`, …
    public var json: JSON {
        switch self {
        case .phase(let phase): return .ordered([JSONField("rule", .string("phase")), JSONField("phase", phase.map(JSON.int) ?? .null)])
        case .zone(let zone): return .ordered([JSONField("rule", .string("zone")), JSONField("zone", .string(zone))])
        case .updateDomain(let ud): return .ordered([JSONField("rule", .string("updateDomain")), JSONField("updateDomain", .int(ud))])
        case .faultDomain(let fd): return .ordered([JSONField("rule", .string("faultDomain")), JSONField("faultDomain", .int(fd))])
        case .unhealthyFirst: return .ordered([JSONField("rule", .string("unhealthyFirst"))])
        case .batchSize(let size, let percent, let capacity):
            return .ordered([JSONField("rule", .string("batchSize")), JSONField("size", .int(size)), JSONField("percent", .int(percent)),
                             JSONField("capacity", .int(capacity))])
        case .shrunkByBudget(let size, let budget, let unhealthyNow):
            return .ordered([JSONField("rule", .string("shrunkByBudget")), JSONField("size", .int(size)), JSONField("budget", .int(budget)),
                             JSONField("unhealthyNow", .int(unhealthyNow))])
        case .restOfGroup(let left, let size):
            return .ordered([JSONField("rule", .string("restOfGroup")), JSONField("left", .int(left)), JSONField("size", .int(size))])
        case .takesNoneDown: return .ordered([JSONField("rule", .string("takesNoneDown"))])
        }
    }
}

extension UpgradePlan {
    /// `{"batches":[{"phase":0,"instances":[{"id":3,"zone":"1","faultDomain":0,"updateDomain":0}]}],"skipped":[4],"protected":[7]}`,
    /// keys in that documented order.
    public var json: JSON {
        .ordered([
            JSONField("batches", .array(batches.map {
                .ordered([JSONField("phase", $0.phase.map(JSON.int) ?? .null), JSONField("instances", .array($0.instances.map(\.json))),
                          JSONField("why", .array($0.why.map(\.json)))])
            })),
            JSONField("withoutMetrics", .array(withoutMetrics.map(JSON.int))),
            JSONField("skipped", .array(skipped.map(JSON.int))),
            JSONField("protected", .array(protected.map(JSON.int))),
        ])
    }
}

extension PolicyArithmetic {
    /// `{"capacity":2,"batchSize":1,"unhealthyBudget":0,"upgradedBudget":0,"batches":[…],"shortestDurationSeconds":240,"fragilities":[…]}`.
    public var json: JSON {
        .ordered([
            JSONField("capacity", .int(capacity)), JSONField("batchSize", .int(batchSize)),
            JSONField("unhealthyBudget", .int(unhealthyBudget)), JSONField("upgradedBudget", .int(upgradedBudget)),
            JSONField("batches", .array(batchesByGroup.map {
                .ordered([JSONField("phase", $0.phase.map(JSON.int) ?? .null), JSONField("zone", $0.zone.map(JSON.string) ?? .null),
                          JSONField("batches", .int($0.batches))])
            })),
            JSONField("shortestDurationSeconds", .int(shortestDuration / 1000)),
            JSONField("fragilities", .array(fragilities.map { .ordered([JSONField("field", .string($0.field)), JSONField("message", .string($0.message))]) })),
        ])
    }
}
