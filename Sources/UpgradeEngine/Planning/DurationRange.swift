public import Formats

/// How long the parts of a rolling upgrade took in some runs, gathered from their events: for
/// each upgraded instance, the time from its batch's start to its first Healthy answer after the
/// upgrade (the batch's end when it never answered); for each batch, how long after its slowest
/// instance it ended (the probes that confirm health); the time between batches (checks and the
/// pause); and the time from the upgrade's start to its first batch and from its last batch to
/// its end. Only each run's first rolling upgrade counts.
public struct UpgradeTimings: Equatable, Sendable {
    /// Per upgraded instance: from its batch's start to Healthy, in ms.
    public private(set) var toHealthy: [Millis] = []
    /// Per batch: from its slowest instance's Healthy answer to the batch's end, in ms.
    public private(set) var afterSlowest: [Millis] = []
    /// Per pair of batches: from one batch's end to the next one's start, in ms.
    public private(set) var between: [Millis] = []
    /// Per upgrade: from its start to its first batch, in ms.
    public private(set) var lead: [Millis] = []
    /// Per upgrade that ended: from its last batch's end to its end, in ms.
    public private(set) var tail: [Millis] = []
    /// The whole durations of the first upgrades that ended (completed, faulted or cancelled), in ms.
    public private(set) var durations: [Millis] = []

    // The run being observed.
    private var upgradeStart: Millis?
    private var firstUpgradeSeen = false
    private var batchStart: Millis?
    private var lastBatchEnd: Millis?
    private var members: [Int: Millis?] = [:]
    private var upgraded: Set<Int> = []

    /// No samples yet.
    public init() {}

    /// Instances measured so far.
    public var instances: Int { toHealthy.count }

    /// Whether the run being observed has seen its first rolling upgrade end.
    public var upgradeEnded: Bool { firstUpgradeSeen && upgradeStart == nil }

    /// Starts observing another run.
    public mutating func nextRun() {
        upgradeStart = nil
        firstUpgradeSeen = false
        batchStart = nil
        lastBatchEnd = nil
        members = [:]
        upgraded = []
    }

    /// Takes what `event` says of the first rolling upgrade of the run observed.
    public mutating func observe(_ event: Event) {
        switch event.payload {
        case .upgradeStarted:
            guard !firstUpgradeSeen else { return }
            firstUpgradeSeen = true
            upgradeStart = event.time
        case .upgradeCompleted, .upgradeFaulted, .upgradeCancelled:
            guard let start = upgradeStart else { return }
            if let lastBatchEnd, batchStart == nil { tail.append(event.time - lastBatchEnd) }
            durations.append(event.time - start)
            upgradeStart = nil
        case .batchStarted(let ids, _):
            guard let start = upgradeStart else { return }
            if let lastBatchEnd { between.append(event.time - lastBatchEnd) } else { lead.append(event.time - start) }
            batchStart = event.time
            members = Dictionary(uniqueKeysWithValues: Set(ids).map { ($0, nil) })
            upgraded = []
        case .operationFinished(_, _, true):
            if batchStart != nil, let id = event.instance, members[id] != nil { upgraded.insert(id) }
        case .healthChanged(_, .healthy, _):
            guard let started = batchStart, let id = event.instance, upgraded.contains(id), case .some(nil) = members[id] else { return }
            members[id] = event.time - started
        case .batchFinished:
            guard let started = batchStart else { return }
            let took = event.time - started
            let answered = members.values.map { $0 ?? took }
            toHealthy += answered.sorted()
            afterSlowest.append(max(0, took - (answered.max() ?? took)))
            batchStart = nil
            lastBatchEnd = event.time
        default:
            return
        }
    }

    /// The duration of an upgrade of batches of `sizes` instances, `trials` times, each instance,
    /// batch end, gap and end drawn from the samples (a gap without samples is `pause`; an end
    /// without samples is 0): each batch waits for its slowest instance. Nil without an instance
    /// sample. Deterministic for a `seed`; every sum saturates at `ISODuration.longest`. The
    /// durations come back ascending.
    public func simulate(batches sizes: [Int], pause: Millis, trials: Int, seed: UInt64) -> [Millis]? {
        guard !toHealthy.isEmpty, !sizes.isEmpty, trials > 0 else { return nil }
        var random = SplitMix(state: seed)
        func draw(_ samples: [Millis], or fallback: Millis) -> Millis {
            samples.isEmpty ? fallback : samples[Int(random.next() % UInt64(samples.count))]
        }
        let longest = ISODuration.longest
        var totals: [Millis] = []
        totals.reserveCapacity(trials)
        for _ in 0..<trials {
            var total = draw(lead, or: 0)
            for (i, size) in sizes.enumerated() {
                var slowest: Millis = 0
                for _ in 0..<max(1, size) { slowest = max(slowest, draw(toHealthy, or: 0)) }
                total = CheckedNumber.sum(total, slowest, atMost: longest)
                total = CheckedNumber.sum(total, draw(afterSlowest, or: 0), atMost: longest)
                if i > 0 { total = CheckedNumber.sum(total, draw(between, or: pause), atMost: longest) }
            }
            totals.append(CheckedNumber.sum(total, draw(tail, or: 0), atMost: longest))
        }
        return totals.sorted()
    }

    /// The `p`-th percentile (0–100) of ascending `sorted` by the nearest-rank method, as the
    /// sweeps take it: a value some upgrade showed. Nil when empty.
    public static func percentile(_ sorted: [Millis], _ p: Double) -> Millis? {
        guard !sorted.isEmpty else { return nil }
        let rank = Int((p / 100 * Double(sorted.count)).rounded(.up))
        return sorted[min(max(rank, 1), sorted.count) - 1]
    }
}

/// SplitMix64: the draws of `UpgradeTimings.simulate`, the same for the same seed everywhere.
private struct SplitMix {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
