public import Formats

/// A requirement on a share of runs, the risk question as a gate: `Faulted <= 1%`,
/// `deadline >= 95%`. Judged at a confidence by a confidence sequence: **held** when every share
/// the sequence still allows is on the right side of the limit, **failed** when every one is on
/// the wrong side, **undecided** otherwise.
public struct Requirement: Equatable, Sendable, CustomStringConvertible {
    /// What is counted in each run.
    public enum Measure: Equatable, Sendable {
        /// The latest rolling upgrade ended with this final code (`Completed`, `Faulted`, `Cancelled`, …).
        case code(RunningCode)
        /// The run's upgrade faulted with this Azure error code.
        case errorCode(UpgradeErrorCode)
        /// The upgrade ended within the sweep's deadline (not cut off by the run's time limit).
        case deadline
        /// Every `expect` of the script held.
        case expectations
        /// Every `expect` entry with this key held (`expect.minHealthy`).
        case expectation(Expectation.Key)
        /// The run's lowest healthy stayed at or above this share (0...1) of its capacity
        /// (`lowestHealthy.80`: at least 80% of the capacity kept serving throughout).
        case lowestHealthy(Double)
        /// A lifecycle hook event's `defaultAction` fired (SPEC §6b).
        case defaultAction
        /// A lifecycle hook event rejected an instance.
        case hookRejected
        /// The gate stopped a rollout that went well without it (`sweep --shadow-gate`).
        case falseStop
        /// The gate let through a rollout that was bad (`sweep --shadow-gate`).
        case falsePass

        /// Whether the measure needs a shadow-scored sweep.
        public var needsShadow: Bool { self == .falseStop || self == .falsePass }
    }

    /// `<=` (the share may be at most the limit) or `>=` (at least).
    public enum Comparison: String, Equatable, Sendable {
        /// The share must be at most the limit.
        case atMost = "<="
        /// The share must be at least the limit.
        case atLeast = ">="
    }

    /// What a sequential judgement says.
    public enum Verdict: String, Equatable, Sendable {
        /// The whole interval is on the right side of the limit.
        case held
        /// The whole interval is on the wrong side.
        case failed
        /// The interval still straddles the limit.
        case undecided
    }

    /// What is counted.
    public var measure: Measure
    /// Which side of the limit is right.
    public var comparison: Comparison
    /// The limit, a share in 0...1 (1% is 0.01).
    public var limit: Double

    /// A requirement that the share of `measure` be `comparison` `limit` (a share in 0...1).
    public init(_ measure: Measure, _ comparison: Comparison, _ limit: Double) {
        self.measure = measure
        self.comparison = comparison
        self.limit = limit
    }

    /// The final codes a run can end with, as `code` measures.
    public static let finalCodes = ["Completed", "Faulted", "Cancelled", "RollingForward", "RollingBack"]

    /// What `parse` accepts, said for an error message.
    public static let allowedForm = "SHARE <= P% or SHARE >= P%, with SHARE a final code (Completed, Faulted, Cancelled, RollingForward, "
        + "RollingBack), an error code a rolling upgrade faults with (\(Thresholds.errorCodes.joined(separator: ", "))), deadline, expect, "
        + "expect.KEY, lowestHealthy.C (runs whose lowest healthy stayed at C% of capacity or more), defaultAction or hookRejected "
        + "(lifecycle hooks), falseStop or falsePass (a gate scored by sweep --shadow-gate), and P a decimal number from 0 to 100 (e.g. \"Faulted <= 1%\", \"lowestHealthy.80 >= 95%\")"

    /// Reads `SHARE OP P%`; the problem otherwise (what is wrong, without the allowed form).
    public static func parse(_ text: String) -> Result<Requirement, RequirementError> {
        let chars = Array(text.split(whereSeparator: { $0 == " " || $0 == "\t" }).joined(separator: " "))
        let operators = chars.indices.dropLast().filter { (chars[$0] == "<" || chars[$0] == ">") && chars[$0 + 1] == "=" }
        guard operators.count == 1, let at = operators.first else {
            return .failure(.init(text: text, problem: operators.isEmpty ? "no <= or >=" : "more than one comparison"))
        }
        let comparison: Comparison = chars[at] == "<" ? .atMost : .atLeast
        let name = String(chars[..<at])[...].trimmingSpaces, number = String(chars[(at + 2)...])[...].trimmingSpaces
        guard number.hasSuffix("%") else { return .failure(.init(text: text, problem: "the limit must be a percentage such as 1%")) }
        guard let limit = percentage(number.dropLast()[...].trimmingSpaces[...]) else {
            return .failure(.init(text: text, problem: "the limit must be a number from 0 to 100 followed by %"))
        }
        guard let measure = Measure(name: name) else {
            if name == "lowestHealthy" || name.hasPrefix("lowestHealthy.") {
                return .failure(.init(text: text, problem: "'\(name)' needs the share of capacity to keep, from 0 to 100: lowestHealthy.80 >= 95% "
                                      + "asks that at least 95% of runs keep at least 80% of their capacity serving"))
            }
            return .failure(.init(text: text, problem: "'\(name)' is not a share rehearse counts"))
        }
        return .success(Requirement(measure, comparison, limit))
    }

    /// A percentage written as plain decimal digits (one point at most) from 0 to 100, as a
    /// share in 0...1; nil for anything else (signs, exponents, `inf`, `nan`, hex).
    static func percentage(_ digits: Substring) -> Double? {
        let decimal = !digits.isEmpty && digits.allSatisfy { $0.isASCII && ($0.isNumber || $0 == ".") } && digits.count { $0 == "." } <= 1
        guard decimal, let percent = Double(digits), percent.isFinite, (0...100).contains(percent) else { return nil }
        return percent / 100
    }

    /// `Faulted <= 1%`, the form `parse` reads.
    public var description: String { "\(measure) \(comparison.rawValue) \(Self.percentText(limit))%" }

    /// The share of `runs` that showed the measure. `keys` are the expectation keys each digest's
    /// `held` refers to; `deadline` (ms) is the sweep's, needed by `.deadline`.
    public func share(of runs: [RunDigest], keys: [SweepReport.ExpectationKey], deadline: Millis?) -> Share {
        Share(runs.count { shows($0, keys: keys, deadline: deadline) }, of: runs.count)
    }

    /// Whether one run showed the measure.
    public func shows(_ run: RunDigest, keys: [SweepReport.ExpectationKey], deadline: Millis?) -> Bool {
        switch measure {
        case .code(let code): return run.code == code
        case .errorCode(let code): return run.errorCode == code
        case .deadline:
            guard let deadline else { return false }
            return run.endedWithin(deadline)
        case .expectations: return run.held.allSatisfy(\.held)
        case .lowestHealthy(let share): return run.keptServing(share)
        case .expectation(let key):
            // A run without the key has no such expectation to hold: refused at load, never counted as held.
            var seen = false
            for held in run.held where held.key == key {
                guard held.held else { return false }
                seen = true
            }
            return seen
        case .defaultAction: return run.defaultActionFired
        case .hookRejected: return !run.hookRejected.isEmpty
        case .falseStop: return run.shadow == .falseStop
        case .falsePass: return run.shadow == .falsePass
        }
    }

    /// The verdict on `share` at `confidence`, and the confidence sequence's interval it reads.
    public func judge(_ share: Share, confidence: Double) -> (verdict: Verdict, interval: (lower: Double, upper: Double)) {
        let sequence = ConfidenceSequence(centredOn: limit, confidence: confidence)
        let interval = sequence.interval(count: share.count, total: share.total)
        guard share.total > 0, sequence.excludes(limit, count: share.count, total: share.total) else { return (.undecided, interval) }
        // The limit is outside the interval: the interval lies wholly on the side of the observed share.
        let below = share.fraction < limit
        switch comparison {
        case .atMost: return (below ? .held : .failed, interval)
        case .atLeast: return (below ? .failed : .held, interval)
        }
    }

    /// A share as a percentage as short as it reads exactly: 0.01 is "1", 0.005 is "0.5".
    public static func percentText(_ share: Double) -> String {
        let value = (share * 100 * 1e9).rounded() / 1e9
        return value == value.rounded() ? String(Int(value)) : String(value)
    }
}

extension Requirement.Measure: CustomStringConvertible {
    /// Reads a share's name: a final code, `deadline`, `expect`, `expect.KEY`, or an Azure error
    /// code (letters and digits, starting with a capital letter); nil for anything else.
    init?(name: String) {
        if let code = RunningCode(rawValue: name) {
            self = .code(code)
        } else if name == "deadline" {
            self = .deadline
        } else if name == "expect" {
            self = .expectations
        } else if name == "defaultAction" {
            self = .defaultAction
        } else if name == "hookRejected" {
            self = .hookRejected
        } else if name == "falseStop" {
            self = .falseStop
        } else if name == "falsePass" {
            self = .falsePass
        } else if name.hasPrefix("expect."), let key = Expectation.Key(rawValue: String(name.dropFirst(7))) {
            self = .expectation(key)
        } else if name.hasPrefix("lowestHealthy."), let share = Requirement.percentage(name.dropFirst(14)) {
            self = .lowestHealthy(share)
        } else if let code = UpgradeErrorCode(rawValue: name) {
            self = .errorCode(code)
        } else {
            return nil
        }
    }

    public var description: String {
        switch self {
        case .code(let code): return code.rawValue
        case .errorCode(let code): return code.rawValue
        case .deadline: return "deadline"
        case .expectations: return "expect"
        case .expectation(let key): return "expect.\(key.rawValue)"
        case .lowestHealthy(let share): return "lowestHealthy.\(Requirement.percentText(share))"
        case .defaultAction: return "defaultAction"
        case .hookRejected: return "hookRejected"
        case .falseStop: return "falseStop"
        case .falsePass: return "falsePass"
        }
    }
}

/// The keys an `expect` table can hold, which `expect.KEY` may name.
public enum ExpectationKeyName {
    /// Every key, as scripts write them.
    public static let all = Set(Expectation.Key.allCases.map(\.rawValue))
}

/// A requirement that could not be read: the text and what is wrong with it.
public struct RequirementError: Error, Equatable, Sendable {
    /// The requirement as written.
    public var text: String
    /// What is wrong.
    public var problem: String
}

extension RequirementError: UserFacingError {
    /// Whoever read the requirement (an option, a risk block) names the place.
    public var place: Location? { nil }
    /// The form a requirement takes.
    public var allowed: String? { Requirement.allowedForm }
    /// Bad input: 2.
    public var exitCode: Int32 { 2 }
}

/// One requirement judged over a sweep's runs.
public struct RequirementResult: Equatable, Sendable {
    /// The requirement.
    public var requirement: Requirement
    /// The share of runs that showed its measure.
    public var share: Share
    /// The confidence sequence's interval of the share, both ends in 0...1.
    public var lower: Double
    /// The upper end of the interval.
    public var upper: Double
    /// Held, failed or undecided.
    public var verdict: Requirement.Verdict
    /// The confidence it was judged at.
    public var confidence: Double

    /// `requirement` judged over `runs` at `confidence`.
    public init(_ requirement: Requirement, runs: [RunDigest], keys: [SweepReport.ExpectationKey], deadline: Millis?, confidence: Double) {
        self.init(requirement, share: requirement.share(of: runs, keys: keys, deadline: deadline), confidence: confidence)
    }

    /// `requirement` judged on `share` at `confidence`.
    public init(_ requirement: Requirement, share: Share, confidence: Double) {
        self.requirement = requirement
        self.confidence = confidence
        self.share = share
        let judged = requirement.judge(share, confidence: confidence)
        lower = judged.interval.lower
        upper = judged.interval.upper
        verdict = judged.verdict
    }
}

/// The requirements a sweep is judged by, and how: at which confidence, and against which deadline.
public struct RiskQuestion: Equatable, Sendable {
    /// The requirements, in the order given.
    public var requirements: [Requirement]
    /// The probability that every interval holds the true share at every look (0 < c < 1).
    public var confidence: Double
    /// The deadline `deadline` measures, in milliseconds.
    public var deadline: Millis?

    /// A question of `requirements` at `confidence` against `deadline`.
    public init(requirements: [Requirement], confidence: Double = 0.95, deadline: Millis? = nil) {
        self.requirements = requirements
        self.confidence = confidence
        self.deadline = deadline
    }

    /// The most requirements one question may hold: each is judged over every run at every
    /// look, so their number multiplies the gate's work (20,000 of them cost 20,000 × the seeds).
    public static let mostRequirements = 64

    /// The question with each requirement once (the first of each kept, in order), and the
    /// repeats it dropped: a requirement given twice is judged once.
    public func deduplicated() -> (question: RiskQuestion, repeats: [Requirement]) {
        var copy = self
        copy.requirements = []
        var repeats: [Requirement] = []
        for requirement in requirements {
            if copy.requirements.contains(requirement) { repeats.append(requirement) } else { copy.requirements.append(requirement) }
        }
        return (copy, repeats)
    }

    /// Every requirement judged over `runs`.
    public func judge(_ runs: [RunDigest], keys: [SweepReport.ExpectationKey]) -> [RequirementResult] {
        var tally = RiskTally(self, keys: keys)
        tally.add(runs)
        return tally.results
    }
}

extension Substring {
    var trimmingSpaces: String {
        String(drop(while: { $0 == " " }).reversed().drop(while: { $0 == " " }).reversed())
    }
}

extension String {
    fileprivate var trimmingSpaces: String { self[...].trimmingSpaces }
}
