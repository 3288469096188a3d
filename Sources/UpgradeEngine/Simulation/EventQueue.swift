import Formats

/// What the simulation has scheduled. Numbers are 32-bit (ids, generations and tokens stay far
/// below 2³¹ under the run's limits) so an entry takes 12 bytes: a large fleet's probe queue is
/// read and written once per probe, from memory.
enum Scheduled: Sendable {
    /// Probe instance `id` if its probe generation is still `generation`.
    case probe(id: Int32, generation: Int32)
    /// The result of instance `id`'s unanswered probe arrives (30 s after it started), if its
    /// probe generation is still `generation`; its next probe starts then.
    case probeTimedOut(id: Int32, generation: Int32)
    /// Operation `token` on instance `id` ends.
    case operationDone(id: Int32, token: Int32)
    /// Scenario action number `index`.
    case action(index: Int32)
    /// Rolling upgrade number `upgrade` ends its pause between batches.
    case resume(upgrade: Int32)
    /// Rolling upgrade number `upgrade` was cancelled: its current batch settles without waiting
    /// for health once its operations have ended.
    case settle(upgrade: Int32)
    /// A deferral of instance `id`'s OS upgrade in upgrade number `upgrade` ends.
    case approve(upgrade: Int32, id: Int32)
    /// Lifecycle hook event number `event` reaches its `waitUntil`, if that is still now.
    case hookDeadline(event: Int32)
    /// A delayed answer to a lifecycle hook event (number `index` of those held) arrives.
    case hookAnswer(index: Int32)
    /// Automatic instance repairs look for instances whose grace period has ended.
    case repairCheck

    static func probe(_ id: Int, generation: Int) -> Scheduled { .probe(id: Int32(id), generation: Int32(truncatingIfNeeded: generation)) }
}

/// Scheduled things by (time, order of scheduling): ties run in the order they were scheduled,
/// which keeps runs reproducible. Probes of many instances share instants, so entries are kept
/// in one FIFO bucket per instant and only the distinct instants are in a min-heap.
struct EventQueue {
    private var times: [Millis] = []
    private var buckets: [Millis: Bucket] = [:]
    private var current: Bucket?
    private var currentTime: Millis = .min
    /// The bucket scheduled into last, kept out of the dictionary while it is in use: probes
    /// re-schedule themselves one interval ahead, one after another, into the same bucket.
    private var tail: Bucket?
    private var tailTime: Millis = .min

    private struct Bucket {
        var items: [Scheduled] = []
        var next = 0
    }

    var isEmpty: Bool { nextTime == nil }

    var nextTime: Millis? {
        if let current, current.next < current.items.count { return currentTime }
        return times.first
    }

    mutating func schedule(_ what: Scheduled, at time: Millis) {
        if time == currentTime, current != nil {
            current!.items.append(what)
            return
        }
        makeTail(time)
        tail!.items.append(what)
    }

    /// Entries scheduled before the run started, by instant (`markSetup`): the first probes and
    /// the timeline, which keep their place ahead of an action from outside at their instant.
    private var setup: [Millis: Int] = [:]

    /// Notes what is scheduled now as the run's setup.
    mutating func markSetup() {
        setup = [:]
        for (time, bucket) in buckets { setup[time] = bucket.items.count }
        if let tail { setup[tailTime] = tail.items.count }
        if let current { setup[currentTime] = current.items.count }
    }

    /// Schedules `what` at `time` where a timeline action at `time` would be: after the setup's
    /// entries at that instant and anything already handled, ahead of everything else there.
    mutating func scheduleFirst(_ what: Scheduled, at time: Millis) {
        if time == currentTime, current != nil {
            current!.items.insert(what, at: max(current!.next, setup[time] ?? 0))
            return
        }
        makeTail(time)
        tail!.items.insert(what, at: max(tail!.next, setup[time] ?? 0))
    }

    /// Schedules a probe of each of `ids` at `time`, in their order, as many `schedule` calls
    /// would; `generations[id]` is each one's probe generation.
    mutating func scheduleProbes(_ ids: some Sequence<Int>, generations: [Int], at time: Millis) {
        if time == currentTime, current != nil {
            Self.append(ids, generations, to: &current!.items)
        } else {
            // A new bucket is sized for the instant being handled: its probes come back one
            // interval later, so a large fleet's next bucket does not grow by doubling (copying).
            makeTail(time, room: current?.items.count ?? 0)
            Self.append(ids, generations, to: &tail!.items)
        }
    }

    private static func append(_ ids: some Sequence<Int>, _ generations: [Int], to items: inout [Scheduled]) {
        for id in ids { items.append(.probe(id, generation: generations[id])) }
    }

    /// Makes the bucket of `time` the tail bucket; a new one gets room for `room` entries.
    private mutating func makeTail(_ time: Millis, room: Int = 0) {
        if time == tailTime, tail != nil { return }
        parkTail()
        if let existing = buckets.removeValue(forKey: time) {
            tail = existing
        } else {
            tail = Bucket()
            tail!.items.reserveCapacity(room)
            push(time)
        }
        tailTime = time
    }

    /// Puts the tail bucket back into the dictionary.
    private mutating func parkTail() {
        if let parked = tail {
            buckets[tailTime] = parked
            tail = nil
            tailTime = .min
        }
    }

    mutating func pop() -> (time: Millis, what: Scheduled)? {
        if current == nil || current!.next >= current!.items.count {
            guard let time = popTime() else {
                current = nil
                return nil
            }
            if time == tailTime, tail != nil {
                current = tail
                tail = nil
                tailTime = .min
            } else {
                current = buckets.removeValue(forKey: time)
            }
            currentTime = time
        }
        let what = current!.items[current!.next]
        current!.next += 1
        return (currentTime, what)
    }

    /// Takes the next entry if it is a probe due at the instant of the last `pop`.
    mutating func popProbe() -> (id: Int, generation: Int32)? {
        guard current != nil, current!.next < current!.items.count,
              case .probe(let id, let generation) = current!.items[current!.next] else { return nil }
        current!.next += 1
        return (Int(id), generation)
    }

    /// The id of the probe `distance` entries after the next one at this instant, if there is one.
    mutating func probeID(ahead distance: Int) -> Int? {
        guard current != nil, current!.next + distance < current!.items.count,
              case .probe(let id, _) = current!.items[current!.next + distance] else { return nil }
        return Int(id)
    }

    /// Puts back the last `count` entries taken by `popProbe` (nothing else taken since).
    mutating func unpop(_ count: Int) {
        guard count > 0 else { return }
        current!.next -= count
    }

    private mutating func push(_ time: Millis) {
        times.append(time)
        var i = times.count - 1
        while i > 0 {
            let parent = (i - 1) / 2
            guard times[i] < times[parent] else { break }
            times.swapAt(i, parent)
            i = parent
        }
    }

    private mutating func popTime() -> Millis? {
        guard let first = times.first else { return nil }
        let last = times.removeLast()
        if !times.isEmpty {
            times[0] = last
            var i = 0
            while true {
                let l = 2 * i + 1, r = l + 1
                var best = i
                if l < times.count && times[l] < times[best] { best = l }
                if r < times.count && times[r] < times[best] { best = r }
                if best == i { break }
                times.swapAt(i, best)
                i = best
            }
        }
        return first
    }
}
