public import Formats

/// Where the engine gets each probe's answer. Scenario scripts implement it in Lua; tests with
/// Swift closures. A thrown error ends the run (a script error).
public protocol HealthSource: AnyObject {
    /// The answer of `instance` to a probe at `time` (milliseconds on the virtual clock).
    func probe(_ instance: borrowing Instance, at time: Millis) throws -> ProbeReply
    /// The custom metrics of `instance`'s latest probe, for a source that answered with
    /// `MetricsPayload.deferred`; asked once per instance when a rolling upgrade starts.
    func latestMetrics(of instance: borrowing Instance) throws -> MetricsPayload?
    /// The same as `probe(_:at:)` for an instance the engine lends in place, valid for the
    /// call: the engine's hot path, where passing the instance itself costs a copy of it per
    /// probe. By default it calls `probe(_:at:)`.
    func probe(lent instance: LentInstance, at time: Millis) throws -> ProbeReply
    /// Whether `probe(run:)` answers more than one probe per call. By default it does not.
    var answersRuns: Bool { get }
    /// Probes several instances due at one instant, in order, as `probe(lent:at:)` would one by
    /// one, while each answers `.named(expected)`: `run.matched` counts those. It stops at the
    /// first other answer: `run.stop` is then `.answered` or `.failed` for probe number
    /// `run.matched`. By default it probes the first alone.
    func probe(run: inout ProbeRun)
}

/// Probes due at one instant, asked of a health source in one call: the instances in the order
/// their probes were scheduled and, for each, the state whose answer changes nothing (nil: any
/// answer may change something, so the run ends with it). The source says how far it went. The
/// instances are lent for the call (`instance(at:)`, `expected(at:)`); do not keep the run.
public struct ProbeRun {
    /// How a run ended.
    public enum Stop {
        /// Every probe answered as expected.
        case none
        /// Probe number `matched` answered this.
        case answered(ProbeReply)
        /// Probe number `matched` failed (a script error).
        case failed(any Error)
    }

    /// The engine's buffers and fleet, lent for the call.
    @usableFromInline let lent: LentProbes
    /// How many probes the run holds (at least 1).
    public var count: Int { lent.count }
    /// The instant of every probe in the run, in milliseconds.
    public let time: Millis
    /// How many probes, from the first, answered as expected.
    public var matched = 0
    /// How the run ended (set by the source).
    public var stop = Stop.none

    init(_ lent: LentProbes, time: Millis) {
        self.lent = lent
        self.time = time
    }

    /// Ends `run` with `answer`, out of line: with the copy inlined, `probeOneByOne`'s loop
    /// loaded each whole reply right after the call that wrote it, a load the processor cannot
    /// forward from those stores (run10k_ns_per_probe 16.4 → 20 in `rehearse-bench engine`).
    @inline(never)
    static func stop(_ run: inout ProbeRun, answered answer: ProbeReply) {
        run.stop = .answered(answer)
    }
}

extension HealthSource {
    /// Reads the lent instance and asks `probe(_:at:)`.
    public func probe(lent instance: LentInstance, at time: Millis) throws -> ProbeReply {
        try probe(instance.instance, at: time)
    }

    /// One probe a call, by default.
    public var answersRuns: Bool { false }

    /// The run's first probe alone, by default.
    public func probe(run: inout ProbeRun) {
        run.matched = 0
        do {
            run.stop = .answered(try probe(lent: run.instance(at: 0), at: run.time))
        } catch {
            run.stop = .failed(error)
        }
    }

    /// Answers `run` with `probe(lent:at:)` for each of its instances in turn, until one does not
    /// name its expected state: what a source that answers runs of named states can use as its
    /// `probe(run:)`.
    public func probeOneByOne(_ run: inout ProbeRun) {
        let lent = run.lent, time = run.time
        run.matched = 0
        for index in 0..<lent.count {
            let answer: ProbeReply
            do {
                answer = try probe(lent: lent.instance(at: index), at: time)
            } catch {
                run.stop = .failed(error)
                return
            }
            guard case .named(let state) = answer, state == lent.expected(at: index) else {
                return ProbeRun.stop(&run, answered: answer)
            }
            run.matched += 1
        }
        run.stop = .none
    }

    /// No deferred metrics by default.
    public func latestMetrics(of instance: borrowing Instance) throws -> MetricsPayload? { nil }
}

/// Stands for the rolling-upgrade custom metrics an instance reports (the scenario's `phase`).
public protocol PhaseSource: AnyObject {
    /// The instance's `PhaseOrderingNumber` and `SkipUpgrade`, or nil to keep what its metrics
    /// say. `time`: when the upgrade asks (milliseconds on the virtual clock).
    func metrics(of instance: Instance, at time: Millis) throws -> CustomMetrics?
}

/// What a fault injector decides about one operation.
public struct OperationOutcome: Equatable, Sendable {
    /// The operation fails: the instance keeps its model (a created one is deleted).
    public var fail: Bool
    /// Overrides the default duration, in milliseconds.
    public var duration: Millis?

    /// An outcome: failing or not, taking `duration` milliseconds (nil: the default).
    public init(fail: Bool = false, duration: Millis? = nil) {
        self.fail = fail
        self.duration = duration
    }
}

/// Decides the fate of each operation (the scenario's `fault`).
public protocol FaultInjector: AnyObject {
    /// nil: the operation succeeds in its default time.
    func outcome(of operation: OperationKind, on instance: Instance, at time: Millis) throws -> OperationOutcome?
}

/// A health source made of a closure.
public final class ClosureHealthSource: HealthSource {
    let body: (Instance, Millis) throws -> ProbeReply
    /// A source answering with `body(instance, time in milliseconds)`.
    public init(_ body: @escaping (Instance, Millis) throws -> ProbeReply) { self.body = body }
    /// The closure's answer.
    public func probe(_ instance: borrowing Instance, at time: Millis) throws -> ProbeReply { try body(instance, time) }
}

/// A phase source made of a closure.
public final class ClosurePhaseSource: PhaseSource {
    let body: (Instance) throws -> Int?
    /// A source whose `body` gives each instance's PhaseOrderingNumber (nil: none).
    public init(_ body: @escaping (Instance) throws -> Int?) { self.body = body }
    /// The closure's phase, as the metric.
    public func metrics(of instance: Instance, at time: Millis) throws -> CustomMetrics? {
        try body(instance).map { CustomMetrics(phase: $0) }
    }
}

/// A fault injector made of a closure.
public final class ClosureFaultInjector: FaultInjector {
    let body: (OperationKind, Instance, Millis) throws -> OperationOutcome?
    /// An injector deciding with `body(operation, instance, time in milliseconds)`.
    public init(_ body: @escaping (OperationKind, Instance, Millis) throws -> OperationOutcome?) { self.body = body }
    /// The closure's decision.
    public func outcome(of operation: OperationKind, on instance: Instance, at time: Millis) throws -> OperationOutcome? {
        try body(operation, instance, time)
    }
}

/// Every instance answers Healthy with no metrics.
public final class AlwaysHealthy: HealthSource {
    /// The source.
    public init() {}
    /// Healthy, without metrics.
    public func probe(_ instance: borrowing Instance, at time: Millis) throws -> ProbeReply { .structured(state: "Healthy", metrics: nil) }
}

/// A deferral source made of a closure.
public final class ClosureDeferralSource: DeferralSource {
    let body: (Instance, Millis) throws -> OSUpgradeDeferral
    /// A source deciding with `body(instance, time in milliseconds)`.
    public init(_ body: @escaping (Instance, Millis) throws -> OSUpgradeDeferral) { self.body = body }
    /// The closure's answer.
    public func deferral(of instance: Instance, at time: Millis) throws -> OSUpgradeDeferral { try body(instance, time) }
}
