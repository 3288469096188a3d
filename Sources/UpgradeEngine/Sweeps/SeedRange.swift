public import Formats

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

    /// The most seeds one sweep (and so one merge, and each combination of a comparison) takes:
    /// a sweep keeps a digest of every run, so a range is refused above this rather than listed.
    public static let mostSeeds = 1_000_000

    /// How many seeds (`Int.max` for a range wider than that, which `checked` refuses).
    public var count: Int { last - first >= UInt64(Int.max) ? Int.max : Int(last - first) + 1 }

    /// This range when it holds at most `mostSeeds` seeds; otherwise the refusal, naming `field`.
    public func checked(field: String) throws(NumberOutOfRange) -> SeedRange {
        guard last - first < UInt64(Self.mostSeeds) else {
            throw NumberOutOfRange(field: field, value: description,
                                   allowed: "a range of at most \(Self.mostSeeds) seeds (A..B with B − A < \(Self.mostSeeds))")
        }
        return self
    }

    /// Whether `seed` is one of these seeds.
    public func contains(_ seed: UInt64) -> Bool { first <= seed && seed <= last }

    public var description: String { first == last ? "\(first)" : "\(first)..\(last)" }

    /// The seeds in order, or those of one shard: the `index`-th of every `count` (interleaved,
    /// so every shard gets early and late seeds alike).
    /// Only for a range `checked` accepts: the list is made, one seed at a time. A shard past
    /// the last seed (`--seeds 0..1 --shard 3/3`) has none.
    public func seeds(shard: Shard? = nil) -> [UInt64] {
        let shard = shard ?? Shard(index: 1, count: 1)
        let start = UInt64(shard.index - 1), step = UInt64(shard.count)
        guard start <= last - first else { return [] }
        return stride(from: start, through: last - first, by: Int(step)).map { first + $0 }
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
