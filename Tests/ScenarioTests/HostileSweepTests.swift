import Foundation
import LuaHost
import Formats
import Scenario
import UpgradeEngine
import XCTest

/// Sweeps, merge parts and the numbers they carry, made hostile, on typed values: the one
/// checked conversion, seed ranges and shards, the threads a sweep takes, merge conflicts, and
/// the lowest failing seed whatever the jobs.
final class HostileSweepTests: XCTestCase {
    // MARK: The one checked conversion

    func testCheckedWholeNumbersRefuseWhatIntCannotHold() throws {
        for value in [Double.nan, .infinity, -.infinity, 1e300, 9.3e18, 0.5] {
            XCTAssertThrowsError(try CheckedNumber.whole(value, field: "f", in: 0...Int.max)) { error in
                XCTAssertEqual((error as? NumberOutOfRange)?.field, "f")
            }
        }
        XCTAssertEqual(try CheckedNumber.whole(3.0, field: "f", in: 0...3), 3)
        XCTAssertThrowsError(try CheckedNumber.whole(4.0, field: "f", in: 0...3))
        XCTAssertThrowsError(try CheckedNumber.whole(Int.max, field: "--max-probes", in: 1...CheckedNumber.largestCount))
        XCTAssertThrowsError(try CheckedNumber.whole("9223372036854775808", field: "f", in: 0...Int.max))
        XCTAssertThrowsError(try CheckedNumber.finite(.infinity, field: "f", in: 0...1))
        XCTAssertEqual(CheckedNumber.clampedWhole(1e300), CheckedNumber.largestCount)
        XCTAssertEqual(CheckedNumber.clampedWhole(.nan), 0)
    }

    func testSumsAndProductsOfAllowedValuesStopAtTheirCeiling() {
        XCTAssertEqual(CheckedNumber.product(9_999, ISODuration.longest, atMost: ISODuration.longest), ISODuration.longest)
        XCTAssertEqual(CheckedNumber.product(Int.max, 2, atMost: Int.max), Int.max)
        XCTAssertEqual(CheckedNumber.sum(Int.max, 1, atMost: Int.max), Int.max)
        XCTAssertEqual(CheckedNumber.product(6, 7, atMost: 100), 42)
    }

    func testTheLongestDurationIsReadAndOneMoreDayIsNot() throws {
        XCTAssertEqual(try ISODuration.parse("P11574074D").get(), 11_574_074 * 86_400_000)
        XCTAssertThrowsError(try ISODuration.parse("P11574075D").get())
        XCTAssertThrowsError(try ISODuration.parse("P1e300D").get())
    }

    // MARK: Seed ranges and shards

    func testSeedRangesAboveTheCapAreRefusedWithoutListing() throws {
        let whole = try XCTUnwrap(SeedRange(parsing: "0..18446744073709551615"))
        XCTAssertEqual(whole.count, Int.max)
        XCTAssertThrowsError(try whole.checked(field: "--seeds")) { error in
            XCTAssertEqual((error as? NumberOutOfRange)?.field, "--seeds")
        }
        XCTAssertThrowsError(try SeedRange(0, UInt64(SeedRange.mostSeeds)).checked(field: "--seeds"))
        XCTAssertEqual(try SeedRange(5, 5 + UInt64(SeedRange.mostSeeds) - 1).checked(field: "--seeds").count, SeedRange.mostSeeds)
    }

    func testAShardPastTheLastSeedHasNoSeeds() {
        XCTAssertEqual(SeedRange(0, 1).seeds(shard: Shard(index: 3, count: 3)), [])
        XCTAssertEqual(SeedRange(0, 1).seeds(shard: Shard(index: 2, count: 3)), [1])
        XCTAssertEqual(SeedRange(10, 20).seeds(shard: Shard(index: 1, count: Int.max)), [10])
        XCTAssertEqual(SeedRange(10, 16).seeds(shard: Shard(index: 2, count: 3)), [11, 14])
    }

    func testASweepTakesNoMoreThreadsThanSeedsCoresOrMemory() {
        let cores = ProcessInfo.processInfo.activeProcessorCount
        XCTAssertEqual(SweepCapacity.threads(jobs: 3000, seeds: 1), 1)
        XCTAssertLessThanOrEqual(SweepCapacity.threads(jobs: 3000, seeds: 1000), cores)
        XCTAssertEqual(SweepCapacity.threads(jobs: 1, seeds: 1000), 1)
        XCTAssertEqual(SweepCapacity.threads(jobs: 5, seeds: 0), 1)
    }

    // MARK: Merge parts

    func digest(_ seed: UInt64, code: String = "Completed") -> RunDigest {
        RunDigest(seed: seed, code: RunningCode(rawValue: code), errorCode: nil, timeToFinish: 240, lowestHealthy: 1, unavailable: 30, hitTimeLimit: false,
                  held: [], failed: [], leftBehind: [])
    }

    func part(_ runs: [RunDigest], shard: Shard, seeds: SeedRange = SeedRange(0, 1)) -> SweepPart {
        SweepPart(report: SweepReport(scenario: "x.lua", seeds: seeds, overrides: [], runs: runs, expectations: [], deadline: nil),
                  shard: shard)
    }

    /// A part as JSON with one run whose `field` is `value`.
    func partJSON(_ field: String, _ value: String) throws -> JSON {
        try JSON.parse("""
            {"rehearseSweepPart":2,"scenario":"x.lua","seeds":"0..0","shard":"1/1","overrides":[],"deadline":null,"expectations":[],"identity":{},
             "runs":[{"seed":"0","code":"Completed","errorCode":null,"timeToFinishSeconds":1,"lowestHealthy":1,
                      "unavailableInstanceSeconds":1,"hitTimeLimit":false,"held":[],"failed":[],"leftBehind":[],"hooksRaised":false,
                      "defaultActionFired":false,"hookWaitSeconds":null,"hookRejected":[],"upgrades":1,"\(field)":\(value)}]}
            """)
    }

    func testPartNumbersAreCheckedNamingTheField() throws {
        for (field, value) in [("lowestHealthy", "1e300"), ("lowestHealthy", "1.5"), ("lowestHealthy", "-1"), ("timeToFinishSeconds", "1e300"),
                               ("unavailableInstanceSeconds", "-2"), ("failed", "[9223372036854775807]"), ("seed", "\"-1\"")] {
            XCTAssertThrowsError(try SweepPart.read(partJSON(field, value)), "\(field) \(value)") { error in
                guard case .document(nil, let at)? = (error as? SweepPart.Failure)?.place else { return XCTFail("\(error)") }
                XCTAssertTrue(at.hasPrefix("runs[0].\(field)"), "\(error)")
            }
        }
        let read = try SweepPart.read(partJSON("lowestHealthy", "7"))
        XCTAssertEqual(read.report.runs.first?.lowestHealthy, 7)
    }

    func testAnEmptyShardIsAValidPart() throws {
        let report = try SweepPart.merge([("a", part([digest(0)], shard: Shard(index: 1, count: 3))),
                                          ("b", part([digest(1)], shard: Shard(index: 2, count: 3))),
                                          ("c", part([], shard: Shard(index: 3, count: 3)))])
        XCTAssertEqual(report.runs.map(\.seed), [0, 1])
    }

    func testASeedWithTwoResultsIsAConflictNamingBothPartsInAnyOrder() throws {
        let a = ("a.json", part([digest(0), digest(1)], shard: Shard(index: 1, count: 2)))
        let b = ("b.json", part([digest(1, code: "Faulted")], shard: Shard(index: 2, count: 2)))
        var failures: [SweepPart.Failure] = []
        for order in [[a, b], [b, a]] {
            XCTAssertThrowsError(try SweepPart.merge(order)) { error in
                if let failure = error as? SweepPart.Failure { failures.append(failure) }
            }
        }
        XCTAssertEqual(failures.count, 2)
        XCTAssertEqual(failures.first, failures.last, "the same refusal whatever the order")
        XCTAssertEqual(failures[0].conflict, .differentResults(seed: 1, parts: ["a.json", "b.json"]))
        // The same result twice is no conflict, and the report is the same in any order.
        let same = ("c.json", part([digest(1)], shard: Shard(index: 2, count: 2)))
        XCTAssertEqual(try SweepPart.merge([a, same]), try SweepPart.merge([same, a]))
    }

    func testPartsOfManyShardsAreCountedNotListed() throws {
        let lone = ("a", part([], shard: Shard(index: 1, count: Int.max)))
        XCTAssertThrowsError(try SweepPart.merge([lone])) { error in
            XCTAssertEqual((error as? SweepPart.Failure)?.place, .command("merge"))
        }
        let twice = [("a", part([digest(0)], shard: Shard(index: 1, count: 2))), ("b", part([digest(1)], shard: Shard(index: 1, count: 2)))]
        XCTAssertThrowsError(try SweepPart.merge(twice))
        let outside = [("a", part([digest(0), digest(7)], shard: Shard(index: 1, count: 1)))]
        XCTAssertThrowsError(try SweepPart.merge(outside)) { error in
            XCTAssertEqual((error as? SweepPart.Failure)?.place, .file("a"))
        }
    }

    // MARK: The lowest failing seed

    func testALateSeedFailingFastDoesNotHideAnEarlierSeedFailingSlowly() throws {
        // A third of the seeds fail after a long loop, a third at once: the sweep names the
        // lowest failing seed, whichever thread saw a failure first.
        let path = try writeScenario(baseScaleSet + """

            at("PT1M", function()
              local fate = math.random(1, 3)
              if fate == 2 then
                local x = 0
                for i = 1, 2000000 do x = x + i end
                error("slow failure " .. x)
              elseif fate == 1 then
                error("fast failure")
              end
            end)
            """)
        let definition = try ScenarioDefinition(luaScript: path, options: options())
        let seeds = Array(UInt64(0)..<24)
        let alone = seeds.first { (try? Rehearsal.run(definition, seed: $0)) == nil }
        let expected = try XCTUnwrap(alone, "some seed fails")
        // The line a seed's run fails at: 11 after the long loop, 13 at once.
        func failingLine(_ seed: UInt64) -> String? {
            do { _ = try Rehearsal.run(definition, seed: seed) } catch {
                guard case .script(let lua, _) = error.error else { return "\(error)" }
                return lua.location.map { URL(fileURLWithPath: $0).lastPathComponent }
            }
            return nil
        }
        // The race this test is about: the lowest failing seed fails slowly, a later one at once.
        XCTAssertEqual(failingLine(expected), "scenario.lua:11")
        XCTAssertTrue(seeds.drop { $0 <= expected }.contains { failingLine($0) == "scenario.lua:13" })
        for jobs in [1, 2, 8] {
            XCTAssertThrowsError(try Sweep.run(definition, seeds: seeds, jobs: jobs)) { error in
                XCTAssertEqual((error as? RunFailure)?.seed, expected, "--jobs \(jobs)")
            }
        }
    }
}

/// The merge-part fuzz target's corpus holds parts the reader takes and parts it refuses.
final class MergePartCorpusTests: XCTestCase {
    func corpus(_ name: String) throws -> JSON {
        let bytes = try XCTUnwrap(FileManager.default.contents(atPath: repositoryRoot + "/Tests/Fuzz/corpus/" + name))
        XCTAssertEqual(bytes.first, 4, "the first byte picks the merge-part target")
        return try JSON.parse(String(decoding: bytes.dropFirst(), as: UTF8.self))
    }

    func testTheCorpusReachesBothTheReaderAndTheMerge() throws {
        let whole = try SweepPart.read(corpus("merge-part-whole"))
        XCTAssertEqual(try SweepPart.merge([("a", whole)]).runs.count, 4)
        let empty = try SweepPart.read(corpus("merge-part-empty-shard"))
        XCTAssertEqual(empty.report.runs, [])
        XCTAssertThrowsError(try SweepPart.read(corpus("merge-part-hostile-numbers")))
        XCTAssertThrowsError(try SweepPart.read(corpus("merge-part-huge-range")))
    }
}
