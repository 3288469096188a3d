/// The seeds of a sweep: `0..999` (both ends included) or one seed, `7`.
public struct SeedRange: Equatable, Sendable, CustomStringConvertible {
    /// The first seed.
    public var first: UInt64
    /// The last seed, included.
    public var last: UInt64

    /// Seeds `first` through `last`.
    public init(_ first: UInt64, _ last: UInt64) {
        self.first = first
        self.last = last
    }

    /// Reads `A..B` or `N`; nil when it is neither or `B` is below `A`.
    public init?(parsing text: String) {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        if parts.count == 1, let n = UInt64(parts[0]) {
            self.init(n, n)
        } else if parts.count == 3, parts[1].isEmpty, let a = UInt64(parts[0]), let b = UInt64(parts[2]), a <= b {
            self.init(a, b)
        } else {
            return nil
        }
    }

    /// How many seeds.
    public var count: Int { Int(clamping: last - first) + 1 }

    public var description: String { first == last ? "\(first)" : "\(first)..\(last)" }

    /// The seeds in order, or those of one shard: the `index`-th of every `count` (interleaved,
    /// so every shard gets early and late seeds alike).
    public func seeds(shard: Shard? = nil) -> [UInt64] {
        let all = stride(from: first, through: last, by: 1)
        guard let shard else { return Array(all) }
        return all.enumerated().filter { $0.offset % shard.count == shard.index - 1 }.map(\.element)
    }
}

/// One part of a sweep split over machines: `I/N`, 1-based.
public struct Shard: Equatable, Sendable, CustomStringConvertible {
    /// Which part, 1 through `count`.
    public var index: Int
    /// How many parts.
    public var count: Int

    /// Part `index` of `count`.
    public init(index: Int, count: Int) {
        self.index = index
        self.count = count
    }

    /// Reads `I/N` with 1 ≤ I ≤ N; nil otherwise.
    public init?(parsing text: String) {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, let i = Int(parts[0]), let n = Int(parts[1]), n >= 1, (1...n).contains(i) else { return nil }
        self.init(index: i, count: n)
    }

    public var description: String { "\(index)/\(count)" }
}
