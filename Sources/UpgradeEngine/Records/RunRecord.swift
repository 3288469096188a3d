/// Why an instance did not end a run on the newest model.
public enum LeftBehind: String, Sendable, CaseIterable {
    /// `protectFromScaleSetActions`: no upgrade touches it.
    case protected
    /// It reported `SkipUpgrade` when the latest rolling upgrade started.
    case skipped
    /// Its upgrade failed, or it was unhealthy once upgraded (the upgrade counted it failed).
    case failed
    /// The latest rolling upgrade stopped (faulted, cancelled, or the time limit) before its batch.
    case notReached
    /// No upgrade covered it: Manual mode without a manual upgrade, or Automatic mode's upgrade
    /// not done yet.
    case notUpgraded
    /// A lifecycle hook event rejected it: skipped for the latest upgrade (SPEC §6b).
    case rejectedByHook
}

/// Where one instance ended a run.
public struct InstanceOutcome: Equatable, Sendable {
    /// The instance id.
    public var id: Int
    /// Its VM name: `<scaleSetName>_<id>` in a Uniform scale set, its own in a Flexible one.
    public var name: String
    /// Its zone; nil in a regional scale set.
    public var zone: String?
    /// Its platform fault domain.
    public var faultDomain: Int = 0
    /// Its platform update domain.
    public var updateDomain: Int = 0
    /// The model version it runs at the end.
    public var modelVersion: Int
    /// Its committed health at the end; Unknown when the model it runs has no health extension
    /// while others of the scale set have one (it has no health state of its own).
    public var health: HealthState
    /// False once it was deleted (scale-in, a MaxSurge batch, a failed creation).
    public var exists: Bool
    /// Why it is not on the newest model; nil when it is, or when it no longer exists.
    public var leftBehind: LeftBehind?
}

/// Everything a run produced, as data: its events in order, its summary, the final state of
/// every instance, and the inputs that decide it (the seed and the policy in effect). Text, JSON
/// and reports are renderings of this; nothing parses them back.
public struct RunRecord: Equatable, Sendable {
    /// The seed of the run's random numbers (`math.random` and every seeded injector).
    public var seed: UInt64
    /// The upgrade policy in effect when the run ended: the definition's, with any overrides
    /// applied, then each `update_policy` of the run.
    public var policy: UpgradePolicy
    /// Every event, in the order they happened (empty when the run did not keep them).
    public var events: [Event]
    /// Status, availability, skipped and protected instances, probes.
    public var summary: RunSummary
    /// Every instance ever created, by id.
    public var instances: [InstanceOutcome]
    /// How many rolling upgrades started.
    public var upgrades: Int
    /// Every key of every expectation, in the order they were written, held or not.
    public var expectations: [ExpectationResult]
    /// The fleet when the run began, before its first event; nil when not kept.
    public var start: FleetStart?
    /// How the scale set orchestrates its VMs: a Flexible one's VMs have names of their own.
    public var orchestration: Orchestration

    /// A record of one run.
    public init(seed: UInt64 = 0, policy: UpgradePolicy = UpgradePolicy(), events: [Event], summary: RunSummary,
                instances: [InstanceOutcome], upgrades: Int = 0, expectations: [ExpectationResult] = [], start: FleetStart? = nil,
                orchestration: Orchestration = .uniform) {
        self.seed = seed
        self.policy = policy
        self.events = events
        self.summary = summary
        self.instances = instances
        self.upgrades = upgrades
        self.expectations = expectations
        self.start = start
        self.orchestration = orchestration
    }

    /// The instances the fleet had at some time in the run: all but an id that was not there at
    /// the start and never came (one an `instances` list skips), which is no deleted instance.
    public var fleetInstances: [InstanceOutcome] {
        guard let versions = start?.versions else { return instances }
        return instances.filter { vm in vm.exists || !versions.indices.contains(vm.id) || versions[vm.id] != nil }
    }

    /// The expectation keys the run did not meet.
    public var failedExpectations: [ExpectationResult] { expectations.filter { !$0.held } }
}

extension Simulation {
    /// Each instance's final state and, when it is not on the newest model, why.
    public var instanceOutcomes: [InstanceOutcome] {
        let skipped = Set(upgrades.current?.skipped ?? []), failed = Set(upgrades.current?.failed ?? [])
        let rejected = Set(upgrades.current?.hookRejected ?? [])
        let newest = modelVersion
        return instances.map { vm in
            let exists = vm.lifecycle != .deleted
            var reason: LeftBehind?
            if exists && vm.modelVersion != newest {
                if vm.protectFromScaleSetActions { reason = .protected }
                else if skipped.contains(vm.id) { reason = .skipped }
                else if rejected.contains(vm.id) { reason = .rejectedByHook }
                else if failed.contains(vm.id) { reason = .failed }
                else if upgrades.current != nil { reason = .notReached }
                else { reason = .notUpgraded }
            }
            return InstanceOutcome(id: vm.id, name: vm.name, zone: vm.zone, faultDomain: vm.faultDomain, updateDomain: vm.updateDomain,
                                   modelVersion: vm.modelVersion,
                                   health: health(of: vm.id), exists: exists, leftBehind: reason)
        }
    }
}

/// The fleet as a run found it: each id's model version (nil for an id that did not exist, such
/// as one an `instances` list skips), and the newest model version then.
public struct FleetStart: Equatable, Sendable {
    /// Per instance id, the model version it ran at the start; nil when it was not there.
    public var versions: [Int?]
    /// The newest model version at the start.
    public var latest: Int

    /// The fleet at the start.
    public init(versions: [Int?], latest: Int) {
        self.versions = versions
        self.latest = latest
    }
}

extension Simulation {
    /// The fleet now, as a run's start: present instances' model versions and the newest one.
    public var fleetStart: FleetStart {
        FleetStart(versions: instances.map { $0.lifecycle == .deleted ? nil : $0.modelVersion }, latest: modelVersion)
    }
}
