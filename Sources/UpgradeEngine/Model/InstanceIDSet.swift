/// A set of instance ids, one bit per id: ids are small and dense (0, 1, 2, … never reused), so
/// a 100,000-instance fleet's set takes 12.5 KB, membership reads one word, and the ids come out
/// in ascending order (the order events and error details list them in) without a sort.
public struct InstanceIDSet: Equatable, Sendable, Sequence, ExpressibleByArrayLiteral {
    private var words: [UInt64] = []
    /// How many ids are in the set.
    public private(set) var count = 0

    public init() {}

    public init<S: Sequence>(_ ids: S) where S.Element == Int {
        for id in ids { insert(id) }
    }

    public init(arrayLiteral ids: Int...) { self.init(ids) }

    public var isEmpty: Bool { count == 0 }

    public func contains(_ id: Int) -> Bool {
        let word = id >> 6
        return id >= 0 && word < words.count && words[word] & (1 << UInt64(id & 63)) != 0
    }

    /// Adds `id` (not negative); returns whether it was new.
    @discardableResult
    public mutating func insert(_ id: Int) -> Bool {
        precondition(id >= 0, "instance ids are not negative")
        let word = id >> 6, bit: UInt64 = 1 << UInt64(id & 63)
        if word >= words.count { words += repeatElement(0, count: word + 1 - words.count) }
        guard words[word] & bit == 0 else { return false }
        words[word] |= bit
        count += 1
        return true
    }

    /// Takes `id` out; returns whether it was in.
    @discardableResult
    public mutating func remove(_ id: Int) -> Bool {
        guard contains(id) else { return false }
        words[id >> 6] &= ~(1 << UInt64(id & 63))
        count -= 1
        return true
    }

    /// Takes every id of `other` out.
    public mutating func subtract(_ other: InstanceIDSet) {
        for index in 0..<Swift.min(words.count, other.words.count) where words[index] & other.words[index] != 0 {
            count -= (words[index] & other.words[index]).nonzeroBitCount
            words[index] &= ~other.words[index]
        }
    }

    /// Every id of this set is in `other`.
    public func isSubset(of other: InstanceIDSet) -> Bool {
        guard count <= other.count else { return false }
        for (index, word) in words.enumerated() where word != 0 {
            guard index < other.words.count, word & ~other.words[index] == 0 else { return false }
        }
        return true
    }

    /// Equal when the ids are (trailing empty words do not count).
    public static func == (a: InstanceIDSet, b: InstanceIDSet) -> Bool {
        a.count == b.count && a.isSubset(of: b)
    }

    /// The ids in ascending order.
    public func makeIterator() -> Iterator { Iterator(words: words) }

    public struct Iterator: IteratorProtocol {
        let words: [UInt64]
        var index = 0
        var remaining: UInt64 = 0

        init(words: [UInt64]) {
            self.words = words
            remaining = words.first ?? 0
        }

        public mutating func next() -> Int? {
            while remaining == 0 {
                index += 1
                guard index < words.count else { return nil }
                remaining = words[index]
            }
            let bit = remaining.trailingZeroBitCount
            remaining &= remaining - 1
            return index << 6 | bit
        }
    }

    public var underestimatedCount: Int { count }
}
