public import Formats

/// The simulation's parts, one a concern, each a value with few stored properties: the fleet,
/// the clock and its queue, the probe scheduler, the upgrade driver's state, the actions on the
/// timeline, and the run's setup and counters. The `Simulation+…` extensions act on them.
extension Simulation {
    /// The scale set as it is now: its instances and where they are placed, its model versions,
    /// capacity and policy, and the operations running on instances.
    struct Fleet {
        /// Every instance ever created, by id (deleted ones stay, as `deleted`).
        var instances: [Instance] = []
        /// Where new instances go (zones, fault and update domains).
        var spreader: Spreader
        /// Model attributes by version (version n is `models[n - 1]`).
        var models: [[String: String]]
        /// Instances the scale set should have (changed by `scale`).
        var capacity: Int
        /// The upgrade policy in effect.
        var policy: UpgradePolicy
        /// The operation in flight on each busy instance, by id.
        var operations: [Int: PendingOperation] = [:]
        /// Instances a client restarted or started: the run goes on while one of them runs and
        /// is still Initializing, so its boot is seen.
        var booting: Set<Int> = []
        /// The newest platform image released to the scale set (`releasePlatformImage`), which
        /// an on-demand OS upgrade given no image brings.
        var newestPlatformImage: String?
    }

    /// The virtual clock and what is scheduled on it.
    struct Clock {
        /// Milliseconds since the run started.
        var now: Millis = 0
        /// What is scheduled, by time.
        var queue = EventQueue()
        /// `stop` was called: `run` ends after the current event.
        var stopped = false
    }

    /// How instances of each model version are probed and judged.
    struct ProbePlan {
        /// Milliseconds between two probes of one instance of the first model.
        let interval: Millis
        /// Whether some model has a health source, so instances may be probed at all.
        var probing: Bool
        /// Judges each probe of the first model (the settings' string-free part).
        let judge: ProbeJudge
        /// The Application Health extension of each model version (version n at n - 1; nil: none).
        var extensions: [HealthExtensionSettings?]
        /// How instances of each model version are probed (nil: they report no health).
        var byVersion: [ProbeConfig?]
        /// Every model version is probed as the first: the hot path reads `judge` and
        /// `interval` without looking at the instance's model.
        var uniformProbing = true
        /// Judge custom metrics sent as an object as Azure's extension does (Unknown).
        var strictWire = false
    }

    /// The probe scheduler's state: the plan, and per instance the generation that invalidates
    /// stale scheduled probes and the last verdict, whose metrics a rolling upgrade reads when it
    /// starts.
    struct ProbeScheduler {
        var plan: ProbePlan
        var generation: [Int] = []
        var last: [LastProbe?] = []
        /// Whether runs are asked for at all (tests compare with one probe at a time).
        var runs = true
        /// Room for the run being gathered for a source that answers runs (`probeRun`).
        let run = RunBuffers()
        /// The last HTTP answer judged and its verdict: the same status and body again (a script
        /// returning one 64 KiB body on every probe) is not parsed again.
        var lastHTTP: (status: Int, body: String, strictWire: Bool, judge: ProbeJudge, result: ProbeResult)?
    }

    /// What the engine keeps of an instance's last probe: plain values, so storing one per probe
    /// releases nothing.
    struct LastProbe: Equatable {
        let state: HealthState
        let metrics: CustomMetrics?
        let metricsDeferred: Bool
    }

    /// The upgrade driver's state: the latest rolling upgrade, the one asked for while it runs,
    /// and the OS upgrades it superseded (`Simulation+Rolling.swift` performs their steps).
    struct UpgradeDriver {
        /// A rolling upgrade asked for, waiting for the running one's operations to finish.
        struct Request {
            var reason: String
            var os: OSUpgradeTerms?
        }

        /// The latest rolling upgrade (changed only by `start` and `update`).
        private(set) var current: RollingUpgrade?
        /// `current` in plain values (what the run loop and the probe path ask of it before every
        /// event or health change), refreshed after each change of it.
        private(set) var outline = RollingOutline()
        /// Rolling upgrades started so far (the latest's number).
        var count = 0
        var pending: Request?
        /// The run's OS image upgrades before the latest rolling upgrade, oldest first: each was
        /// superseded, and moves no more, when a later upgrade started.
        var pastOSUpgrades: [RollingUpgrade] = []
        /// Every OS image upgrade of the run, oldest first (its history): the past ones and the
        /// latest upgrade, if it is one.
        var osUpgrades: [RollingUpgrade] {
            guard let current, current.os != nil else { return pastOSUpgrades }
            return pastOSUpgrades + [current]
        }

        /// `run` becomes the latest upgrade; the one it supersedes, if an OS upgrade, joins the
        /// history.
        mutating func start(_ run: RollingUpgrade) {
            if let superseded = current, superseded.os != nil { pastOSUpgrades.append(superseded) }
            current = run
            refreshOutline()
        }

        /// Hands an input to the latest upgrade (if any) and returns the steps it asks for.
        mutating func update(_ input: (inout RollingUpgrade) -> [RollingStep]) -> [RollingStep] {
            guard current != nil else { return [] }
            let steps = input(&current!)
            refreshOutline()
            return steps
        }

        /// Read through the optional, not bound to a name: a binding copies the upgrade.
        private mutating func refreshOutline() {
            outline = current?.outline ?? RollingOutline()
        }
    }

    /// The run's bounds, the scenario's behaviours and who is told what happens.
    struct RunSetup {
        var limits = RunLimits()
        /// The behaviours the scenario gave: health answers, phases, operation faults, deferrals.
        let behaviours: Behaviours
        /// Who is told what happens.
        var observers = Observers()
    }

    /// The scenario's behaviours; nil where it gave none.
    struct Behaviours {
        let health: (any HealthSource)?
        let phases: (any PhaseSource)?
        let faults: (any FaultInjector)?
        let deferrals: (any DeferralSource)?
    }

    /// The callbacks told of events and of each rolling upgrade's plan.
    struct Observers {
        var onEvent: ((Event) -> Void)?
        var onRollingUpgradeStart: ((UpgradePlan) -> Void)?
    }

    /// Actions from outside on the timeline, by index; `left` have not run yet.
    struct ScheduledActions {
        var list: [(name: String, body: (Simulation) throws -> Void)] = []
        var left = 0
    }

    /// What the run has counted, for its limits and its summary.
    struct Counters {
        var events = 0
        var probes = 0
        /// Operation tokens handed out (a finished operation's event must carry the current one).
        var operationTokens = 0
        /// Wire warnings already given, by instance and kind.
        var warned: Set<String> = []
        /// The first run-level limit reached; the run ends after the event being handled.
        var limitReached: RunLimitExceeded?
    }

    // MARK: The fleet's and the clock's public face

    /// Every instance ever created, by id (deleted ones stay, as `deleted`).
    public var instances: [Instance] { fleet.instances }
    /// Model attributes by version (version n is `models[n - 1]`).
    public internal(set) var models: [[String: String]] {
        get { fleet.models }
        set { fleet.models = newValue }
    }
    /// Instances the scale set should have (capacity, changed by `scale`).
    public internal(set) var capacity: Int {
        get { fleet.capacity }
        set { fleet.capacity = newValue }
    }
    /// The upgrade policy in effect: the definition's, then each `updatePolicy`'s (a rolling
    /// upgrade keeps the policy it started with).
    public internal(set) var policy: UpgradePolicy {
        get { fleet.policy }
        set { fleet.policy = newValue }
    }
    /// The virtual clock, in milliseconds.
    public internal(set) var now: Millis {
        get { clock.now }
        set { clock.now = newValue }
    }
}
