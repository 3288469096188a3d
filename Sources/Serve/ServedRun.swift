import AzureWire
import Formats
import Foundation
import HTTPTypes
import Scenario
import UpgradeEngine

/// How the virtual clock follows real time.
public enum ClockMode: Equatable, Sendable {
    /// This many virtual seconds per real second.
    case speed(Double)
    /// Still until a client polls; each poll advances to the next event.
    case step
}

/// The run behind the endpoint: one `RehearsalSession`, the clock mapped onto real time or onto
/// polls, and the operations clients started. Every client action becomes the session action a
/// script's `at` performs.
actor ServedRun {
    private let session: RehearsalSession
    let mode: ClockMode
    /// When the first request arrived: the virtual clock (speed mode) runs from then, so that a
    /// pipeline started some seconds after the server sees the scenario's timeline from its start.
    private var started: ContinuousClock.Instant?
    /// Virtual milliseconds added by the control route (speed mode): never more than
    /// `ServedRun.latest`, checked as it grows (an advance that would pass it is refused).
    private var shift: Millis = 0
    /// The Unix second virtual time 0 stands for: every instant served (`timeCreated`,
    /// `waitUntil`, a status's times) and read (a PATCH's `waitUntil`) counts from it.
    let epoch: Int
    /// The operations clients started, apart from the run (they only read it).
    private var operations = OperationStore()
    private let emitted = Counter()
    /// The error that ended the run (a script error, a run limit): answered to every request after.
    private(set) var failure: ScenarioError?

    final class Counter {
        var value = 0
        /// The lifecycle hook events the platform superseded (completed as abandoned), by name.
        var abandoned: Set<String> = []
    }

    private let onPerform: (@Sendable (Millis, [SessionAction]) -> Void)?

    init(_ definition: ScenarioDefinition, _ inputs: RunInputs, mode: ClockMode, epoch: Int = Timestamp.defaultEpoch, onEvent: (@Sendable (Event) -> Void)? = nil,
         onPerform: (@Sendable (Millis, [SessionAction]) -> Void)? = nil) throws(RunFailure) {
        self.mode = mode
        self.epoch = epoch
        self.onPerform = onPerform
        let counter = emitted
        session = try RehearsalSession(definition, inputs, printAt: { time, line in
            StandardStream.error.write("print \(ISODuration.format(time)): \(line)\n")
        }, onEvent: { event in
            counter.value += 1
            if case .hookCompleted(let outcome) = event.payload, outcome.abandoned { counter.abandoned.insert(outcome.name) }
            onEvent?(event)
        })
    }

    /// The scale set as it is now: the definition with the policy in effect.
    var scaleSet: ScaleSetDefinition {
        var current = session.scaleSet
        current.policy = session.policy
        current.lifecycleHooks = session.lifecycleHooks
        return current
    }

    /// The scale set's name (without copying the definition).
    var name: String { session.scaleSet.name }

    /// The last `rollingUpgrades/latest` text, with the status (as shown) and id it was written
    /// for: polls between two events read it again instead of writing it anew.
    private var latest: (status: RollingUpgradeStatus, id: String, text: String)?

    /// The JSON text of `make()`, which shows `status` under `id`; written once per status and id.
    func latestText(_ status: RollingUpgradeStatus, id: String, _ make: () -> JSON) -> String {
        if let latest, latest.id == id, latest.status == status { return latest.text }
        let text = make().serialized(pretty: false)
        latest = (status, id, text)
        return text
    }

    /// The virtual time the outside has reached.
    var now: Millis { session.clock }

    /// One request, one step: brings the run up to the clock, then runs `body` on the run, with
    /// no other request in between (the body cannot suspend). Every read and change of a request
    /// happens inside one such call, so a request's changes share one virtual instant and a read
    /// is a snapshot.
    func transact<T: Sendable>(_ body: @Sendable (isolated ServedRun) throws -> T) throws -> T {
        try sync()
        return try body(self)
    }

    /// Brings the run up to the real clock (speed mode); every request starts here.
    func sync() throws(ARMError) {
        try check()
        guard case .speed(let factor) = mode else { return }
        let now = ContinuousClock.now
        if started == nil { started = now }
        // A start still to come keeps the clock at zero until it comes.
        let elapsed = max(.zero, now - (started ?? now))
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        // Bounded, so that neither the conversion nor the sum can overflow (shift ≤ latest too);
        // the clock runs on to the latest instant and stays there.
        let target = min(Millis(min((seconds * factor * 1000).rounded(.down), Double(Self.latest))) + shift, Self.latest)
        try guarded { () throws(RunFailure) in try session.advance(to: target) }
    }

    /// The virtual clock runs from `instant` (speed mode), whenever the first request comes.
    func start(at instant: ContinuousClock.Instant) { started = instant }

    /// The first request arrived at `instant`: the clock runs from then, unless a start was set.
    func startClock(at instant: ContinuousClock.Instant) {
        if started == nil { started = instant }
    }

    /// A client polled: in step mode, the run moves to its next event, unless a lifecycle hook
    /// event is Active: then the run waits for the answer, as the platform waits until `waitUntil`,
    /// and no read moves the clock towards that instant; its default action fires only when a
    /// client moves the clock there (`POST /rehearse/clock`), so that a pipeline can list and
    /// answer the event first (issue 58).
    func polled() throws(ARMError) {
        try sync()
        if mode == .step && !session.lifecycleHookEvents.contains(where: \.isActive) { try stepToNextEvent() }
    }

    /// Handles scheduled things until one emits an event, or nothing is left; returns the clock.
    @discardableResult
    func stepToNextEvent() throws(ARMError) -> Millis {
        let before = emitted.value
        while emitted.value == before {
            var moved: Millis?
            try guarded { () throws(RunFailure) in moved = try session.step() }
            if moved == nil { break }
        }
        return session.clock
    }

    /// The latest virtual time the clock reaches: the session's own latest instant
    /// (`ISODuration.longest`, 10^12 s), so that every sum of clock values stays exact in a
    /// Double and far from overflowing.
    static let latest: Millis = ISODuration.longest

    /// Moves the clock forward by `amount` (control route); refused (400 naming the bound, the
    /// clock and the shift unchanged) when the clock or the shift it accumulates would pass
    /// `latest`: checked arithmetic, never a trap.
    func advance(by amount: Millis) throws(ARMError) {
        try sync()
        guard let target = ISODuration.later(session.clock, by: amount), let shifted = ISODuration.later(shift, by: amount) else {
            throw Self.pastLatest(amount: amount, from: session.clock)
        }
        var refusal: EngineError?
        try guarded { () throws(RunFailure) in refusal = try session.advance(to: target) }
        if refusal != nil { throw Self.pastLatest(amount: amount, from: session.clock) }
        shift = shifted
    }

    /// The refusal of a move of the clock past `latest`.
    static func pastLatest(amount: Millis, from clock: Millis) -> ARMError {
        ARMError(.badRequest, code: "InvalidParameter",
                 message: "advance: \(ISODuration.format(max(0, amount))) from \(ISODuration.format(clock)) takes the virtual clock past \(ISODuration.format(latest)) (10^12 seconds), the latest instant it reaches; allowed an advance up to \(ISODuration.format(max(0, latest - clock)))",
                 target: "advance")
    }

    private func check() throws(ARMError) {
        if let failure { throw ARMError(.internalServerError, code: "InternalExecutionError", message: "the rehearsal ended with an error: \(failure)") }
    }

    private func guarded(_ body: () throws(RunFailure) -> Void) throws(ARMError) {
        do { try body() } catch {
            failure = error.error
            try check()
        }
    }

    // MARK: Snapshots

    /// The scale set's shapes under `id`, as a client of `apiVersion` reads them (nil: the newest).
    func shapes(id: String, apiVersion: String? = nil) -> ScaleSetShapes {
        let running = session.status?.code == .rollingForward || session.instances.contains { !$0.isSettled }
        return ScaleSetShapes(id: id, scaleSet: scaleSet, model: session.model, capacity: session.capacity, instances: session.instances,
                              provisioningState: running ? "Updating" : "Succeeded", epoch: epoch,
                              etag: APIVersion.isAtLeast(apiVersion, APIVersion.etagSince) ? etag : nil)
    }

    /// What the scale set's etag was last made from, and its number.
    private var revision = (fingerprint: "", number: 0)

    /// The scale set's etag, Compute's shape (`"3"`): a number that grows whenever the model, the
    /// policy, the hooks or the capacity differ from what the last etag was made from.
    var etag: String {
        let fingerprint = JSON.object(["model": .object(session.model.mapValues(JSON.string)), "policy": session.policy.json,
                                       "hooks": LifecycleHooksWire.profileJSON(session.lifecycleHooks), "capacity": .int(session.capacity)])
            .serialized(pretty: false)
        if fingerprint != revision.fingerprint { revision = (fingerprint, revision.number + 1) }
        return "\"\(revision.number)\""
    }

    var status: RollingUpgradeStatus? { session.status }
    var history: [OSUpgradeRecord] { session.osUpgradeHistory }
    var model: [String: String] { session.model }
    var policy: UpgradePolicy { session.policy }
    var capacity: Int { session.capacity }
    var instances: [InstanceView] { session.instances }
    var nextEventTime: Millis? { session.nextEventTime }
    /// The lifecycle hook events so far, oldest first.
    var hookEvents: [LifecycleHookEvent] { session.lifecycleHookEvents }
    /// The names of the events the platform superseded (`Abandoned` from api 2026-09-01).
    var abandonedHookEvents: Set<String> { emitted.abandoned }

    // MARK: Actions

    /// Performs `action` at the clock; a refusal becomes ARM's answer to it (`ARMError.refused`).
    func perform(_ action: SessionAction) throws(ARMError) { try perform([action]) }

    /// Performs `actions` in order as one step at the clock (one virtual instant); a refusal
    /// becomes ARM's answer to it (`ARMError.refused`). Callers check first what the engine would refuse,
    /// so that a refused request changes nothing.
    func perform(_ actions: [SessionAction]) throws(ARMError) {
        var refusal: EngineError?
        let time = session.clock
        try guarded { () throws(RunFailure) in refusal = try session.perform(actions) }
        onPerform?(time, actions)
        if let refusal { throw ARMError.refused(refusal) }
    }

    /// Starts tracking an operation; returns its id.
    func begin(_ tracks: LongRunningOperation.Tracks) -> String {
        operations.begin(tracks, location: session.scaleSet.location, progress: progress)
    }

    var upgradesStarted: Int { session.upgrades }

    /// The operation `id`, brought up to date; nil when there is none.
    func operation(_ id: String) -> LongRunningOperation? { operations.operation(id, progress: progress) }

    /// What the operations are settled against: the run as it is now.
    private var progress: LongRunningOperation.Progress {
        LongRunningOperation.Progress(clock: session.clock, upgrades: session.upgrades, status: session.status,
                                      idle: session.nextEventTime == nil,
                                      busy: Set(session.instances.filter { !$0.isSettled }.map(\.id)))
    }

    /// Ends the run: drives it to its end and returns the record (the CLI writes the events
    /// file's end and the report from it).
    func close() throws(ServeError) -> RunRecord {
        if let failure { throw .run(failure) }
        do { return try session.finish() } catch { throw .run(error.error) }
    }
}
