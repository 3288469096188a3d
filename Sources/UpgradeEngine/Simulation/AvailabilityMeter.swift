import Formats

/// Availability accounting: how many instances serve (run and are committed Healthy) and, from
/// the first upgrade activity on, the fewest that did and the capacity lost over time. Kept apart
/// from the simulation so it can be checked with plain numbers.
struct AvailabilityMeter {
    /// Instances serving now.
    private(set) var serving = 0
    /// When upgrade activity began (milliseconds); nil before.
    private(set) var start: Millis?
    /// The last time the lost capacity was added up to (milliseconds).
    private var lastSample: Millis = 0
    /// The fewest serving instances since `start`.
    private var lowest = Int.max
    /// When the fleet first came down to `lowest` (milliseconds).
    private var lowestAt: Millis = 0
    /// The capacity wanted when the fleet first came down to `lowest`: what a share of capacity
    /// kept serving is measured against (a scale-out or scale-in after the low point changes
    /// the capacity at the end, not the dip).
    private var capacityAtLowest = 0
    /// Σ (capacity − serving) × time since `start`, in instance-milliseconds.
    private var unavailable = 0.0

    /// One more instance serves (`+1`) or one fewer (`-1`) at `time` (milliseconds), `capacity`
    /// instances being wanted then.
    @inline(__always)
    mutating func servingChanged(by delta: Int, at time: Millis, capacity: Int) {
        serving += delta
        if start != nil && serving < lowest {
            lowest = serving
            lowestAt = time
            capacityAtLowest = capacity
        }
    }

    /// Adds the capacity lost between the last sample and `time` (milliseconds), `capacity`
    /// instances being wanted meanwhile.
    @inline(__always)
    mutating func advance(to time: Millis, capacity: Int) {
        if start != nil { unavailable += Double(max(0, capacity - serving)) * Double(time - lastSample) }
        lastSample = time
    }

    /// Upgrade activity begins at `time` (milliseconds), `capacity` instances being wanted, if it
    /// had not already.
    mutating func noteActivity(at time: Millis, capacity: Int) {
        guard start == nil else { return }
        start = time
        lastSample = time
        lowest = serving
        lowestAt = time
        capacityAtLowest = capacity
    }

    /// The figures at `now` (milliseconds), or nil when no activity began.
    func availability(at now: Millis) -> Availability? {
        guard let start else { return nil }
        return Availability(lowestHealthy: lowest == Int.max ? serving : lowest, lowestHealthyAt: lowestAt, capacityAtLowest: capacityAtLowest,
                            unavailableInstanceSeconds: unavailable / 1000, timeToFinishSeconds: Double(now - start) / 1000)
    }
}
