public import AzureWire
public import Formats
public import UpgradeEngine

/// Every action a scenario can take on its running scale set, one case each: a script's `at`
/// callback (the Lua function reads its arguments into this value), a typed timeline entry
/// (`.perform`) and `rehearse serve`'s REST routes all make one and `apply` it, the one way an
/// action reaches the engine.
///
/// Adding an action is a case here, its `Name` (the Lua function of that name is registered
/// from `Name.allCases`), its reading from Lua in `SessionAction(_:lua:)` and its engine call
/// in `apply(to:)`; no closure of its own.
public enum SessionAction: Equatable, Sendable {
    /// `update_model { … }`: attribute → value (empty for a generic update), and the health
    /// extension added, changed or removed (nil: as it is).
    case updateModel([String: String], healthExtension: HealthExtensionChange? = nil)
    /// `cancel()`: the rolling upgrade in progress.
    case cancel
    /// `manual_upgrade { ids }` (nil: every instance).
    case manualUpgrade(ids: [Int]?)
    /// `start_os_upgrade { image }`.
    case startOSUpgrade(image: String?)
    /// `release_image { version }`.
    case releaseImage(version: String)
    /// `approve_os_upgrade { ids }` (nil: every deferred instance).
    case approveOSUpgrade(ids: [Int]?)
    /// `start_extension_upgrade { version }`.
    case startExtensionUpgrade(version: String?)
    /// `scale(n)`.
    case scale(to: Int)
    /// `reimage { ids }` (nil: every instance).
    case reimage(ids: [Int]?)
    /// `update_policy { … }`: the fields given replace those of the policy in effect, the rest
    /// keep theirs (Azure's PATCH); a running upgrade keeps its own policy.
    case updatePolicy(PolicyPatch)
    /// Delete these instances (Azure's delete-instances: a scale-in of chosen ids).
    case deleteInstances(ids: [Int])
    /// Set one instance's protection policy.
    case protect(id: Int, fromScaleIn: Bool, fromScaleSetActions: Bool)
    /// `restart_instances { ids }` (nil: every instance): running ones boot again.
    case restart(ids: [Int]?)
    /// `stop_instances { ids, deallocate = true }` (nil ids: every instance): powered off, or
    /// deallocated; out of service until started.
    case stop(ids: [Int]?, deallocate: Bool)
    /// `start_instances { ids }` (nil: every instance): stopped or deallocated ones boot.
    case start(ids: [Int]?)
    /// A reimage, restart, power off, deallocation or start called on one instance itself (the
    /// VirtualMachineScaleSetVMs operations): it acts on an instance protected from scale set
    /// actions too, as Azure's instance protection article says of user-initiated operations on
    /// an instance. Its events are those of the same action on that id.
    case onInstance(id: Int, InstanceAction)
    /// `answer_hook { … }`: an answer to the Active lifecycle hook event (`event`: its name; nil:
    /// whichever is Active), as `az vmss lifecycle-hook-event approve/reject/update` give one.
    case answerHook(event: String?, HookResponse)
    /// `set_lifecycle_hooks { … }`: the scale set's `lifecycleHooksProfile.lifecycleHooks` replaced
    /// (a PATCH of the scale set; `{}` removes every hook).
    case setLifecycleHooks([LifecycleHook])

    /// Each action's script function (the name its events carry), one per case.
    public enum Name: String, CaseIterable, Sendable {
        case updateModel = "update_model", cancel, manualUpgrade = "manual_upgrade", startOSUpgrade = "start_os_upgrade"
        case releaseImage = "release_image", approveOSUpgrade = "approve_os_upgrade", startExtensionUpgrade = "start_extension_upgrade"
        case scale, reimage, updatePolicy = "update_policy"
        case deleteInstances = "delete_instances", protect, answerHook = "answer_hook"
        case setLifecycleHooks = "set_lifecycle_hooks"
        case restart = "restart_instances", stop = "stop_instances", start = "start_instances"
    }

    /// Which action this is.
    public var name: Name {
        switch self {
        case .updateModel: .updateModel
        case .cancel: .cancel
        case .manualUpgrade: .manualUpgrade
        case .startOSUpgrade: .startOSUpgrade
        case .releaseImage: .releaseImage
        case .approveOSUpgrade: .approveOSUpgrade
        case .startExtensionUpgrade: .startExtensionUpgrade
        case .scale: .scale
        case .reimage: .reimage
        case .updatePolicy: .updatePolicy
        case .deleteInstances: .deleteInstances
        case .protect: .protect
        case .answerHook: .answerHook
        case .setLifecycleHooks: .setLifecycleHooks
        case .restart: .restart
        case .stop: .stop
        case .start: .start
        case .onInstance(_, let action): action.name
        }
    }

    /// The script function that performs the same action (the name its events carry).
    public var scriptName: String { name.rawValue }

    /// Performs the action on `sim` now: the one call every path makes.
    func apply(to sim: Simulation) throws {
        switch self {
        case .updateModel(let changes, let health): try sim.updateModel(changes, healthExtension: health)
        case .cancel: try sim.cancelRollingUpgrade()
        case .manualUpgrade(let ids): try sim.manualUpgrade(ids: ids)
        case .startOSUpgrade(let image): try sim.startOSUpgrade(image: image)
        case .releaseImage(let version): try sim.releasePlatformImage(version: version)
        case .approveOSUpgrade(let ids): try sim.approveOSUpgrade(ids: ids)
        case .startExtensionUpgrade(let version): try sim.startExtensionUpgrade(version: version)
        case .scale(let count): try sim.scale(to: count)
        case .reimage(let ids): try sim.reimage(ids: ids)
        case .updatePolicy(let patch): try sim.updatePolicy(patch)
        case .deleteInstances(let ids): try sim.deleteInstances(ids: ids)
        case .protect(let id, let scaleIn, let actions): try sim.protect(id: id, fromScaleIn: scaleIn, fromScaleSetActions: actions)
        case .answerHook(let event, let response): try sim.answerHook(event: event, response)
        case .setLifecycleHooks(let hooks): try sim.setLifecycleHooks(hooks)
        case .restart(let ids): try sim.restart(ids: ids)
        case .stop(let ids, let deallocate): try sim.stop(ids: ids, deallocate: deallocate)
        case .start(let ids): try sim.start(ids: ids)
        case .onInstance(let id, let action): try action.apply(to: sim, id: id)
        }
    }
}

/// One instance as a snapshot shows it (what `list-instances --expand instanceView` reads).
public struct InstanceView: Equatable, Sendable {
    /// The instance id (0-based, as Azure numbers a Uniform scale set's instances).
    public var id: Int
    /// `<scaleSet>_<id>`.
    public var name: String
    /// Its availability zone; nil in a regional scale set.
    public var zone: String?
    /// `platformFaultDomain`.
    public var faultDomain: Int
    /// `platformUpdateDomain`.
    public var updateDomain: Int
    /// The model version it runs (1 is the first).
    public var modelVersion: Int
    /// Whether it runs the newest model.
    public var latestModelApplied: Bool
    /// Its health as the health extension (or load-balancer probe) last reported it.
    public var health: HealthState
    /// Running, stopped or deallocated, or in an operation (creating, upgrading, rolling back, deleting).
    public var lifecycle: Lifecycle
    /// `protectionPolicy.protectFromScaleIn`.
    public var protectFromScaleIn: Bool
    /// `protectionPolicy.protectFromScaleSetActions`: no upgrade reaches it.
    public var protectFromScaleSetActions: Bool
}

/// A run of a scenario that can be stepped: started like `Rehearsal.run` (a fresh Lua state, the
/// top level run and checked, the simulation made), advanced to a virtual time or to its next
/// event, acted on from outside between steps, read at any moment, and finished into the same
/// `RunRecord` as `Rehearsal.run`, which is this session driven to its end.
///
/// The script's own `at` actions run at their times; an outside action is scheduled on the same
/// timeline at the session's clock and run at once, as a nested `at` would be. Not thread-safe:
/// use it from one task at a time.
public final class RehearsalSession {
    /// The scenario run.
    public let definition: ScenarioDefinition
    /// The run's inputs.
    public let inputs: RunInputs
    /// The run's seed.
    public var seed: UInt64 { inputs.seed }
    /// The Lua session of a Lua program (nil for Swift behaviours).
    private let session: ScriptSession?
    private let simulation: Simulation
    /// What the run's end is checked against (the definition's, or what its top level described
    /// for other parameter values).
    private let expectations: [Expectation]
    /// The scale set run, with the overrides applied.
    public let scaleSet: ScaleSetDefinition
    /// Every event so far, when the definition records events.
    public private(set) var events: [Event] = []
    /// How many rolling upgrades started so far.
    public private(set) var upgrades = 0
    /// The virtual time the outside has reached (ms): at least the time of the last event handled.
    public private(set) var clock: Millis = 0
    private var finished: RunRecord?
    /// The fleet as the run found it, before its first event.
    private let start: FleetStart

    /// Starts a run of `definition` with `inputs`: their overrides change policy fields first.
    /// `printAt` receives what callbacks print with its virtual time; `onEvent` every event as it happens.
    public init(_ definition: ScenarioDefinition, _ inputs: RunInputs,
                printAt: @escaping (Millis, String) -> Void = { _, _ in }, onEvent: @escaping (Event) -> Void = { _ in }) throws(RunFailure) {
        let prepared = try Rehearsal.prepare(definition, inputs, print: printAt)
        self.definition = definition
        self.inputs = inputs
        session = prepared.session
        simulation = prepared.simulation
        scaleSet = prepared.scaleSet
        expectations = prepared.expectations
        start = prepared.simulation.fleetStart
        simulation.markSetup()
        let keep = inputs.recordEvents
        let runtime = session?.runtime
        simulation.onEvent = { [unowned self] event in
            runtime?.observe(event)
            if event.kind == .upgradeStarted { upgrades += 1 }
            if keep { events.append(event) }
            onEvent(event)
        }
    }

    /// Starts a run of `definition` with the default inputs of `seed` and `overrides`.
    public convenience init(_ definition: ScenarioDefinition, seed: UInt64, overrides: [PolicyOverride] = [],
                            printAt: @escaping (Millis, String) -> Void = { _, _ in }, onEvent: @escaping (Event) -> Void = { _ in }) throws(RunFailure) {
        try self.init(definition, RunInputs(seed: seed, overrides: overrides), printAt: printAt, onEvent: onEvent)
    }

    deinit { simulation.onEvent = nil }

    // MARK: Stepping

    /// The virtual time of the last event handled (ms).
    public var now: Millis { simulation.now }

    /// When the next event is due; nil when nothing is left that can change the outcome (the run
    /// would end) or the run has finished.
    public var nextEventTime: Millis? {
        guard finished == nil, let next = simulation.nextEventTime, next <= inputs.timeLimit else { return nil }
        return next
    }

    /// Whether `finish` has ended the run.
    public var isFinished: Bool { finished != nil }

    /// Moves the clock to `time` (never back), handling everything due by then, the probes of an
    /// idle scale set included: the state a script's `at` callback at `time` would see. Events
    /// past the run's time limit are not handled, as `run` handles none.
    /// A time past `ISODuration.longest` (the latest instant) is refused with the clock unchanged.
    @discardableResult
    public func advance(to time: Millis) throws(RunFailure) -> EngineError? {
        guard time <= ISODuration.longest else { return Self.pastLatest(time: time) }
        guard finished == nil else { return nil }
        clock = max(clock, time)
        // Everything before the clock; what is due at the clock itself waits, so that an action
        // performed now runs first at this instant, as a timeline action would.
        let limit = inputs.timeLimit
        do {
            if clock <= limit { try simulation.proceed(before: clock) } else { try simulation.proceed(through: limit, whileWorking: false) }
        } catch {
            throw RunFailure(seed: seed, error: ScenarioError(error))
        }
        return nil
    }

    /// Moves the clock forward by `amount` (ms, not negative), as `advance(to:)` does; refused,
    /// with the clock unchanged, when the sum would pass the latest instant (`ISODuration.longest`,
    /// 10^12 seconds) or `amount` is negative: checked arithmetic, never an overflow.
    @discardableResult
    public func advance(by amount: Millis) throws(RunFailure) -> EngineError? {
        guard let time = ISODuration.later(clock, by: amount) else {
            guard amount >= 0 else { return EngineError("advance refused: \(amount) ms is negative; the clock never goes back", .clockBackwards(amount)) }
            return Self.pastLatest(time: nil, from: clock, by: amount)
        }
        return try advance(to: time)
    }

    /// The refusal of a clock that would pass the latest instant.
    static func pastLatest(time: Millis?, from clock: Millis = 0, by amount: Millis = 0) -> EngineError {
        let asked = time.map { ISODuration.format($0) } ?? "\(ISODuration.format(clock)) + \(ISODuration.format(amount))"
        return EngineError("advance refused: \(asked) is past the latest instant of the virtual clock, \(ISODuration.format(ISODuration.longest)) (10^12 seconds); allowed a time up to it", .pastLatestInstant)
    }

    /// Handles everything due at the next event's time, as `run` would, and moves the clock
    /// there; returns that time, or nil (the clock unchanged) when no work is left. A session
    /// stepped to its end and finished gives the events of `Rehearsal.run`.
    @discardableResult
    public func step() throws(RunFailure) -> Millis? {
        guard let next = nextEventTime else { return nil }
        try proceed(through: next, whileWorking: true)
        // Everything at `next` is handled: the clock stands just after it, where an action
        // performed now runs as a timeline action 1 ms later would.
        clock = max(clock, next + 1)
        return next
    }

    /// Performs `action` now (at `clock`), as a script's `at` callback at that time would, after
    /// handling what was due before it. Returns the engine's refusal, if it refused; the refusal is
    /// also an `actionFailed` event, as for a timeline action.
    @discardableResult
    public func perform(_ action: SessionAction) throws(RunFailure) -> EngineError? {
        try perform([action])
    }

    /// Performs `actions` in order as one step at `clock`, ahead of anything else due at that
    /// instant: the events of timeline actions at `clock` in the same order. The first refusal
    /// stops the step (the actions after it are not performed) and is returned.
    @discardableResult
    public func perform(_ actions: [SessionAction]) throws(RunFailure) -> EngineError? {
        guard let first = actions.first else { return nil }
        guard finished == nil else { return EngineError("\(first.scriptName) refused: the run has finished", .runFinished) }
        let limit = inputs.timeLimit
        guard clock <= limit else {
            return EngineError("\(first.scriptName) refused: the run's time limit of \(ISODuration.format(limit)) has passed", .timeLimitPassed(limit))
        }
        var refusal: EngineError?
        let runtime = session?.runtime, time = clock
        do {
            try simulation.proceed(before: time)
            try simulation.performNow(name: "\(first.scriptName) at \(ISODuration.format(time))") { sim in
                runtime?.now = sim.now
                for action in actions {
                    do {
                        try action.apply(to: sim)
                    } catch let error as EngineError {
                        refusal = error
                        throw error
                    }
                }
            }
        } catch {
            throw RunFailure(seed: seed, error: ScenarioError(error))
        }
        return refusal
    }

    private func proceed(through time: Millis, whileWorking: Bool) throws(RunFailure) {
        do {
            try simulation.proceed(through: time, whileWorking: whileWorking)
        } catch {
            throw RunFailure(seed: seed, error: ScenarioError(error))
        }
    }

    // MARK: Snapshots

    /// The latest rolling upgrade as `get-latest` reports it; nil before the first.
    public var status: RollingUpgradeStatus? { simulation.status }

    /// The lifecycle hook events so far, oldest first (`lifecycleHookEvents` of the scale set).
    public var lifecycleHookEvents: [LifecycleHookEvent] { simulation.lifecycleHookEvents }
    /// The scale set's lifecycle hooks now (the definition's until `set_lifecycle_hooks`).
    public var lifecycleHooks: [LifecycleHook] { simulation.lifecycleHooks }

    /// The OS image upgrades so far, oldest first.
    public var osUpgradeHistory: [OSUpgradeRecord] { simulation.osUpgradeHistory }

    /// The newest model's attributes.
    public var model: [String: String] { simulation.models[simulation.models.count - 1] }
    /// The upgrade policy in effect now (the definition's, or what `updatePolicy` made it).
    public var policy: UpgradePolicy { simulation.policy }

    /// The newest model version (1 is the first).
    public var modelVersion: Int { simulation.modelVersion }

    /// Instances the scale set should have.
    public var capacity: Int { simulation.capacity }

    /// Every instance not deleted, by id.
    public var instances: [InstanceView] {
        let latest = simulation.modelVersion
        return simulation.instances.filter { $0.lifecycle != .deleted }.map { vm in
            InstanceView(id: vm.id, name: vm.name, zone: vm.zone, faultDomain: vm.faultDomain, updateDomain: vm.updateDomain,
                         modelVersion: vm.modelVersion, latestModelApplied: vm.modelVersion == latest, health: vm.health.state,
                         lifecycle: vm.lifecycle, protectFromScaleIn: vm.protectFromScaleIn,
                         protectFromScaleSetActions: vm.protectFromScaleSetActions)
        }
    }

    // MARK: Ending

    /// Drives the run to its end (no work left, or its time limit) and checks its expectations:
    /// the record `Rehearsal.run` gives. Called again, returns the same record.
    public func finish() throws(RunFailure) -> RunRecord {
        if let finished { return finished }
        defer { simulation.onEvent = nil }
        let summary: RunSummary
        do {
            summary = try simulation.run(until: inputs.timeLimit)
        } catch {
            throw RunFailure(seed: seed, error: ScenarioError(error))
        }
        let instances = simulation.instanceOutcomes
        let expectations = self.expectations.flatMap { $0.results(summary: summary, upgrades: upgrades, instances: instances) }
        let record = RunRecord(seed: seed, policy: simulation.policy, events: events, summary: summary, instances: instances,
                               upgrades: upgrades, expectations: expectations, start: start,
                               orchestration: simulation.definition.orchestration)
        finished = record
        return record
    }
}
