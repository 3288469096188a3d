import UpgradeEngine
import XCTest

/// The rolling upgrade keeps its sets of instance ids as bits; they must behave as `Set<Int>`
/// does, with the ids coming out in ascending order.
final class InstanceIDSetTests: XCTestCase {
    /// 200 seeds of 400 random inserts, removes and subtractions over ids 0–2,999 (several
    /// 64-bit words, sets that shrink to empty and grow again), checked against `Set<Int>`.
    func testAgreesWithSetOverManySeeds() {
        for seed in UInt64(1)...200 {
            var state = seed &* 0x9E37_79B9_7F4A_7C15 | 1
            func draw(_ bound: Int) -> Int {
                state ^= state << 13
                state ^= state >> 7
                state ^= state << 17
                return Int(state % UInt64(bound))
            }
            var bits = InstanceIDSet(), reference = Set<Int>()
            let span = [70, 700, 3_000][draw(3)]
            for step in 0..<400 {
                let id = draw(span)
                switch draw(10) {
                case 0..<6:
                    XCTAssertEqual(bits.insert(id), reference.insert(id).inserted, "seed \(seed) step \(step) insert \(id)")
                case 6..<9:
                    XCTAssertEqual(bits.remove(id), reference.remove(id) != nil, "seed \(seed) step \(step) remove \(id)")
                default:
                    let other = (0..<draw(40)).map { _ in draw(span) }
                    bits.subtract(InstanceIDSet(other))
                    reference.subtract(other)
                }
                XCTAssertEqual(bits.count, reference.count, "seed \(seed) step \(step)")
                XCTAssertEqual(bits.contains(id), reference.contains(id))
            }
            XCTAssertEqual(Array(bits), reference.sorted(), "seed \(seed)")
            XCTAssertEqual(bits.isEmpty, reference.isEmpty)
            let superset = InstanceIDSet(reference.union([span + 5]))
            XCTAssertTrue(bits.isSubset(of: superset))
            XCTAssertEqual(superset.isSubset(of: bits), false)
        }
    }

    func testEqualityIgnoresEmptyWordsAndOrderOfInsertion() {
        var a: InstanceIDSet = [3, 64, 200]
        let b = InstanceIDSet([200, 3, 64])
        XCTAssertEqual(a, b)
        a.insert(5_000)
        XCTAssertNotEqual(a, b)
        a.remove(5_000)
        XCTAssertEqual(a, b, "a word left empty at the end still compares equal")
        XCTAssertEqual(Array(a), [3, 64, 200])
        XCTAssertFalse(a.contains(-1))
        XCTAssertFalse(a.contains(1_000_000))
        XCTAssertEqual(Array(InstanceIDSet()), [])
        XCTAssertEqual(Array(InstanceIDSet([0, 63, 64, 127, 128])), [0, 63, 64, 127, 128])
    }
}
