/// What the simulation has scheduled.
enum Scheduled: Sendable {
    /// Probe instance `id` if its probe generation is still `generation`.
    case probe(id: Int, generation: Int)
    /// Operation `token` on instance `id` ends.
    case operationDone(id: Int, token: Int)
    /// Grace ends for instance `id` if it still started at `startedAt`.
    case graceExpiry(id: Int, startedAt: Millis)
    /// Scenario action number `index`.
    case action(index: Int)
    /// Rolling upgrade number `upgrade` ends its pause between batches.
    case resume(upgrade: Int)
}

/// A min-heap of scheduled things by (time, order of scheduling): ties run in the order they
/// were scheduled, which keeps runs reproducible.
struct EventQueue {
    private struct Entry {
        let time: Millis
        let seq: Int
        let what: Scheduled
        func precedes(_ other: Entry) -> Bool { time != other.time ? time < other.time : seq < other.seq }
    }

    private var heap: [Entry] = []
    private var seq = 0

    var isEmpty: Bool { heap.isEmpty }
    var nextTime: Millis? { heap.first?.time }

    mutating func schedule(_ what: Scheduled, at time: Millis) {
        seq += 1
        heap.append(Entry(time: time, seq: seq, what: what))
        var i = heap.count - 1
        while i > 0 {
            let parent = (i - 1) / 2
            guard heap[i].precedes(heap[parent]) else { break }
            heap.swapAt(i, parent)
            i = parent
        }
    }

    mutating func pop() -> (time: Millis, what: Scheduled)? {
        guard let first = heap.first else { return nil }
        let last = heap.removeLast()
        if !heap.isEmpty {
            heap[0] = last
            var i = 0
            while true {
                let l = 2 * i + 1, r = l + 1
                var best = i
                if l < heap.count && heap[l].precedes(heap[best]) { best = l }
                if r < heap.count && heap[r].precedes(heap[best]) { best = r }
                if best == i { break }
                heap.swapAt(i, best)
                i = best
            }
        }
        return (first.time, first.what)
    }
}
