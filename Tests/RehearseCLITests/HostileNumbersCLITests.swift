import Foundation
import Glibc
import XCTest

/// Numbers a user or a document supplies, made hostile: options at the edge of `Int`, durations
/// whose products overflow, merge parts with `1e300`, seed ranges and combinations too large to
/// list, shards with no seeds, parameters that are not finite, files too large to read. Each is
/// exit 2 naming the option, field or file, or a normal end; never a signal.
final class HostileNumbersCLITests: XCTestCase {
    /// Exit 2 (not a signal, not 0) with the message naming `place`.
    func assertRefused(_ out: CLIOutput, naming place: String, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(out.status, 2, out.stderr, file: file, line: line)
        XCTAssertTrue(out.stderr.contains(place), "\(place) not named in: \(out.stderr)", file: file, line: line)
    }

    func jsonObject(_ text: String) throws -> [String: Any] {
        try XCTUnwrap(JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any], text)
    }

    // MARK: One checked conversion

    func testRunLimitsAtTheEdgeOfIntAreRefusedNamingTheOption() throws {
        let path = try writeHostileScenario("")
        for option in ["--max-script-seconds", "--max-probes", "--max-events", "--max-model-versions", "--max-script-instructions",
                       "--max-actions", "--max-instances"] {
            assertRefused(try runRehearse(["run", path, option, "9223372036854775807"]), naming: option)
            assertRefused(try runRehearse(["run", path, option, "0"]), naming: option)
        }
        // The largest allowed values run.
        let largest = try runRehearse(["run", path, "--max-probes", "1000000000000000", "--max-script-seconds", "4294967"])
        XCTAssertEqual(largest.status, 0, largest.stderr)
    }

    func testAPlanWhosePausesTimesBatchesPassTheLongestDurationEndsNormally() throws {
        // 10,000 phases of one instance each: 9,999 pauses of P11574000D overflow Int.
        let path = try writeHostileScenario("""
            phase(function(vm) return vm.id end)
            """, scaleSet: """
            scaleset { name = "web", capacity = 10000, healthExtension = { protocol = "http", port = 80, requestPath = "/" },
                       upgradePolicy = { mode = "Rolling", rollingUpgradePolicy = { pauseTimeBetweenBatches = "P11574000D" } } }

            """)
        let out = try runRehearse(["plan", path, "--json"])
        XCTAssertEqual(out.status, 0, out.stderr)
        let policy = try XCTUnwrap(try jsonObject(out.stdout)["policy"] as? [String: Any])
        XCTAssertEqual(policy["shortestDurationSeconds"] as? Int, 1_000_000_000_000, "the longest duration, 10^12 s")
        let text = try runRehearse(["plan", path])
        XCTAssertEqual(text.status, 0, text.stderr)
    }

    func testADurationBeyondTheLongestIsRefusedNamingTheOption() throws {
        let path = try writeHostileScenario("")
        assertRefused(try runRehearse(["run", path, "--time-limit", "P11574075D"]), naming: "--time-limit")
        assertRefused(try runRehearse(["sweep", path, "--seeds", "0..1", "--deadline", "P99999999999D"]), naming: "--deadline")
    }

    func testParametersMustBeFinite() throws {
        let path = try writeHostileScenario("""
            local f = param("f", 0.5)
            assert(type(f) == "number")
            """)
        for value in ["inf", "-inf", "nan", "1e999", "infinity"] {
            assertRefused(try runRehearse(["run", path, "--param", "f=\(value)"]), naming: "--param f=\(value)")
        }
        let ok = try runRehearse(["run", path, "--param", "f=1e300"])
        XCTAssertEqual(ok.status, 0, ok.stderr)
    }

    // MARK: Sweeps that never list what a user can make huge

    func testTheWholeSeedRangeIsRefusedAtOnce() throws {
        let path = try writeHostileScenario("")
        let started = Date()
        assertRefused(try runRehearse(["sweep", path, "--seeds", "0..18446744073709551615"]), naming: "--seeds")
        assertRefused(try runRehearse(["sweep", path, "--seeds", "0..1000000"]), naming: "--seeds")
        XCTAssertLessThan(Date().timeIntervalSince(started), 15)
    }

    func testAShardWithNoSeedsIsAnEmptyPartThatMergeAccepts() throws {
        let path = try writeHostileScenario("")
        let text = try runRehearse(["sweep", path, "--seeds", "0..1", "--shard", "3/3"])
        XCTAssertEqual(text.status, 0, text.stderr)
        let table = try runRehearse(["sweep", path, "--seeds", "0..1", "--shard", "3/3", "--output", "table"])
        XCTAssertEqual(table.status, 0, table.stderr)
        let folder = try newTemporaryFolder()
        var parts: [String] = []
        for i in 1...3 {
            let out = try runRehearse(["sweep", path, "--seeds", "0..1", "--shard", "\(i)/3", "--json"])
            XCTAssertEqual(out.status, 0, out.stderr)
            XCTAssertEqual((try jsonObject(out.stdout)["runs"] as? [Any])?.count, i == 3 ? 0 : 1)
            parts.append(folder + "/part\(i).json")
            try out.stdout.write(toFile: parts.last!, atomically: true, encoding: .utf8)
        }
        let merged = try runRehearse(["merge"] + parts + ["--json"])
        let whole = try runRehearse(["sweep", path, "--seeds", "0..1", "--json"])
        XCTAssertEqual(merged.status, 0, merged.stderr)
        XCTAssertEqual(merged.stdout, whole.stdout)
    }

    func testCompareCountsItsCombinationsBeforeMakingAny() throws {
        let path = try writeHostileScenario("")
        // 1.5e10 combinations: refused at once, nothing built.
        let list = (1...1_000).map(String.init).joined(separator: ",")
        let thousands = Array(repeating: ["--set", "rollingUpgradePolicy.maxBatchInstancePercent=\(list)"], count: 3).flatMap { $0 }
        let started = Date()
        let out = try runRehearse(["compare", path, "--seeds", "0..14"] + thousands + ["--set", "rollingUpgradePolicy.prioritizeUnhealthyInstances=true,false"])
        assertRefused(out, naming: "--set")
        XCTAssertLessThan(Date().timeIntervalSince(started), 15)
        // Within the cap of combinations but past the cap of runs.
        assertRefused(try runRehearse(["compare", path, "--seeds", "0..999999", "--set", "rollingUpgradePolicy.maxBatchInstancePercent=10,20"]),
                      naming: "--set")
        // The order of the combinations is the last list varying fastest.
        let small = try runRehearse(["compare", path, "--seeds", "0..1", "--json", "--set", "rollingUpgradePolicy.maxBatchInstancePercent=10,20",
                                     "--set", "rollingUpgradePolicy.pauseTimeBetweenBatches=PT0S,PT1S"])
        XCTAssertEqual(small.status, 0, small.stderr)
        let rows = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(small.stdout.utf8)) as? [[String: Any]])
        XCTAssertEqual(rows.map { ($0["overrides"] as? [String])?.joined(separator: " ") ?? "" }, [
            "rollingUpgradePolicy.maxBatchInstancePercent=10 rollingUpgradePolicy.pauseTimeBetweenBatches=PT0S",
            "rollingUpgradePolicy.maxBatchInstancePercent=10 rollingUpgradePolicy.pauseTimeBetweenBatches=PT1S",
            "rollingUpgradePolicy.maxBatchInstancePercent=20 rollingUpgradePolicy.pauseTimeBetweenBatches=PT0S",
            "rollingUpgradePolicy.maxBatchInstancePercent=20 rollingUpgradePolicy.pauseTimeBetweenBatches=PT1S",
        ])
    }

    func testThousandsOfJobsUnderAnAddressSpaceLimitRunTheSameSweep() throws {
        // AddressSanitizer reserves terabytes of shadow memory: no instrumented binary starts under `ulimit -v`.
        if dlsym(nil, "__asan_init") != nil { throw XCTSkip("built with AddressSanitizer, which cannot run under ulimit -v") }
        let path = try writeHostileScenario("")
        let one = try runRehearse(["sweep", path, "--seeds", "0..599", "--jobs", "1", "--json"])
        XCTAssertEqual(one.status, 0, one.stderr)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", "ulimit -v 4194304 && exec \"$0\" sweep \"$1\" --seeds 0..599 --jobs 3000 --json", rehearseBinary, path]
        let out = Pipe()
        process.standardOutput = out
        try process.run()
        let stdout = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        XCTAssertEqual(process.terminationReason, .exit)
        XCTAssertEqual(process.terminationStatus, 0)
        XCTAssertEqual(String(decoding: stdout, as: UTF8.self), one.stdout)
    }

    func testASweepThreadThatCannotStartIsExitTwoNamingJobs() throws {
        // As root, an unprivileged user allowed two tasks (the process and one thread): the
        // second sweep thread cannot start.
        guard getuid() == 0, FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv") else {
            throw XCTSkip("needs root and setpriv to run as a user with a task limit")
        }
        let path = try writeHostileScenario("")
        // The unprivileged user must reach the binary wherever the checkout is (a clone inside
        // a private folder, as `mktemp -d` makes, is not): a copy with its resources in a folder
        // everyone may read.
        let shared = try temporaryFolder("rehearse-nobody")
        let built = URL(fileURLWithPath: rehearseBinary).deletingLastPathComponent().path
        for name in try FileManager.default.contentsOfDirectory(atPath: built) where name == "rehearse" || name.hasSuffix(".resources") {
            try FileManager.default.copyItem(atPath: built + "/" + name, toPath: shared + "/" + name)
        }
        defer { try? FileManager.default.removeItem(atPath: shared) }
        for folder in [shared, URL(fileURLWithPath: path).deletingLastPathComponent().path] {
            try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: folder)
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
        process.arguments = ["--reuid=65534", "--regid=65534", "--clear-groups", "/bin/bash", "-c",
                             "ulimit -u 2 && exec \"$0\" sweep \"$1\" --seeds 0..9 --jobs 2 --json", shared + "/rehearse", path]
        let errors = Pipe()
        process.standardOutput = FileHandle.nullDevice
        process.standardError = errors
        try process.run()
        let stderr = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        XCTAssertEqual(process.terminationReason, .exit, stderr)
        XCTAssertEqual(process.terminationStatus, 2, stderr)
        XCTAssertTrue(stderr.contains("--jobs"), stderr)
    }

    // MARK: merge

    /// A part of seeds 0..1 in `shards` parts with `runs`, written to a file.
    func part(_ folder: String, _ name: String, shard: String, runs: [[String: Any]]) throws -> String {
        let part: [String: Any] = ["rehearseSweepPart": 2, "scenario": "x.lua", "seeds": "0..1", "shard": shard, "overrides": [String](), "identity": [String: String](),
                                   "deadline": NSNull(), "expectations": [Any](), "runs": runs]
        let path = folder + "/" + name
        try JSONSerialization.data(withJSONObject: part).write(to: URL(fileURLWithPath: path))
        return path
    }

    func run(_ seed: Int, _ changes: [String: Any] = [:]) -> [String: Any] {
        var run: [String: Any] = ["seed": String(seed), "code": "Completed", "errorCode": NSNull(), "timeToFinishSeconds": 240,
                                  "lowestHealthy": 1, "unavailableInstanceSeconds": 30.5, "hitTimeLimit": false, "held": [Bool](),
                                  "failed": [Int](), "leftBehind": [Int](), "hooksRaised": false, "defaultActionFired": false,
                                  "hookWaitSeconds": NSNull(), "hookRejected": [Int](), "upgrades": 1]
        run.merge(changes) { $1 }
        return run
    }

    func testMergePartsWithHugeNumbersAreRefusedNamingTheField() throws {
        let folder = try newTemporaryFolder()
        let other = try part(folder, "b.json", shard: "2/2", runs: [run(1)])
        for field in ["lowestHealthy", "timeToFinishSeconds", "unavailableInstanceSeconds"] {
            for value in [1e300, -1] {
                let bad = try part(folder, "a.json", shard: "1/2", runs: [run(0, [field: value])])
                for output in [[], ["--json"]] {
                    assertRefused(try runRehearse(["merge", bad, other] + output), naming: "runs[0].\(field)")
                }
            }
        }
        // Well-formed parts merge, in either order, to the same report.
        let good = try part(folder, "a.json", shard: "1/2", runs: [run(0)])
        let ab = try runRehearse(["merge", good, other, "--json"]), ba = try runRehearse(["merge", other, good, "--json"])
        XCTAssertEqual(ab.status, 0, ab.stderr)
        XCTAssertEqual(ab.stdout, ba.stdout)
        XCTAssertEqual(try jsonObject(ab.stdout)["runs"] as? Int, 2)
    }

    func testAMergePartClaimingEverySeedIsRefusedAtOnce() throws {
        let folder = try newTemporaryFolder()
        let path = folder + "/huge.json"
        let part: [String: Any] = ["rehearseSweepPart": 2, "scenario": "x.lua", "seeds": "0..18446744073709551615", "shard": "1/1", "identity": [String: String](),
                                   "overrides": [String](), "deadline": NSNull(), "expectations": [Any](), "runs": [Any]()]
        try JSONSerialization.data(withJSONObject: part).write(to: URL(fileURLWithPath: path))
        let started = Date()
        assertRefused(try runRehearse(["merge", path]), naming: "seeds")
        // A part claiming to be one of Int.max shards: refused without counting them.
        let many = try self.part(folder, "many.json", shard: "1/9223372036854775807", runs: [])
        assertRefused(try runRehearse(["merge", many]), naming: "is missing")
        XCTAssertLessThan(Date().timeIntervalSince(started), 15)
    }

    func testAMergePartTooLargeToHoldIsRefusedByItsSize() throws {
        // 64 MiB of one-digit numbers: parsed, a tree of more than a gigabyte. Refused by its
        // size before it is parsed.
        let big = try newTemporaryFolder() + "/big.json"
        var text = Data("{\"rehearseSweepPart\":2,\"runs\":[".utf8)
        text.append(Data(String(repeating: "0,", count: 32 << 20).utf8))
        text.append(Data("0]}".utf8))
        try text.write(to: URL(fileURLWithPath: big))
        let started = Date()
        assertRefused(try runRehearse(["merge", big]), naming: big)
        XCTAssertLessThan(Date().timeIntervalSince(started), 15)
    }

    func testMergeRefusesASeedWithTwoResultsNamingBothFilesWhateverTheOrder() throws {
        let folder = try newTemporaryFolder()
        let a = try part(folder, "a.json", shard: "1/2", runs: [run(0), run(1)])
        let b = try part(folder, "b.json", shard: "2/2", runs: [run(1, ["code": "Faulted", "errorCode": "MaxUnhealthyUpgradedInstancePercentExceededInRollingUpgrade"])])
        for order in [[a, b], [b, a]] {
            let out = try runRehearse(["merge"] + order)
            assertRefused(out, naming: "a.json")
            XCTAssertTrue(out.stderr.contains("b.json"), out.stderr)
            XCTAssertEqual(out.stderr, try runRehearse(["merge", a, b]).stderr, "the same message whatever the order")
        }
        // The same result for a seed in two parts is no conflict.
        let same = try part(folder, "c.json", shard: "2/2", runs: [run(1)])
        XCTAssertEqual(try runRehearse(["merge", a, same]).status, 0)
    }

    // MARK: test DIR

    func testTestChecksSizesBeforeReadingAFolder() throws {
        let folder = try newTemporaryFolder()
        try (hostileScaleSet + "at(\"PT1M\", function() update_model { image = \"v2\" } end)\nexpect { code = \"Completed\" }\n").write(toFile: folder + "/a.lua", atomically: true, encoding: .utf8)
        // A 3 GB sparse file: refused by its size, as `run` refuses it, never read.
        let big = folder + "/big.lua"
        XCTAssertTrue(FileManager.default.createFile(atPath: big, contents: nil))
        let handle = try XCTUnwrap(FileHandle(forWritingAtPath: big))
        try handle.truncate(atOffset: 3 << 30)
        try handle.close()
        let started = Date()
        let out = try runRehearse(["test", folder, "--output", "json"])
        XCTAssertLessThan(Date().timeIntervalSince(started), 15)
        XCTAssertEqual(out.status, 2, out.stderr)
        let report = try jsonObject(out.stdout)
        XCTAssertEqual(report["passed"] as? Int, 1)
        XCTAssertEqual(report["errors"] as? Int, 1)
        let scenarios = try XCTUnwrap(report["scenarios"] as? [[String: Any]])
        XCTAssertEqual(scenarios.first { $0["result"] as? String == "error" }?["path"] as? String, big)
        assertRefused(try runRehearse(["run", big]), naming: big)
    }
}
