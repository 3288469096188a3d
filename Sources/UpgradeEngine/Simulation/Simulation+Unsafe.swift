import CMemoryHints
import Formats

// Every unsafe construct of UpgradeEngine lives in this file: the simulation's stored state
// (some of it without dynamic exclusivity checks), the instances lent to a health source by
// address, and the probe run's buffers. Each use says why it is safe and what it buys; the
// figures are `rehearse-bench engine`'s (release build, 2-core machine).

/// A discrete-event simulation of one scale set on a virtual clock. The same definition,
/// behaviours and actions give the same events, byte for byte. Its state is split by concern
/// (`Simulation+State.swift`) and its behaviour lives in the `Simulation+…` extensions; this
/// declaration holds only the stored parts.
///
/// Not thread-safe; run it on one thread. Every stored part but `definition` is
/// `@exclusivity(unchecked)`: each is only touched by this class's own methods on one thread,
/// never modified while a behaviour (health, phase, fault) or an action callback that could
/// reach it runs (scripts' actions are refused inside callbacks), and the rolling upgrade,
/// changed in place by `drive`, reads the fleet but never `upgrades`; the engine, scenario and
/// serve tests pass with every check on. Measured with `rehearse-bench engine`: with checks on
/// all of them run10k_ns_per_probe goes from 17 to 22 (`scenario`: 266 to 276 ns a call); the
/// per-probe parts (`setup`, `fleet`, `clock`, `probes`, `counters`) carry nearly all of that,
/// the per-event ones (`upgrades`, `script`, `meter`) about 0.4 ns a probe.
public final class Simulation {
    /// The scale set simulated.
    public let definition: ScaleSetDefinition
    /// The run's bounds, the scenario's behaviours and who is told what happens.
    @exclusivity(unchecked) var setup: RunSetup
    /// The scale set now: instances and placement, models, capacity, policy, operations in flight.
    @exclusivity(unchecked) var fleet: Fleet
    /// The virtual clock and what is scheduled on it.
    @exclusivity(unchecked) var clock = Clock()
    /// The probe scheduler's state: the plan, generations, last verdicts, the run buffers.
    @exclusivity(unchecked) var probes: ProbeScheduler
    /// What the run has counted (events, probes, tokens, warnings, the limit reached).
    @exclusivity(unchecked) var counters = Counters()
    /// The upgrade driver's state: the latest rolling upgrade, the one asked for, past OS upgrades.
    @exclusivity(unchecked) var upgrades = UpgradeDriver()
    /// The actions on the timeline and how many have yet to run.
    @exclusivity(unchecked) var script = ScheduledActions()
    /// Serving instances over time.
    @exclusivity(unchecked) var meter = AvailabilityMeter()
    /// Lifecycle hooks: the profile, the events raised, the answers held (SPEC §6b).
    @exclusivity(unchecked) var hooks: HookState
    /// Automatic instance repairs: who is unhealthy since when, the grace's start, the repairs running.
    @exclusivity(unchecked) var repairs = RepairState()

    /// The state before any instance exists; `init(_:health:phases:faults:deferrals:)` builds the
    /// fleet after it.
    init(validated definition: ScaleSetDefinition, plan: ProbePlan, setup: RunSetup) {
        self.definition = definition
        self.setup = setup
        probes = ProbeScheduler(plan: plan)
        hooks = HookState(profile: definition.lifecycleHooks)
        fleet = Fleet(spreader: Spreader(zones: definition.zones, faultDomains: definition.effectiveFaultDomains,
                                         updateDomains: definition.effectiveUpdateDomains),
                      models: [definition.model], capacity: definition.capacity, policy: definition.policy)
    }
}

/// An instance the engine lends to a health source for one call, read in place: passing the
/// instance itself would copy it (and retain its strings) once per probe, the hot path's main
/// cost at 100,000 instances. Valid only during the call it is passed to; do not keep it.
public struct LentInstance {
    /// The instance's address in the simulation's `instances`, valid for the call: the array is
    /// held by the simulation and not modified while a behaviour runs.
    @usableFromInline let address: UnsafePointer<Instance>

    @usableFromInline init(address: UnsafePointer<Instance>) { self.address = address }

    /// The instance, read where it lies (its fields are read one by one, never copied whole).
    @inlinable public var instance: Instance { unsafeAddress { address } }

    /// Lends a copy of `instance` to `body`, for a caller that holds an instance rather than the
    /// engine's storage (the copy lives for the call).
    @inlinable
    public static func lending<R>(_ instance: borrowing Instance, _ body: (LentInstance) throws -> R) rethrows -> R {
        var copy = copy instance
        return try withUnsafePointer(to: &copy) { try body(LentInstance(address: $0)) }
    }
}

/// The probes of one run as the engine lends them: the ids in order, each one's expected state,
/// and the fleet they index. Valid for the `probe(run:)` call only: the buffers are the
/// simulation's `RunBuffers` (allocated once, freed with it) and the fleet is its `instances`,
/// which nothing modifies while the health source answers.
@usableFromInline
struct LentProbes {
    @usableFromInline let ids: UnsafePointer<Int>
    @usableFromInline let expected: UnsafePointer<HealthState?>
    @usableFromInline let instances: UnsafePointer<Instance>
    /// How many probes; at least 1, at most `RunBuffers.capacity`.
    @usableFromInline let count: Int

}

extension ProbeRun {
    /// The instance of probe number `index` (0 ≤ index < `count`), lent for the call.
    @inlinable public func instance(at index: Int) -> LentInstance {
        precondition(index >= 0 && index < lent.count, "probe index out of the run")
        return lent.instance(at: index)
    }

    /// The state whose answer to probe number `index` changes nothing (nil: any answer ends the run).
    @inlinable public func expected(at index: Int) -> HealthState? {
        precondition(index >= 0 && index < lent.count, "probe index out of the run")
        return lent.expected(at: index)
    }
}



extension LentProbes: RandomAccessCollection {
    /// Probe numbers, from 0.
    @usableFromInline var startIndex: Int { 0 }
    @usableFromInline var endIndex: Int { count }
    /// The id of probe number `index` (below `count`: the engine's own loops stay inside).
    @usableFromInline subscript(index: Int) -> Int { ids[index] }

    /// The instance of probe number `index` (below `count`), lent for the call.
    @usableFromInline func instance(at index: Int) -> LentInstance { LentInstance(address: instances + ids[index]) }

    /// The state whose answer to probe number `index` (below `count`) changes nothing.
    @usableFromInline func expected(at index: Int) -> HealthState? { expected[index] }
}

extension Simulation {
    /// A run's instances, their expected states and, for each, how many queue entries had been
    /// taken when it joined (to put back those after a stop): allocated once, freed with the
    /// simulation (also when its initializer fails, which skips the simulation's deinit). Raw
    /// buffers rather than arrays: a run is gathered for every probe instant, and arrays here
    /// cost a uniqueness check and a bounds check per write in the gathering loop.
    final class RunBuffers {
        /// The longest run: long enough that the engine's work between runs is amortised, short
        /// enough that a probe which ends a run early leaves few to gather again.
        static let capacity = 64
        let ids = UnsafeMutablePointer<Int>.allocate(capacity: RunBuffers.capacity)
        let expected = UnsafeMutablePointer<HealthState?>.allocate(capacity: RunBuffers.capacity)
        let taken = UnsafeMutablePointer<Int>.allocate(capacity: RunBuffers.capacity)

        /// How many queue entries had been taken when entry `index` (below the run's count) joined.
        func taken(at index: Int) -> Int { taken[index] }

        /// Writes entry `index` (below `capacity`, which the gathering loop's allowance ensures).
        func set(_ index: Int, id: Int, expected state: HealthState?, taken count: Int) {
            ids[index] = id
            expected[index] = state
            taken[index] = count
        }

        deinit {
            ids.deallocate()
            expected.deallocate()
            taken.deallocate()
        }
    }

    /// Instance `id` lent by address for one health-source call. The address stays valid through
    /// the call: `instances` is held by the simulation, and a health source cannot act on the
    /// simulation (scripts' actions are refused inside callbacks). Lending instead of passing the
    /// element spares a copy of the instance (and a retain of its strings) per probe.
    func lend(_ id: Int) -> LentInstance {
        fleet.instances.withUnsafeBufferPointer { LentInstance(address: $0.baseAddress! + id) }
    }

    /// Probes instance `id`, due now: in a run when the source answers runs (`runs`) and every
    /// model is probed alike, else alone. `unsafelyUnwrapped`: `runs` is true only when `health`
    /// is not nil, and the source is passed unbound, without the check and the retain and
    /// release a `!` or a binding costs for every run (the source is held by the caller).
    @inline(__always)
    func probeDue(_ id: Int, health: (any HealthSource)?, runs: Bool) throws {
        if runs && probes.plan.uniformProbing {
            try probeRun(id, health: health.unsafelyUnwrapped)
        } else {
            try probe(id, health: health)
        }
    }

    /// The first `count` entries of the run buffers, lent with the fleet for one `probe(run:)`.
    func lendRun(count: Int) -> LentProbes {
        LentProbes(ids: probes.run.ids, expected: probes.run.expected,
                   instances: fleet.instances.withUnsafeBufferPointer { $0.baseAddress! }, count: count)
    }

    /// The bookkeeping of the first `matched` probes of `run`, which each answered the state its
    /// instance is in: what `take` does with such an answer (the probe's verdict kept, the
    /// instance's pending change forgotten), in one pass over the arrays' storage without a
    /// uniqueness or bounds check per element (the ids are the engine's own, below
    /// `instances.count`; neither array changes size meanwhile).
    func settleInPlace(_ run: LentProbes, matched: Int) {
        probes.last.withUnsafeMutableBufferPointer { last in
            fleet.instances.withUnsafeMutableBufferPointer { instances in
                // Written only when they change: most probes find both as they were, and a line
                // not written is not written back (a 100,000-instance fleet does not fit a cache).
                for index in 0..<matched {
                    let id = run.ids[index]
                    let answer = LastProbe(state: run.expected(at: index)!, metrics: nil, metricsDeferred: true)
                    if last[id] != answer { last[id] = answer }
                    if !instances[id].health.isSettled { instances[id].health.confirm() }
                }
            }
        }
    }

    /// Asks for the data of a probe queued later while the run is gathered. A fleet larger than
    /// the caches has each probed instance, last answer and generation in memory; the queue's
    /// order after a few batches (every third id, every fifteenth) is not one the processor
    /// guesses, so each probe would wait for its lines in turn.
    struct ProbeLookahead {
        /// Entries ahead: the loop takes an entry in a few nanoseconds, and a line from memory takes
        /// about a hundred (16 ahead measured 22–23 ns a probe at 100k, 32 and 64 20.6–21).
        static let distance = 32
        let instances: UnsafePointer<Instance>, last: UnsafePointer<LastProbe?>, generations: UnsafePointer<Int>

        /// The arrays' addresses are taken once per run: gathering a run changes only the queue,
        /// so none of them moves or is written meanwhile (as with `lend`'s instance).
        init(instances: [Instance], last: [LastProbe?], generations: [Int]) {
            self.instances = instances.withUnsafeBufferPointer { $0.baseAddress! }
            self.last = last.withUnsafeBufferPointer { $0.baseAddress! }
            self.generations = generations.withUnsafeBufferPointer { $0.baseAddress! }
        }

        /// Prefetches instance `id`'s first 64 bytes (what a probe reads, on at most two lines),
        /// its last answer and its generation. A prefetch never faults and changes no value.
        @inline(__always)
        func prefetch(_ id: Int) {
            rh_prefetch(instances + id)
            rh_prefetch(UnsafeRawPointer(instances + id) + 63)
            rh_prefetch(last + id)
            rh_prefetch(generations + id)
        }
    }
}
