public import Formats

/// One part of a sweep split over machines, as `sweep --shard I/N --json` prints it and
/// `merge` reads it back: what was swept, which part, and the digest of every run of it. Every
/// number is read through `CheckedNumber`, and the parts are merged into the report one process
/// prints, or refused (a missing or repeated part, parts of different sweeps, a seed with two
/// different results).
public struct SweepPart: Equatable, Sendable {
    /// What was swept and this part's runs.
    public var report: SweepReport
    /// Which part (of the block of seeds `report.seeds`).
    public var shard: Shard
    /// The question the sweep was asked with (`--require`, `--confidence`, a risk { }), judged
    /// by `merge`; nil for a sweep that only measures. Its deadline is the report's.
    public var question: RiskQuestion?
    /// Whether the sweep was a sequential gate (`--until-decided`): `merge` then judges at the
    /// same seed counts as one process does and keeps the runs up to the first that decides.
    public var untilDecided: Bool
    /// The version of rehearse that ran it; parts of different versions are not merged.
    public var binary: String?
    /// Every other input that changes the runs (parameters, limits, time limit, strict wire, the
    /// plugin lock, the scenario's bytes, a comparison's grid): parts whose identities differ
    /// are not merged, and a tune state takes no part of another identity.
    public var identity: SweepIdentity

    /// The format `SweepJSON.part` writes and `read` reads: 2 carries the lifecycle hook
    /// measures of every run and the identity (format 1 parts had neither, so a sharded gate
    /// read `hookRejected` as 0 of N).
    public static let format = 2

    /// Part `shard` holding `report`'s runs, asked `question`, run by `binary` with `identity`.
    public init(report: SweepReport, shard: Shard, question: RiskQuestion? = nil, untilDecided: Bool = false, binary: String? = nil,
                identity: SweepIdentity = SweepIdentity()) {
        self.report = report
        self.shard = shard
        self.question = question
        self.untilDecided = untilDecided
        self.binary = binary
        self.identity = identity
    }

    /// Why a part cannot be read, or parts cannot be merged: where (a field path such as
    /// `runs[3].lowestHealthy`, a part's file, or the `merge` as a whole) and what is wrong,
    /// with what is allowed.
    public struct Failure: Error, Equatable, CustomStringConvertible, UserFacingError {
        /// The field of a part, the part's file, or the command `merge`.
        public var place: Location?
        /// What is wrong and what is allowed.
        public var problem: String
        /// Why the parts do not make one sweep, when that is the failure, as data.
        public var conflict: Conflict?

        /// Why `merge` cannot put the parts together.
        public enum Conflict: Equatable, Sendable {
            /// Two parts (by name) hold different results for one seed.
            case differentResults(seed: UInt64, parts: [String])
            /// One part of a block (`2/4`) is given twice, by these names.
            case givenTwice(Shard, parts: [String])
            /// A part of the block of these seeds is missing: the first one missing.
            case missing(Shard, seeds: SeedRange)
        }

        /// A failure at the field `field` of a part.
        public init(field: String, _ problem: String) {
            self.place = .document(path: nil, field: field)
            self.problem = problem
        }

        /// A failure at `place`; `conflict`, why the parts are not one sweep, when that is it.
        init(_ place: Location, _ problem: String, conflict: Conflict? = nil) {
            self.place = place
            self.problem = problem
            self.conflict = conflict
        }

        /// Bad input: 2.
        public var exitCode: Int32 { 2 }

        public var description: String {
            let at: String
            switch place {
            case .document(_, let field)?: at = field
            case .file(let name)?: at = name
            case .command(let name)?: at = name
            default: at = "merge"
            }
            return "\(at): \(problem)"
        }
    }

    /// The largest part file `merge` reads, in bytes (some 130,000 runs): its JSON is held as a
    /// tree about 17 times the size of the text at worst (a list of one-digit numbers), so a
    /// larger file could take more than a gigabyte before a field is checked. Shard a larger
    /// sweep into more parts.
    public static let maxBytes = 32 << 20

    /// The longest time to finish a part may carry, in seconds: the longest duration.
    static let longestSeconds = Double(ISODuration.longest / 1000)
    /// The most instance-seconds a part may carry: every 32-bit instance down for the longest duration.
    static let mostInstanceSeconds = Double(Int32.max) * longestSeconds

    /// Reads a part `SweepJSON.part` wrote.
    public static func read(_ value: JSON) throws(Failure) -> SweepPart {
        func fail<T>(_ field: String, _ problem: String) throws(Failure) -> T { throw Failure(field: field, problem) }
        switch value.field("rehearseSweepPart") {
        case .int(format)?: break
        case .int(let older)? where older >= 1 && older < format:
            return try fail("rehearseSweepPart", "is format \(older), written by an older rehearse without every run's lifecycle hook measures "
                                + "and the run identity; allowed format \(format): run the part again with this rehearse")
        case nil: return try fail("rehearseSweepPart", "missing: this is not a part of a sharded sweep printed as JSON")
        default: return try fail("rehearseSweepPart", "expected the part format \(format)")
        }
        let identity: SweepIdentity
        switch SweepIdentity.read(value.field("identity")) {
        case .success(let read): identity = read
        case .failure(let failure): throw failure
        }
        guard case .string(let scenario)? = value.field("scenario") else { return try fail("scenario", "expected a string") }
        guard case .string(let seedText)? = value.field("seeds"), let parsed = SeedRange(parsing: seedText) else {
            return try fail("seeds", "expected a seed range such as 0..999")
        }
        let seeds: SeedRange
        do throws(NumberOutOfRange) { seeds = try parsed.checked(field: "seeds") } catch { return try fail("seeds", error.problem.message) }
        guard case .string(let shardText)? = value.field("shard"), let shard = Shard(parsing: shardText) else {
            return try fail("shard", "expected I/N with 1 ≤ I ≤ N")
        }
        guard case .array(let overrideItems)? = value.field("overrides") else { return try fail("overrides", "expected a list") }
        var overrides: [String] = []
        for (i, item) in overrideItems.enumerated() {
            guard case .string(let text) = item else { return try fail("overrides[\(i)]", "expected a string") }
            overrides.append(text)
        }
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
            guard let known = Expectation.Key(rawValue: key) else {
                return try fail("expectations[\(i)].key", "is not an expect key; allowed \(Expectation.Key.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            keys.append(SweepReport.ExpectationKey(location: location, key: known, expected: expected))
        }
        guard case .array(let runItems)? = value.field("runs") else { return try fail("runs", "expected a list") }
        var runs: [RunDigest] = []
        runs.reserveCapacity(min(runItems.count, SeedRange.mostSeeds))
        for (i, item) in runItems.enumerated() {
            do throws(NumberOutOfRange) { runs.append(try digest(item, keys: keys)) } catch { return try fail("runs[\(i)].\(error.field)", error.problem.message) }
        }
        let (question, untilDecided) = try readQuestion(value, deadline: deadline)
        var binary: String?
        switch value.field("binary") {
        case nil, .null?: binary = nil
        case .string(let text)?: binary = text
        default: return try fail("binary", "expected the version of rehearse as a string")
        }
        return SweepPart(report: SweepReport(scenario: scenario, seeds: seeds, overrides: overrides, runs: runs, expectations: keys,
                                             deadline: deadline), shard: shard, question: question, untilDecided: untilDecided, binary: binary,
                         identity: identity)
    }

    /// The question a part carries (`requirements`, `confidence`, `untilDecided`), if any.
    static func readQuestion(_ value: JSON, deadline: Millis?) throws(Failure) -> (RiskQuestion?, Bool) {
        var untilDecided = false
        switch value.field("untilDecided") {
        case nil: break
        case .bool(let flag)?: untilDecided = flag
        default: throw Failure(field: "untilDecided", "expected true or false")
        }
        guard let requirementItems = value.field("requirements") else {
            guard !untilDecided else { throw Failure(field: "requirements", "missing: a sequential gate's part needs its requirements") }
            return (nil, false)
        }
        guard case .array(let items) = requirementItems, !items.isEmpty, items.count <= RiskQuestion.mostRequirements else {
            throw Failure(field: "requirements", "expected a list of 1 to \(RiskQuestion.mostRequirements) requirements such as \"Faulted <= 1%\"")
        }
        var requirements: [Requirement] = []
        for (i, item) in items.enumerated() {
            guard case .string(let text) = item else { throw Failure(field: "requirements[\(i)]", "expected a string") }
            switch Requirement.parse(text) {
            case .success(let requirement) where requirement.measure.needsShadow:
                throw Failure(field: "requirements[\(i)]", "\(requirement) counts a shadow-scored gate, which parts do not carry; allowed sweep --shadow-gate in one process")
            case .success(let requirement): requirements.append(requirement)
            case .failure(let error): throw Failure(field: "requirements[\(i)]", "\(error.problem); allowed \(Requirement.allowedForm)")
            }
        }
        let confidence: Double
        switch value.field("confidence") {
        case .double(let d)?: confidence = d
        default: throw Failure(field: "confidence", "expected a number above 0.5 and below 1")
        }
        guard confidence.isFinite, confidence > 0.5, confidence < 1 else { throw Failure(field: "confidence", "expected a number above 0.5 and below 1") }
        if deadline == nil, requirements.contains(where: { $0.measure == .deadline }) {
            throw Failure(field: "requirements", "a deadline requirement needs the part's deadline")
        }
        return (RiskQuestion(requirements: requirements, confidence: confidence, deadline: deadline), untilDecided)
    }

    /// A run line read back; the refusal names the field and what it allows.
    /// `keys` are the part's expectation keys, one per entry of `held`.
    static func digest(_ item: JSON, keys: [SweepReport.ExpectationKey]) throws(NumberOutOfRange) -> RunDigest {
        func wrong(_ key: String, _ allowed: String) -> NumberOutOfRange {
            NumberOutOfRange(field: key, value: item.member(key).map { String($0.serialized(pretty: false).prefix(40)) } ?? "missing",
                             allowed: allowed)
        }
        func string(_ key: String) throws(NumberOutOfRange) -> String? {
            switch item.member(key) {
            case .string(let s)?: return s
            case .null?: return nil
            default: throw wrong(key, "a string or null")
            }
        }
        func number(_ key: String, in range: ClosedRange<Double>) throws(NumberOutOfRange) -> Double? {
            switch item.member(key) {
            case .double(let d)?: return try CheckedNumber.finite(d, field: key, in: range)
            case .int(let i)?: return try CheckedNumber.finite(Double(i), field: key, in: range)
            case .null?: return nil
            default: throw wrong(key, "a number from \(range.lowerBound) to \(range.upperBound), or null")
            }
        }
        func ids(_ key: String) throws(NumberOutOfRange) -> [Int] {
            guard case .array(let items)? = item.member(key) else { throw wrong(key, "a list of instance ids") }
            var values: [Int] = []
            for (i, value) in items.enumerated() {
                guard case .int(let id) = value else { throw wrong(key, "a list of instance ids") }
                values.append(try CheckedNumber.whole(id, field: "\(key)[\(i)]", in: 0...Int(Int32.max)))
            }
            return values
        }
        guard case .string(let seedText)? = item.member("seed"), let seed = UInt64(seedText) else {
            throw wrong("seed", "a seed as a string of digits, such as \"42\"")
        }
        let codeText = try string("code"), errorCodeText = try string("errorCode")
        let code = codeText.flatMap(RunningCode.init(rawValue:)), errorCode = errorCodeText.flatMap(UpgradeErrorCode.init(rawValue:))
        if codeText != nil, code == nil { throw wrong("code", "one of \(RunningCode.allCases.map(\.rawValue).joined(separator: ", ")) or null") }
        if errorCodeText != nil, errorCode == nil { throw wrong("errorCode", "one of \(Thresholds.errorCodes.joined(separator: ", ")) or null") }
        let time = try number("timeToFinishSeconds", in: 0...longestSeconds)
        var lowest: Int?
        if let d = try number("lowestHealthy", in: 0...Double(Int32.max)) {
            lowest = try CheckedNumber.whole(d, field: "lowestHealthy", in: 0...Int(Int32.max))
        }
        let unavailable = try number("unavailableInstanceSeconds", in: 0...mostInstanceSeconds)
        guard case .bool(let hit)? = item.member("hitTimeLimit") else { throw wrong("hitTimeLimit", "true or false") }
        let heldForm = "a list of \(keys.count) true or false, one per expectation key"
        guard case .array(let heldItems)? = item.member("held"), heldItems.count == keys.count else { throw wrong("held", heldForm) }
        var held: [HeldKey] = []
        for (value, key) in zip(heldItems, keys) {
            guard case .bool(let b) = value else { throw wrong("held", heldForm) }
            held.append(HeldKey(key.key, b))
        }
        // The capacity is absent from parts written before requirements measured against it.
        var capacity: Int?
        if item.member("capacity") != nil, let d = try number("capacity", in: 0...Double(Int32.max)) {
            capacity = try CheckedNumber.whole(d, field: "capacity", in: 0...Int(Int32.max))
        }
        var digest = RunDigest(seed: seed, code: code, errorCode: errorCode, timeToFinish: time, lowestHealthy: lowest, unavailable: unavailable,
                               hitTimeLimit: hit, held: held, failed: try ids("failed"), leftBehind: try ids("leftBehind"), capacity: capacity)
        // Lifecycle hooks (format 2): every measure a requirement can name travels with the run.
        guard case .bool(let raised)? = item.member("hooksRaised") else { throw wrong("hooksRaised", "true or false") }
        guard case .bool(let defaulted)? = item.member("defaultActionFired") else { throw wrong("defaultActionFired", "true or false") }
        digest.hooksRaised = raised
        digest.defaultActionFired = defaulted
        digest.hookWait = try number("hookWaitSeconds", in: 0...longestSeconds)
        digest.hookRejected = try ids("hookRejected")
        guard case .int(let upgrades)? = item.member("upgrades") else { throw wrong("upgrades", "a whole number of rolling upgrades") }
        digest.upgrades = try CheckedNumber.whole(upgrades, field: "upgrades", in: 0...Int(Int32.max))
        if defaulted && !raised { throw wrong("defaultActionFired", "false when hooksRaised is false") }
        if !digest.hookRejected.isEmpty && !raised { throw wrong("hookRejected", "[] when hooksRaised is false") }
        return digest
    }

    /// The report of one sweep from its parts, `name` saying where each came from (its file):
    /// the same parts give the same report in any order. The parts may cover adjacent blocks of
    /// seeds (`0..99` in 2 shards, `100..199` in 3), each block whole. Refused: parts of different
    /// sweeps (scenario, overrides, deadline, expectations, question, binary, identity), a part missing or
    /// given twice, blocks that overlap or leave a gap, a seed outside its block, a seed whose runs
    /// in two parts (or twice in one) differ (naming both), seeds left without a run.
    public static func merge(_ given: [(name: String, part: SweepPart)]) throws(Failure) -> SweepReport {
        guard !given.isEmpty else { throw Failure(.command("merge"), "needs the parts of a sweep; allowed rehearse merge part1.json part2.json …") }
        // By block, shard, then name: every message below is the same whatever the argument order.
        let parts = given.sorted {
            ($0.part.report.seeds.first, $0.part.shard.index, $0.name) < ($1.part.report.seeds.first, $1.part.shard.index, $1.name)
        }
        let first = parts[0]
        for (name, part) in parts.dropFirst() {
            let a = first.part, b = part
            let differences = [("scenario", a.report.scenario != b.report.scenario), ("overrides", a.report.overrides != b.report.overrides),
                               ("deadline", a.report.deadline != b.report.deadline), ("expectations", a.report.expectations != b.report.expectations),
                               ("requirements", a.question != b.question), ("until-decided", a.untilDecided != b.untilDecided),
                               ("binary", a.binary != b.binary)].filter(\.1).map(\.0)
            guard differences.isEmpty else {
                throw Failure(.file(name), "not a part of the same sweep as \(first.name): its \(differences.joined(separator: ", ")) differ")
            }
            guard a.identity == b.identity else {
                throw Failure(.file(name), "not a part of the same sweep as \(first.name): its run inputs differ: "
                                  + b.identity.describeDifferences(from: a.identity, here: name, there: first.name))
            }
        }
        var blocks: [[(name: String, part: SweepPart)]] = []
        for entry in parts {
            if let last = blocks.last?.first, last.part.report.seeds.first == entry.part.report.seeds.first {
                blocks[blocks.count - 1].append(entry)
            } else {
                blocks.append([entry])
            }
        }
        for (previous, next) in zip(blocks, blocks.dropFirst()) {
            let a = previous[0], b = next[0]
            guard a.part.report.seeds.last < b.part.report.seeds.first, a.part.report.seeds.last &+ 1 == b.part.report.seeds.first else {
                throw Failure(.file(b.name), "its seeds \(b.part.report.seeds) do not follow \(a.part.report.seeds) of \(a.name); "
                                  + "allowed the same seeds, or adjacent blocks (0..99, 100..199)")
            }
        }
        let range = SeedRange(blocks[0][0].part.report.seeds.first, blocks[blocks.count - 1][0].part.report.seeds.last)
        guard range.last - range.first < UInt64(SeedRange.mostSeeds) else {
            throw Failure(.command("merge"), "the blocks cover seeds \(range), more than \(SeedRange.mostSeeds); allowed at most \(SeedRange.mostSeeds) seeds")
        }
        var bySeed: [UInt64: (name: String, run: RunDigest)] = [:]
        for block in blocks {
            try checkShards(block, given: given)
            for (name, part) in block {
                let seeds = part.report.seeds
                for (i, run) in part.report.runs.enumerated() {
                    guard seeds.contains(run.seed) else { throw Failure(.file(name), "runs[\(i)].seed: seed \(run.seed) is not one of the seeds \(seeds)") }
                    if let earlier = bySeed[run.seed] {
                        guard earlier.run == run else {
                            throw Failure(.command("merge"), "seed \(run.seed) has different results in \(earlier.name) and \(name); allowed one result per seed",
                                          conflict: .differentResults(seed: run.seed, parts: [earlier.name, name]))
                        }
                    } else {
                        bySeed[run.seed] = (name, run)
                    }
                }
            }
        }
        guard bySeed.count == range.count else {
            throw Failure(.command("merge"), "the parts do not hold exactly the runs of seeds \(range): \(bySeed.count) runs for \(range.count) seeds")
        }
        var report = first.part.report
        report.seeds = range
        report.runs = bySeed.values.map(\.run).sorted { $0.seed < $1.seed }
        return report
    }

    /// Checks one block's parts (one seed range, sorted by shard): one shard count, every shard once.
    static func checkShards(_ block: [(name: String, part: SweepPart)], given: [(name: String, part: SweepPart)]) throws(Failure) {
        let first = block[0]
        for (name, part) in block.dropFirst() {
            let differences = [("seeds", part.report.seeds != first.part.report.seeds),
                               ("shard count", part.shard.count != first.part.shard.count)].filter(\.1).map(\.0)
            guard differences.isEmpty else {
                throw Failure(.file(name), "not a part of the same sweep as \(first.name): its \(differences.joined(separator: ", ")) differ")
            }
        }
        let count = first.part.shard.count
        for (previous, next) in zip(block, block.dropFirst()) where previous.part.shard.index == next.part.shard.index {
            throw Failure(.command("merge"), "part \(next.part.shard) is given more than once: \(previous.name), \(next.name)",
                          conflict: .givenTwice(next.part.shard, parts: [previous.name, next.name]))
        }
        // Indices are distinct and within 1...count: the first gap is the first part missing.
        if block.count != count {
            let missing = (block.enumerated().first { $0.offset + 1 != $0.element.part.shard.index }?.offset ?? block.count) + 1
            let of = given.count == block.count ? "" : " of seeds \(first.part.report.seeds)"
            throw Failure(.command("merge"), "part \(missing)/\(count)\(of) is missing; given: \(given.map(\.name).joined(separator: ", "))",
                          conflict: .missing(Shard(index: missing, count: count), seeds: first.part.report.seeds))
        }
    }
}
