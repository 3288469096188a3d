public import Formats
public import UpgradeEngine

extension PlannedInstance {
    var json: JSON {
        .ordered([JSONField("id", .int(id)), JSONField("zone", zone.map(JSON.string) ?? .null),
                  JSONField("faultDomain", .int(faultDomain)), JSONField("updateDomain", .int(updateDomain))])
    }
}

extension UpgradePlan {
    /// `{"batches":[{"phase":0,"instances":[{"id":3,"zone":"1","faultDomain":0,"updateDomain":0}]}],"skipped":[4],"protected":[7]}`,
    /// keys in that documented order.
    public var json: JSON {
        .ordered([
            JSONField("batches", .array(batches.map {
                .ordered([JSONField("phase", $0.phase.map(JSON.int) ?? .null), JSONField("instances", .array($0.instances.map(\.json)))])
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
