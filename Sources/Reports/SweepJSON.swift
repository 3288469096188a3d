public import Formats
public import UpgradeEngine

/// A sweep as JSON: the report (`sweep --json`, `merge --json`), one line per run (`--runs`),
/// and the part one shard prints for `merge` to read back (`SweepPart.read`).
public enum SweepJSON {
    /// The report: shares with their 95% intervals, distributions, instances most often failed
    /// or left behind. Fractions are rounded to 6 decimals, so equal digests give equal bytes.
    public static func report(_ r: SweepReport) -> JSON {
        var fields: [JSONField] = [
            JSONField("scenario", .string(r.scenario)), JSONField("seeds", .string(r.seeds.description)),
            JSONField("overrides", .array(r.overrides.map(JSON.string))), JSONField("runs", .int(r.total)),
            JSONField("outcomes", .array(Figures.outcomes(r).map { share($0.share, [JSONField("code", .string($0.code))]) })),
            JSONField("errorCodes", .array(r.errorCodes.map { share($0.share, [JSONField("code", .string($0.code))]) })),
            JSONField("expectations", .array(r.held.map {
                share($0.share, [JSONField("location", .string($0.key.location)), JSONField("key", .string($0.key.key.rawValue)),
                                 JSONField("expected", .string($0.key.expected))])
            })),
            JSONField("timeToFinishSeconds", distribution(r.timeToFinish, [50, 90, 95, 99, 100])),
            JSONField("lowestHealthy", distribution(r.lowestHealthy, [0, 1, 5, 10, 50])),
            JSONField("unavailableInstanceSeconds", distribution(r.unavailable, [50, 90, 95, 99, 100])),
        ]
        if let deadline = r.deadline, let past = r.pastDeadline {
            fields.append(JSONField("pastDeadline", share(past, [JSONField("deadline", .string(ISODuration.format(deadline)))])))
        }
        fields.append(JSONField("failedMostOften", .array(r.failedMostOften().map { share($0.share, [JSONField("id", .int($0.id))]) })))
        fields.append(JSONField("leftBehindMostOften", .array(r.leftBehindMostOften().map { share($0.share, [JSONField("id", .int($0.id))]) })))
        // Only a sweep whose runs raised lifecycle hook events has their figures (SPEC §6b).
        if let fired = r.defaultActionFired {
            fields.append(JSONField("lifecycleHooks", .ordered([
                JSONField("defaultActionFired", share(fired, [])),
                JSONField("batchWaitSeconds", distribution(r.hookWait, [50, 95, 100])),
                JSONField("rejectedMostOften", .array(r.hookRejectedMostOften().map { share($0.share, [JSONField("id", .int($0.id))]) })),
            ])))
        }
        return .ordered(fields)
    }

    /// `{ …, "runs": 3, "share": 0.015, "ci95": [0.005, 0.043] }`.
    static func share(_ share: Share, _ leading: [JSONField]) -> JSON {
        let (lower, upper) = share.interval
        return .ordered(leading + [JSONField("runs", .int(share.count)), JSONField("share", .double(rounded(share.fraction))),
                                   JSONField("ci95", .array([.double(rounded(lower)), .double(rounded(upper))]))])
    }

    /// `{ "runs": n, "p50": …, … }` with `p0` written `min` and `p100` written `max`.
    static func distribution(_ d: Distribution, _ percentiles: [Double]) -> JSON {
        var fields = [JSONField("runs", .int(d.count))]
        for p in percentiles {
            let name = p == 0 ? "min" : p == 100 ? "max" : "p\(Int(p))"
            fields.append(JSONField(name, d.percentile(p).map { .double(rounded($0)) } ?? .null))
        }
        return .ordered(fields)
    }

    static func rounded(_ x: Double) -> Double { (x * 1_000_000).rounded() / 1_000_000 }

    /// One run: seed, code, error code, figures, the instances failed and left behind, whether
    /// each expectation held, the capacity its lowest healthy is measured against, and its
    /// lifecycle hook measures.
    public static func run(_ d: RunDigest) -> JSON {
        .ordered([
            JSONField("seed", .string(String(d.seed))), JSONField("code", d.code.map { .string($0.rawValue) } ?? .null),
            JSONField("errorCode", d.errorCode.map { .string($0.rawValue) } ?? .null),
            JSONField("timeToFinishSeconds", d.timeToFinish.map(JSON.double) ?? .null),
            JSONField("lowestHealthy", d.lowestHealthy.map(JSON.int) ?? .null),
            JSONField("unavailableInstanceSeconds", d.unavailable.map(JSON.double) ?? .null),
            JSONField("hitTimeLimit", .bool(d.hitTimeLimit)), JSONField("held", .array(d.held.map { .bool($0.held) })),
            JSONField("failed", .array(d.failed.map(JSON.int))), JSONField("leftBehind", .array(d.leftBehind.map(JSON.int))),
            JSONField("capacity", d.capacity.map(JSON.int) ?? .null),
            JSONField("hooksRaised", .bool(d.hooksRaised)), JSONField("defaultActionFired", .bool(d.defaultActionFired)),
            JSONField("hookWaitSeconds", d.hookWait.map(JSON.double) ?? .null), JSONField("hookRejected", .array(d.hookRejected.map(JSON.int))),
            JSONField("upgrades", .int(d.upgrades)),
        ])
    }

    /// What one shard prints for `merge`: what was swept and asked (the requirements, their
    /// confidence, whether it is a sequential gate), by which binary, which part, every run of it.
    public static func part(_ p: SweepPart) -> JSON {
        let r = p.report, shard = p.shard
        var asked: [JSONField] = p.binary.map { [JSONField("binary", .string($0))] } ?? []
        if let question = p.question {
            asked += [JSONField("requirements", .array(question.requirements.map { .string($0.description) })),
                      JSONField("confidence", .double(question.confidence)), JSONField("untilDecided", .bool(p.untilDecided))]
        }
        return .ordered([
            JSONField("rehearseSweepPart", .int(SweepPart.format)), JSONField("scenario", .string(r.scenario)),
            JSONField("seeds", .string(r.seeds.description)), JSONField("shard", .string(shard.description)),
            JSONField("overrides", .array(r.overrides.map(JSON.string))),
            JSONField("deadline", r.deadline.map { .string(ISODuration.format($0)) } ?? .null),
            JSONField("expectations", .array(r.expectations.map {
                .ordered([JSONField("location", .string($0.location)), JSONField("key", .string($0.key.rawValue)),
                          JSONField("expected", .string($0.expected))])
            })),
        ] + asked + [JSONField("identity", p.identity.json), JSONField("runs", .array(r.runs.map(run)))])
    }
}
