import Foundation
import XCTest

/// Round five's attacks on parts and tune states: a sharded gate must judge every measure one
/// process judges, and parts or told runs of another question (another grid, parameter, time
/// limit, version) must never be put together.
final class PartIdentityCLITests: XCTestCase {
    var folder = ""

    override func setUpWithError() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("rehearse-identity-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws { try? FileManager.default.removeItem(atPath: folder) }

    /// Runs rehearse and writes its standard output to `name`; `status` nil takes 0 or 1 (a part
    /// of a scenario with a risk { } fails when a requirement failed on its own runs).
    @discardableResult
    func saved(_ name: String, _ arguments: [String], status: Int32? = nil) throws -> String {
        let out = try runRehearse(arguments)
        if let status { XCTAssertEqual(out.status, status, "\(arguments): \(out.stderr)") } else { XCTAssertLessThanOrEqual(out.status, 1, "\(arguments): \(out.stderr)") }
        let path = folder + "/" + name
        try out.stdout.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    func object(_ text: String) throws -> [String: Any] {
        try XCTUnwrap(JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any], text)
    }

    /// Class 1: the lifecycle-hooks scenario rejects instance 3 in every run, so one process fails
    /// `hookRejected <= 1%` (200 of 200); its parts merged must fail it the same way, with the
    /// same bytes (format 1 parts carried no hook fields and merged read 0 of 200: exit 0).
    func testHookRequirementsTravelInParts() throws {
        let scenario = "scripts/lifecycle-hooks.lua"
        let asked = ["--require", "hookRejected <= 1%", "--require", "defaultAction <= 50%", "--json"]
        let one = try runRehearse(["sweep", scenario, "--seeds", "0..199"] + asked)
        XCTAssertEqual(one.status, 1, one.stderr)
        let requirements = try XCTUnwrap(try object(one.stdout)["requirements"] as? [[String: Any]])
        XCTAssertEqual(requirements.first?["runs"] as? Int, 200, "every run rejects an instance")
        let parts = try (1...3).map { try saved("h\($0).json", ["sweep", scenario, "--seeds", "0..199", "--shard", "\($0)/3"] + asked, status: 1) }
        let run = try XCTUnwrap((try object(try String(contentsOfFile: parts[0], encoding: .utf8))["runs"] as? [[String: Any]])?.first)
        XCTAssertEqual(run["hookRejected"] as? [Int], [3])
        XCTAssertEqual(run["hooksRaised"] as? Bool, true)
        let merged = try runRehearse(["merge"] + parts)
        XCTAssertEqual(merged.status, 1, merged.stderr)
        let mergedJSON = try runRehearse(["merge", "--json"] + parts)
        XCTAssertEqual(mergedJSON.stdout, one.stdout, "the merged parts print the one-process gate byte for byte")
        let gate = try runRehearse(["merge", "--until-decided"] + parts)
        XCTAssertEqual(gate.status, 1, "the distributed sequential gate fails what one process fails: \(gate.stderr)")
    }

    /// Class 2: the parts of two different `compare --shard` grids are refused (exit 2), naming
    /// the grid; format 1 parts are refused as written by an older rehearse.
    func testPartsOfAnotherGridAreRefused() throws {
        let scenario = "scripts/risk-gate.lua"
        let seeds = ["--seeds", "0..19"]
        let a = try saved("a.json", ["compare", scenario, "--set", "rollingUpgradePolicy.maxBatchInstancePercent=20,50", "--shard", "1/2"] + seeds)
        let b = try saved("b.json", ["compare", scenario, "--set", "rollingUpgradePolicy.maxBatchInstancePercent=20,33", "--shard", "2/2"] + seeds)
        let mixed = try runRehearse(["merge", a, b])
        XCTAssertEqual(mixed.status, 2, mixed.stdout)
        XCTAssertTrue(mixed.stderr.contains("grid"), mixed.stderr)
        let same = try saved("c.json", ["compare", scenario, "--set", "rollingUpgradePolicy.maxBatchInstancePercent=20,50", "--shard", "2/2"] + seeds)
        XCTAssertLessThanOrEqual(try runRehearse(["merge", a, same]).status, 1, "the same grid merges (its verdict is the comparison's)")

        var old = try object(try String(contentsOfFile: try saved("s.json", ["sweep", scenario, "--shard", "1/1", "--json"] + seeds), encoding: .utf8))
        old["rehearseSweepPart"] = 1
        let path = folder + "/old.json"
        try JSONSerialization.data(withJSONObject: old).write(to: URL(fileURLWithPath: path))
        let refused = try runRehearse(["merge", path])
        XCTAssertEqual(refused.status, 2)
        XCTAssertTrue(refused.stderr.contains("format 1"), refused.stderr)
    }

    /// Class 3: parts of different `--param` values, `--time-limit`, `--max-probes` or
    /// `--strict-wire` do not merge (exit 2 naming the input and both values); `--jobs` is no
    /// run input and merges.
    func testPartsOfOtherRunInputsAreRefused() throws {
        let scenario = "scripts/risk-gate.lua"
        let base = ["sweep", scenario, "--seeds", "0..19", "--json"]
        let first = try saved("p1.json", base + ["--shard", "1/2", "--jobs", "1"])
        XCTAssertLessThanOrEqual(try runRehearse(["merge", first, try saved("p2.json", base + ["--shard", "2/2", "--jobs", "2"])]).status, 1)
        let others: [(String, [String])] = [("param.failureRate", ["--param", "failureRate=0.2"]), ("timeLimit", ["--time-limit", "P1D"]),
                                            ("maxProbes", ["--max-probes", "9999999"]), ("strictWire", ["--strict-wire"])]
        for (name, options) in others {
            let other = try saved("o.json", base + ["--shard", "2/2"] + options)
            let merged = try runRehearse(["merge", first, other])
            XCTAssertEqual(merged.status, 2, "\(name): \(merged.stdout)")
            XCTAssertTrue(merged.stderr.contains(name), "\(name): \(merged.stderr)")
        }
    }

    /// Class 3: `tune --tell` refuses a part of another version of rehearse or other run inputs,
    /// and two `--tell`s at once both land (the state is locked while it is written).
    func testTellRefusesOtherVersionsAndKeepsConcurrentParts() throws {
        let scenario = "scripts/risk-gate.lua"
        let search = ["tune", scenario, "--vary", "rollingUpgradePolicy.maxUnhealthyUpgradedInstancePercent=5,20", "--seeds", "0..199"]
        let state = folder + "/state.jsonl"
        let asked = try runRehearse(search + ["--state", state, "--ask", "--parts", "2"])
        XCTAssertEqual(asked.status, 0, asked.stderr)
        let work = try XCTUnwrap(try object(asked.stdout)["work"] as? [[String: Any]])
        XCTAssertEqual(work.count, 4, "two candidates, each in two parts")
        let parts = try work.enumerated().map { (i, item) in
            try saved("w\(i).json", ["sweep", scenario, "--seeds", try XCTUnwrap(item["seeds"] as? String), "--shard", try XCTUnwrap(item["shard"] as? String),
                                     "--json"] + (try XCTUnwrap(item["overrides"] as? [String])).flatMap { ["--set", $0] })
        }
        // Another version of rehearse.
        var forged = try object(try String(contentsOfFile: parts[0], encoding: .utf8))
        forged["binary"] = "0.0.1"
        let forgedPath = folder + "/forged.json"
        try JSONSerialization.data(withJSONObject: forged).write(to: URL(fileURLWithPath: forgedPath))
        let refused = try runRehearse(search + ["--state", state, "--tell", forgedPath])
        XCTAssertEqual(refused.status, 2)
        XCTAssertTrue(refused.stderr.contains("0.0.1"), refused.stderr)
        // Another parameter value.
        let other = try saved("other.json", ["sweep", scenario, "--seeds", "0..99", "--shard", "1/2", "--json", "--param", "failureRate=0.2",
                                             "--set", "rollingUpgradePolicy.maxUnhealthyUpgradedInstancePercent=5"])
        let otherTell = try runRehearse(search + ["--state", state, "--tell", other])
        XCTAssertEqual(otherTell.status, 2)
        XCTAssertTrue(otherTell.stderr.contains("param.failureRate"), otherTell.stderr)
        // Four tells at once: every part's runs are recorded.
        let group = DispatchGroup()
        let statuses = LockedStatuses()
        for part in parts {
            DispatchQueue.global().async(group: group) {
                let out = try? runRehearse(search + ["--state", state, "--tell", part])
                statuses.append(out?.status ?? -1)
            }
        }
        group.wait()
        XCTAssertEqual(statuses.values, [0, 0, 0, 0])
        let lines = try String(contentsOfFile: state, encoding: .utf8).split(separator: "\n")
        XCTAssertEqual(lines.count, 1 + 200, "the header and the 100 seeds of each candidate's first round")
        let next = try runRehearse(search + ["--state", state, "--ask"])
        XCTAssertEqual(next.status, 0, next.stderr)
    }
}

/// Exit statuses gathered from several threads.
final class LockedStatuses: @unchecked Sendable {  // every access holds `lock`
    private let lock = NSLock()
    private var list: [Int32] = []
    func append(_ status: Int32) { lock.withLock { list.append(status) } }
    var values: [Int32] { lock.withLock { list.sorted() } }
}

/// Round five's smaller classes: capacity at the dip, one resource check for every document,
/// deterministic legacy-field messages, bounded requirements, instance ids in range.
final class RoundFiveInputCLITests: XCTestCase {
    /// Class 5: ten instances, batches of two: the lowest healthy is 8 of the 10 wanted during the
    /// upgrade. A scale to 20 (out) or 8 (in) an hour later must not change whether 80% of the
    /// capacity kept serving: 200 of 200 runs keep 80%, none keeps 81%, both ways.
    func testCapacityIsMeasuredWhenTheLowPointHappens() throws {
        let folder = try newTemporaryFolder()
        for count in [20, 8] {
            let script = folder + "/scale\(count).lua"
            try """
                scaleset {
                  name = "web", capacity = 10, model = { image = "v1" },
                  upgradePolicy = { mode = "Rolling", rollingUpgradePolicy = { maxBatchInstancePercent = 20, pauseTimeBetweenBatches = "PT10S" } },
                  healthExtension = { protocol = "http", port = 8000, requestPath = "/health", intervalInSeconds = 5, numberOfProbes = 1, gracePeriod = 60 },
                }
                health(function(vm, now) return { applicationHealthState = "Healthy" } end)
                at("PT2M", function() update_model { image = "v2" } end)
                at("PT1H", function() scale(\(count)) end)
                """.write(toFile: script, atomically: true, encoding: .utf8)
            let out = try runRehearse(["sweep", script, "--seeds", "0..199", "--require", "lowestHealthy.80 >= 80%", "--require", "lowestHealthy.81 >= 1%", "--json"])
            let report = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(out.stdout.utf8)) as? [String: Any], out.stderr)
            let requirements = try XCTUnwrap(report["requirements"] as? [[String: Any]])
            XCTAssertEqual(requirements.map { $0["runs"] as? Int }, [200, 0], "scaled to \(count)")
            XCTAssertEqual(requirements.first?["verdict"] as? String, "held", "scaled to \(count)")
            XCTAssertEqual((report["lowestHealthy"] as? [String: Any])?["min"] as? Int, 8)
        }
    }

    /// Class 8: `--resource` that names no scale set of an az or REST document is refused (exit 2),
    /// as templates and plans refuse it; its own name is taken.
    func testResourceOfAResourceDocumentIsChecked() throws {
        let document = "Tests/Import/az-vmss-show-zonal.json"
        let wrong = try runRehearse(["import", document, "--resource", "nosuch"])
        XCTAssertEqual(wrong.status, 2)
        XCTAssertTrue(wrong.stderr.contains("--resource") && wrong.stderr.contains("shop-web"), wrong.stderr)
        XCTAssertEqual(try runRehearse(["validate", document, "--resource", "nosuch"]).status, 2)
        XCTAssertEqual(try runRehearse(["import", document, "--resource", "shop-web"]).status, 0)
    }

    /// Class 8: the legacy `automaticOsUpgrade` in two spellings gives the same message on every
    /// run (a dictionary was walked for it), naming both spellings.
    func testLegacyFieldInTwoSpellingsIsNamedTheSameEveryRun() throws {
        let path = try newTemporaryFolder() + "/legacy.json"
        try """
            {"name":"web","location":"westeurope","sku":{"name":"Standard_D2s_v3","capacity":4},"properties":{"orchestrationMode":"Uniform",
             "upgradePolicy":{"mode":"Automatic","automaticOsUpgrade":true,"AutomaticOsUpgrade":false},
             "virtualMachineProfile":{"storageProfile":{"imageReference":{"publisher":"Canonical","offer":"x","sku":"y","version":"latest"}}}}}
            """.write(toFile: path, atomically: true, encoding: .utf8)
        let outputs = try (0..<6).map { _ in try runRehearse(["validate", path, "--output", "json"]) }
        XCTAssertEqual(Set(outputs.map(\.stdout)).count, 1, "one message whatever the run")
        XCTAssertEqual(outputs[0].status, 2)
        XCTAssertTrue(outputs[0].stdout.contains("AutomaticOsUpgrade") && outputs[0].stdout.contains("automaticOsUpgrade"), outputs[0].stdout)
    }

    /// Class 8: at most 64 different requirements (each is judged over every run); a repeated one
    /// is judged once, with a warning.
    func testRequirementsAreBoundedAndJudgedOnce() throws {
        let many = (1...65).flatMap { ["--require", "Faulted <= \($0)%"] }
        let refused = try runRehearse(["sweep", "scripts/ten-at-twenty.lua", "--seeds", "0..9"] + many)
        XCTAssertEqual(refused.status, 2)
        XCTAssertTrue(refused.stderr.contains("64"), refused.stderr)
        let twice = try runRehearse(["sweep", "scripts/ten-at-twenty.lua", "--seeds", "0..9", "--require", "Faulted <= 50%", "--require", "Faulted <= 50%", "--json"])
        let report = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(twice.stdout.utf8)) as? [String: Any], twice.stderr)
        XCTAssertEqual((report["requirements"] as? [Any])?.count, 1)
        XCTAssertTrue(twice.stderr.contains("given more than once"), twice.stderr)
    }

    /// Class 8: a Uniform instance list with an id past 64 bits is refused (it was taken as a
    /// Flexible VM's name), as `three` is.
    func testAnInstanceIdPast64BitsIsRefused() throws {
        let path = try newTemporaryFolder() + "/fleet.json"
        try #"[{"instanceId":"184467440737095516160","latestModelApplied":true},{"instanceId":"1","latestModelApplied":true}]"#
            .write(toFile: path, atomically: true, encoding: .utf8)
        let out = try runRehearse(["validate", path])
        XCTAssertEqual(out.status, 2)
        XCTAssertTrue(out.stderr.contains("[0].instanceId") && out.stderr.contains("out of range"), out.stderr)
    }
}
