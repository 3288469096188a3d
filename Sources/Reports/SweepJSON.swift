public import Formats
public import UpgradeEngine

/// A sweep as JSON: the report (`sweep --json`, `merge --json`), one line per run (`--runs`),
/// and the part one shard prints for `merge` to read back.
public enum SweepJSON {
    /// The report: shares with their 95% intervals, distributions, instances most often failed
    /// or left behind. Fractions are rounded to 6 decimals, so equal digests give equal bytes.
    public static func report(_ r: SweepReport) -> JSON {
        var fields: [JSONField] = [
            JSONField("scenario", .string(r.scenario)), JSONField("seeds", .string(r.seeds.description)),
            JSONField("overrides", .array(r.overrides.map(JSON.string))), JSONField("runs", .int(r.total)),
            JSONField("outcomes", .array(r.outcomes.map { share($0.share, [JSONField("code", .string($0.code))]) })),
            JSONField("errorCodes", .array(r.errorCodes.map { share($0.share, [JSONField("code", .string($0.code))]) })),
            JSONField("expectations", .array(r.held.map {
                share($0.share, [JSONField("location", .string($0.key.location)), JSONField("key", .string($0.key.key)),
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
    /// each expectation held.
    public static func run(_ d: RunDigest) -> JSON {
        .ordered([
            JSONField("seed", .string(String(d.seed))), JSONField("code", d.code.map(JSON.string) ?? .null),
            JSONField("errorCode", d.errorCode.map(JSON.string) ?? .null),
            JSONField("timeToFinishSeconds", d.timeToFinish.map(JSON.double) ?? .null),
            JSONField("lowestHealthy", d.lowestHealthy.map(JSON.int) ?? .null),
            JSONField("unavailableInstanceSeconds", d.unavailable.map(JSON.double) ?? .null),
            JSONField("hitTimeLimit", .bool(d.hitTimeLimit)), JSONField("held", .array(d.held.map(JSON.bool))),
            JSONField("failed", .array(d.failed.map(JSON.int))), JSONField("leftBehind", .array(d.leftBehind.map(JSON.int))),
        ])
    }

    /// What one shard prints for `merge`: what was swept, which part, and every run of it.
    public static func part(_ r: SweepReport, shard: Shard) -> JSON {
        .ordered([
            JSONField("rehearseSweepPart", .int(1)), JSONField("scenario", .string(r.scenario)),
            JSONField("seeds", .string(r.seeds.description)), JSONField("shard", .string(shard.description)),
            JSONField("overrides", .array(r.overrides.map(JSON.string))),
            JSONField("deadline", r.deadline.map { .string(ISODuration.format($0)) } ?? .null),
            JSONField("expectations", .array(r.expectations.map {
                .ordered([JSONField("location", .string($0.location)), JSONField("key", .string($0.key)),
                          JSONField("expected", .string($0.expected))])
            })),
            JSONField("runs", .array(r.runs.map(run))),
        ])
    }

    /// A part read back: the report of its runs and which shard it was.
    public struct Part: Sendable {
        /// What was swept and this part's runs.
        public var report: SweepReport
        /// Which part.
        public var shard: Shard
    }

    /// Why a part cannot be read: the field and what is wrong.
    public struct PartError: Error, CustomStringConvertible {
        /// The field path, e.g. `runs[3].seed`.
        public var field: String
        /// What is wrong and what is allowed.
        public var problem: String
        public var description: String { "\(field): \(problem)" }
    }

    /// Reads a part that `part` wrote.
    public static func readPart(_ value: JSON) throws(PartError) -> Part {
        func fail<T>(_ field: String, _ problem: String) throws(PartError) -> T { throw PartError(field: field, problem: problem) }
        guard value.field("rehearseSweepPart") == .int(1) else {
            return try fail("rehearseSweepPart", "missing: this is not a part printed by rehearse sweep --shard I/N --json")
        }
        guard case .string(let scenario)? = value.field("scenario") else { return try fail("scenario", "expected a string") }
        guard case .string(let seedText)? = value.field("seeds"), let seeds = SeedRange(parsing: seedText) else {
            return try fail("seeds", "expected a seed range such as 0..999")
        }
        guard case .string(let shardText)? = value.field("shard"), let shard = Shard(parsing: shardText) else {
            return try fail("shard", "expected I/N")
        }
        guard case .array(let overrideItems)? = value.field("overrides") else { return try fail("overrides", "expected a list") }
        let overrides = overrideItems.compactMap { if case .string(let s) = $0 { return s } else { return nil } }
        var deadline: Millis?
        if case .string(let text)? = value.field("deadline") {
            guard case .success(let ms) = ISODuration.parse(text) else { return try fail("deadline", "expected an ISO 8601 duration") }
            deadline = ms
        }
        guard case .array(let keyItems)? = value.field("expectations") else { return try fail("expectations", "expected a list") }
        var keys: [SweepReport.ExpectationKey] = []
        for (i, item) in keyItems.enumerated() {
            guard case .string(let location)? = item.field("location"), case .string(let key)? = item.field("key"),
                  case .string(let expected)? = item.field("expected") else {
                return try fail("expectations[\(i)]", "expected location, key and expected strings")
            }
            keys.append(SweepReport.ExpectationKey(location: location, key: key, expected: expected))
        }
        guard case .array(let runItems)? = value.field("runs") else { return try fail("runs", "expected a list") }
        var runs: [RunDigest] = []
        for (i, item) in runItems.enumerated() {
            guard let digest = digest(item) else { return try fail("runs[\(i)]", "not a run as rehearse sweep writes one") }
            runs.append(digest)
        }
        return Part(report: SweepReport(scenario: scenario, seeds: seeds, overrides: overrides, runs: runs, expectations: keys,
                                        deadline: deadline), shard: shard)
    }

    /// A run line read back; nil when a field is missing or of the wrong type.
    static func digest(_ item: JSON) -> RunDigest? {
        func string(_ key: String) -> String?? {
            switch item.member(key) {
            case .string(let s)?: return .some(s)
            case .null?: return .some(nil)
            default: return nil
            }
        }
        func number(_ key: String) -> Double?? {
            switch item.member(key) {
            case .double(let d)?: return .some(d)
            case .int(let i)?: return .some(Double(i))
            case .null?: return .some(nil)
            default: return nil
            }
        }
        func ints(_ key: String) -> [Int]? {
            guard case .array(let items)? = item.member(key) else { return nil }
            let values = items.compactMap { if case .int(let i) = $0 { return i } else { return nil } }
            return values.count == items.count ? values : nil
        }
        guard case .string(let seedText)? = item.member("seed"), let seed = UInt64(seedText),
              let code = string("code"), let errorCode = string("errorCode"), let time = number("timeToFinishSeconds"),
              let lowest = number("lowestHealthy"), let unavailable = number("unavailableInstanceSeconds"),
              case .bool(let hit)? = item.member("hitTimeLimit"), case .array(let heldItems)? = item.member("held"),
              let failed = ints("failed"), let behind = ints("leftBehind") else { return nil }
        let held = heldItems.compactMap { if case .bool(let b) = $0 { return b } else { return nil } }
        guard held.count == heldItems.count else { return nil }
        return RunDigest(seed: seed, code: code, errorCode: errorCode, timeToFinish: time, lowestHealthy: lowest.map { Int($0) },
                         unavailable: unavailable, hitTimeLimit: hit, held: held, failed: failed, leftBehind: behind)
    }
}
