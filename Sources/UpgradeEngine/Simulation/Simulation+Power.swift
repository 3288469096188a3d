import Formats

/// Power actions on chosen instances, as Azure's restart, power off (`az vmss stop`), deallocate
/// and start give them. A restart boots a running instance again on the model it runs: health
/// Initializing at once, probed from that instant (no operation, no model change). A stopped or
/// deallocated instance stays in the scale set but serves nothing and reports no health: Unknown,
/// which every threshold counts as unhealthy (SPEC §3); rolling batches, reimages and manual or
/// automatic upgrades pass it over, and automatic repairs leave it alone, until a start boots it.
///
/// `ids` nil is the whole scale set: instances protected from scale set actions are spared. Named
/// ids are refused whole when one does not exist or is protected (the text a reimage gets), unless
/// the call is made on the one instance itself (`onInstance`: Azure's per-VM restart, power off,
/// deallocate, start), which protection from scale set actions does not block; a repeated id is
/// one instance; an instance busy with an operation, or already in the state asked
/// for, is left as it is.
extension Simulation {
    /// Restarts the running instances of `ids` (nil: every instance).
    public func restart(ids: [Int]?, onInstance: Bool = false) throws {
        let (named, targets) = try powerTargets(ids, action: "restart", onInstance: onInstance) { $0.lifecycle == .running }
        emit(.restart(ids: named, restarting: targets.count))
        for id in targets { boot(id) }
    }

    /// Powers off (`deallocate` false: stopped, still allocated) or deallocates the instances of
    /// `ids` (nil: every instance); a stopped instance may be deallocated.
    public func stop(ids: [Int]?, deallocate: Bool, onInstance: Bool = false) throws {
        let state: Lifecycle = deallocate ? .deallocated : .stopped
        let (named, targets) = try powerTargets(ids, action: deallocate ? "deallocate" : "power off", onInstance: onInstance) {
            $0.lifecycle == .running || (deallocate && $0.lifecycle == .stopped)
        }
        emit(.stop(ids: named, deallocate: deallocate, stopping: targets.count))
        for id in targets {
            stopProbing(id)
            updateInstance(id) { vm in
                vm.lifecycle = state
                vm.health.powerOff()
            }
            repairsSawHealth(id)
        }
    }

    /// Starts the stopped or deallocated instances of `ids` (nil: every instance): each boots.
    public func start(ids: [Int]?, onInstance: Bool = false) throws {
        let (named, targets) = try powerTargets(ids, action: "start", onInstance: onInstance) { $0.isPoweredOff }
        emit(.start(ids: named, starting: targets.count))
        for id in targets { boot(id) }
    }

    /// The ids as named (each once; nil for the whole set) and, ascending, the instances the
    /// action reaches: present, not busy, unprotected when the whole set is meant, and `eligible`.
    private func powerTargets(_ ids: [Int]?, action: String, onInstance: Bool, eligible: (Instance) -> Bool) throws -> (named: [Int]?, targets: [Int]) {
        let named = ids.map(Self.distinct)
        if let named { try refuseMissingOrProtected(named, action: action, onInstance: onInstance) }
        let chosen = named ?? presentInstances.filter { !$0.protectFromScaleSetActions }.map(\.id)
        let targets = chosen.filter { fleet.instances[$0].isPresent && fleet.operations[$0] == nil && eligible(fleet.instances[$0]) }
        return (named, targets.sorted())
    }

    /// Instance `id` (re)starts: running, Initializing now, probed from now; the run goes on
    /// until its health leaves Initializing.
    private func boot(_ id: Int) {
        noteActivity()
        stopProbing(id)
        updateInstance(id) { vm in
            vm.lifecycle = .running
            vm.health.restart(at: now)
        }
        repairsSawHealth(id)
        fleet.booting.insert(id)
        startProbing(id)
    }

    /// Whether an instance a client restarted or started still runs and is Initializing (the
    /// ones that left it are forgotten).
    var isBooting: Bool {
        guard !fleet.booting.isEmpty else { return false }
        return fleet.booting.contains { fleet.instances[$0].lifecycle == .running && fleet.instances[$0].health.state == .initializing }
    }
}
