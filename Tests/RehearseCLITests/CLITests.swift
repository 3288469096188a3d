import Foundation
import XCTest

/// The `rehearse` binary run as a user runs it: real processes, real files, exit codes.
final class CLITests: XCTestCase {
    static let root = repositoryRoot
    typealias Output = CLIOutput

    func rehearse(_ arguments: String...) throws -> Output { try runRehearse(arguments) }

    func temporary(_ name: String, _ text: String? = nil) throws -> String {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("rehearse-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let path = dir.appendingPathComponent(name).path
        if let text { try text.write(toFile: path, atomically: true, encoding: .utf8) }
        return path
    }

    func testReadmeScenarioRunsWithATimelineAndTheFinalStatus() throws {
        let events = try temporary("readme.jsonl")
        let out = try rehearse("run", "--events", events, "scripts/ten-at-twenty.lua")
        XCTAssertEqual(out.status, 0, out.stderr)
        let objects = try String(contentsOfFile: events, encoding: .utf8).split(separator: "\n").map {
            try JSONSerialization.jsonObject(with: Data($0.utf8)) as! [String: Any]
        }
        let batches = objects.filter { $0["kind"] as? String == "batchStarted" }
        XCTAssertEqual(batches.map { $0["instances"] as? [Int] ?? [] }, [[0, 5], [1, 6], [2, 7], [3, 8], [4, 9]])
        // The timeline shows one line per batch, and the final status follows it.
        let timelineBatches = out.stdout.split(separator: "\n").filter { $0.split(separator: " ").contains("batchStarted") }
        XCTAssertEqual(timelineBatches.count, batches.count)
        let json = try rehearse("run", "--json", "scripts/ten-at-twenty.lua")
        let status = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as! [String: Any]
        XCTAssertEqual((status["runningStatus"] as? [String: Any])?["code"] as? String, "Completed")
    }

    func testVersionIsPrinted() throws {
        let out = try rehearse("--version")
        XCTAssertEqual(out.status, 0, out.stderr)
        XCTAssertNotNil(out.stdout.wholeMatch(of: /\d+\.\d+\.\d+\n/), out.stdout)
    }

    func testJsonPrintsOnlyTheGetLatestStatus() throws {
        let out = try rehearse("run", "--json", "scripts/pre-batch-breach.lua")
        XCTAssertEqual(out.status, 0, out.stderr)
        let json = try JSONSerialization.jsonObject(with: Data(out.stdout.utf8)) as! [String: Any]
        XCTAssertEqual(Set(json.keys), ["error", "location", "policy", "progress", "runningStatus", "type"])
        XCTAssertEqual((json["error"] as! [String: Any])["code"] as? String, "MaxUnhealthyInstancePercentExceededBeforeRollingUpgrade")
        XCTAssertEqual(((json["error"] as! [String: Any])["details"] as! [Any]).count, 3)
    }

    func testEventsFileHasOneJSONObjectPerLineAndIsReproducible() throws {
        let first = try temporary("a.jsonl"), second = try temporary("b.jsonl")
        XCTAssertEqual(try rehearse("run", "--seed", "3", "--events", first, "scripts/maxsurge.lua").status, 0)
        XCTAssertEqual(try rehearse("run", "--seed", "3", "--events", second, "scripts/maxsurge.lua").status, 0)
        let a = try String(contentsOfFile: first, encoding: .utf8), b = try String(contentsOfFile: second, encoding: .utf8)
        XCTAssertEqual(a, b)
        let lines = a.split(separator: "\n")
        XCTAssertGreaterThan(lines.count, 100)
        var objects: [[String: Any]] = []
        for line in lines {
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as! [String: Any]
            XCTAssertTrue(Set(object.keys).isSuperset(of: ["batch", "detail", "instance", "kind", "phase", "time"]), "\(object.keys)")
            objects.append(object)
        }
        func of(_ kind: String) -> [[String: Any]] { objects.filter { $0["kind"] as? String == kind } }
        // Typed fields beside the text: batch members as a list, the new health state, outcomes.
        XCTAssertEqual(of("batchStarted").first?["instances"] as? [Int], [0, 5])
        XCTAssertEqual(of("batchStarted").first?["shrunk"] as? Bool, false)
        let health = try XCTUnwrap(of("healthChanged").first)
        XCTAssertNotNil(health["instance"] as? Int)
        XCTAssertEqual(health["state"] as? String, "Healthy")
        XCTAssertEqual(health["from"] as? String, "Initializing")
        let finished = of("operationFinished")
        XCTAssertTrue(finished.allSatisfy { ["succeeded", "failed"].contains($0["outcome"] as? String ?? "") })
        XCTAssertEqual(finished.first { $0["operation"] as? String == "create" }?["batch"] as? Int, 1)
        let created = try XCTUnwrap(of("operationStarted").first { $0["operation"] as? String == "create" })
        XCTAssertEqual(created["replaces"] as? Int, 0)
    }

    func testFailedExpectationExitsOne() throws {
        let path = try temporary("fail.lua", """
            scaleset { name = "web", capacity = 4, upgradePolicy = { mode = "Rolling" },
              healthExtension = { protocol = "http", port = 80, requestPath = "/" } }
            at("PT1M", function() update_model { image = "v2" } end)
            expect { code = "Faulted" }
            """)
        let out = try rehearse("run", path)
        XCTAssertEqual(out.status, 1)
        XCTAssertTrue(out.stderr.contains("fail.lua:4: code is Completed, expected Faulted"), out.stderr)
    }

    func testBadScenarioAndScriptErrorsExitTwoWithFileAndLine() throws {
        let bad = try temporary("bad.lua", "scaleset { name = \"web\", capacity = 4, upgradePolicy = { mode = \"Rolling\" } }\n")
        let out = try rehearse("run", bad)
        XCTAssertEqual(out.status, 2)
        XCTAssertTrue(out.stderr.contains("bad.lua:1: scaleset.upgradePolicy.mode: Rolling Upgrade mode is not supported"), out.stderr)
        let runaway = try temporary("loop.lua", """
            scaleset { name = "web", capacity = 2, upgradePolicy = { mode = "Rolling" },
              healthExtension = { protocol = "http", port = 80, requestPath = "/" } }
            health(function(vm, now)
              while true do end
            end)
            at("PT1M", function() update_model() end)
            """)
        let loop = try rehearse("run", runaway)
        XCTAssertEqual(loop.status, 2)
        XCTAssertTrue(loop.stderr.contains("health: budget of 10000000 instructions exceeded at"), loop.stderr)
        XCTAssertTrue(loop.stderr.contains("loop.lua:4 (health of web_0 at PT0S)"), loop.stderr)
        let blocked = try temporary("blocked.lua", "os.exit(0)\n")
        let exit = try rehearse("run", blocked)
        XCTAssertEqual(exit.status, 2)
        XCTAssertTrue(exit.stderr.contains("blocked.lua:1: attempt to call a nil value (field 'exit')"), exit.stderr)
        let missing = try rehearse("run", "no/such/file.lua")
        XCTAssertEqual(missing.status, 2)
        XCTAssertTrue(missing.stderr.contains("no/such/file.lua"), missing.stderr)
    }

    func testRunLimitsOutsideWhatTheEngineCanNumberAreBadInput() throws {
        for (option, value) in [("--max-instances", "3000000000"), ("--max-actions", "2147483648"), ("--max-probes", "0")] {
            let out = try rehearse("run", "scripts/ten-at-twenty.lua", option, value)
            XCTAssertEqual(out.status, 2, option)
            XCTAssertEqual(out.stdout, "", option)
            XCTAssertTrue(out.stderr.contains("\(option) \(value): allowed a whole number"), out.stderr)
        }
        XCTAssertEqual(try rehearse("run", "scripts/ten-at-twenty.lua", "--max-instances", "2147483647").status, 0)
    }

    func testStrictWireWarningsNameTheInstance() throws {
        let path = try temporary("wire.lua", """
            scaleset { name = "web", capacity = 3, upgradePolicy = { mode = "Rolling" },
              healthExtension = { protocol = "http", port = 80, requestPath = "/" } }
            health(function(vm, now)
              return '{"applicationHealthState": "Healthy", "customMetrics": {"rollingUpgrade": {"PhaseOrderingNumber": 1}}}'
            end)
            at("PT1M", function() update_model { image = "v2" } end)
            """)
        let lenient = try rehearse("run", "--json", path)
        XCTAssertEqual(lenient.status, 0)
        XCTAssertTrue(lenient.stderr.contains("warning: web_0: customMetrics sent as a JSON object"), lenient.stderr)
        let strict = try rehearse("run", "--json", "--strict-wire", path)
        XCTAssertTrue(strict.stdout.contains("MaxUnhealthyInstancePercentExceededBeforeRollingUpgrade"), strict.stdout)
    }

    func testPlanJson() throws {
        let out = try rehearse("plan", "--json", "scripts/n-phase-skip.lua")
        XCTAssertEqual(out.status, 0, out.stderr)
        XCTAssertTrue(out.stdout.hasPrefix(#"{"batches":[{"phase":0,"instances":[{"id":4,"zone":null,"faultDomain":4,"updateDomain":0},{"id":5,"#), out.stdout)
        XCTAssertTrue(out.stdout.hasSuffix(#""skipped":[9],"protected":[]}"# + "\n"), out.stdout)
    }

    func testValidatePolicyAndScenario() throws {
        let good = try temporary("policy.json", #"{"mode": "Rolling", "rollingUpgradePolicy": {"MaxSurge": "true", "pauseTimeBetweenBatches": "PT2S"}}"#)
        XCTAssertEqual(try rehearse("validate", good).status, 0)
        let bad = try temporary("bad.json", #"{"mode": "Rolling", "rollingUpgradePolicy": {"maxBatchInstancePercent": 1, "pauseTimeBetweenBatches": "2S"}}"#)
        let out = try rehearse("validate", bad)
        XCTAssertEqual(out.status, 2)
        XCTAssertTrue(out.stderr.contains("maxBatchInstancePercent: 1 is out of range; allowed 5–100"), out.stderr)
        XCTAssertTrue(out.stderr.contains("pauseTimeBetweenBatches: '2S' is not an ISO 8601 duration"), out.stderr)
        let scenario = try rehearse("validate", "scripts/zonal.lua")
        XCTAssertEqual(scenario.status, 0)
        XCTAssertTrue(scenario.stdout.contains("ok (zonal, 9 instances, Rolling mode, zones 1,2,3)"), scenario.stdout)
    }

    /// `validate --output json` answers a refusal in JSON on standard output too: every problem
    /// with its place as typed fields, the exit status 2; text mode prints nothing there.
    func testValidateJsonListsEveryProblemWithItsPlace() throws {
        let bad = try temporary("bad.json", #"{"mode": "Rolling", "rollingUpgradePolicy": {"maxBatchInstancePercent": 1, "pauseTimeBetweenBatches": "2S"}}"#)
        let out = try rehearse("validate", bad, "--output", "json")
        XCTAssertEqual(out.status, 2)
        let doc = try JSONSerialization.jsonObject(with: Data(out.stdout.utf8)) as! [String: Any]
        XCTAssertEqual(doc["ok"] as? Bool, false)
        let problems = doc["problems"] as! [[String: Any]]
        XCTAssertEqual(problems.map { $0["field"] as? String }, ["upgradePolicy.rollingUpgradePolicy.maxBatchInstancePercent",
                                                               "upgradePolicy.rollingUpgradePolicy.pauseTimeBetweenBatches"])
        XCTAssertEqual(problems.map { $0["file"] as? String }, [bad, bad])
        XCTAssertEqual(problems.map { $0["exitCode"] as? Int }, [2, 2])
        XCTAssertEqual(try rehearse("validate", bad).stdout, "")
        let script = try temporary("broken.lua", "scaleset { name = \"x\", capacity = 3 }\nlocal = 1\n")
        let lua = try rehearse("validate", script, "--output", "json")
        XCTAssertEqual(lua.status, 2)
        let first = ((try JSONSerialization.jsonObject(with: Data(lua.stdout.utf8)) as! [String: Any])["problems"] as! [[String: Any]])[0]
        XCTAssertEqual(first["line"] as? Int, 2)
        XCTAssertEqual((first["file"] as? String).map { $0.hasSuffix("broken.lua") }, true)

        // A field of the script's scaleset call is the field, with the call's file and line.
        // Its path, over Lua's 60 characters for a chunk name, is given whole.
        let field = try temporary("a-scenario-whose-path-is-longer-than-lua-shows.lua", "-- one too few\nscaleset { name = \"x\", capacity = 3,\n"
            + "  upgradePolicy = { mode = \"Rolling\", rollingUpgradePolicy = { maxBatchInstancePercent = 1 } } }\n")
        let placed = ((try JSONSerialization.jsonObject(with: Data(try rehearse("validate", field, "--output", "json").stdout.utf8)) as! [String: Any])["problems"] as! [[String: Any]])[0]
        XCTAssertEqual(placed["field"] as? String, "scaleset.upgradePolicy.rollingUpgradePolicy.maxBatchInstancePercent")
        XCTAssertGreaterThan(field.count, 60)
        XCTAssertEqual(placed["file"] as? String, field)
        XCTAssertEqual(placed["line"] as? Int, 2)

        // An option's value that chose nothing is the option's problem, with its value.
        let template = try temporary("two.json", #"{"$schema": "https://schema.management.azure.com/schemas/2019-04-01/deploymentTemplate.json#", "#
            + #""contentVersion": "1.0.0.0", "resources": [{"type": "Microsoft.Compute/virtualMachineScaleSets", "name": "web", "sku": {"capacity": 2}, "#
            + #""properties": {"upgradePolicy": {"mode": "Manual"}}}]}"#)
        let chosen = try rehearse("validate", template, "--resource", "nosuch", "--output", "json")
        XCTAssertEqual(chosen.status, 2)
        let option = ((try JSONSerialization.jsonObject(with: Data(chosen.stdout.utf8)) as! [String: Any])["problems"] as! [[String: Any]])[0]
        XCTAssertEqual(option["option"] as? String, "--resource")
        XCTAssertEqual(option["value"] as? String, "nosuch")
        XCTAssertNil(option["field"])
        let context = try rehearse("validate", template, "--context", "bogus=1", "--output", "json")
        XCTAssertEqual(context.status, 2)
        let given = ((try JSONSerialization.jsonObject(with: Data(context.stdout.utf8)) as! [String: Any])["problems"] as! [[String: Any]])[0]
        XCTAssertEqual([given["option"] as? String, given["value"] as? String], ["--context", "bogus=1"])
        // A file refused whole carries the file as a field too, whatever its extension.
        let truncated = try temporary("cut.json", #"{"mode": "#)
        let whole = try rehearse("validate", truncated, "--output", "json")
        XCTAssertEqual(whole.status, 2)
        let refused = ((try JSONSerialization.jsonObject(with: Data(whole.stdout.utf8)) as! [String: Any])["problems"] as! [[String: Any]])[0]
        XCTAssertEqual(refused["file"] as? String, truncated)
        // A warning comes in JSON as well as on standard error, placed as a problem is; none: [].
        let scaled = try temporary("scaled.json", #"{"$schema": "https://schema.management.azure.com/schemas/2019-04-01/deploymentTemplate.json#", "#
            + #""contentVersion": "1.0.0.0", "resources": [{"type": "Microsoft.Compute/virtualMachineScaleSets", "name": "web", "sku": {"capacity": 2}, "#
            + #""properties": {"upgradePolicy": {"mode": "Manual"}}}, {"type": "Microsoft.Insights/autoscalesettings", "name": "grow", "#
            + #""properties": {"targetResourceUri": "[resourceId('Microsoft.Compute/virtualMachineScaleSets', 'web')]"}}]}"#)
        let warned = try rehearse("validate", scaled, "--output", "json")
        XCTAssertEqual(warned.status, 0)
        let accepted = try JSONSerialization.jsonObject(with: Data(warned.stdout.utf8)) as! [String: Any]
        XCTAssertEqual(accepted["ok"] as? Bool, true)
        let warnings = try XCTUnwrap(accepted["warnings"] as? [[String: Any]])
        XCTAssertEqual(warnings.map { $0["field"] as? String }, ["resources[1]"])
        XCTAssertEqual(warnings.map { $0["severity"] as? String }, ["warning"])
        XCTAssertEqual(warnings.map { $0["exitCode"] as? Int }, [0])
        XCTAssertEqual(warnings.map { $0["file"] as? String }, [scaled])
        let plain = try JSONSerialization.jsonObject(with: Data(try rehearse("validate", template, "--output", "json").stdout.utf8)) as! [String: Any]
        XCTAssertEqual((plain["warnings"] as? [Any])?.count, 0)
        // A document's options given with a script or a policy are refused, not passed over.
        for (target, option) in [(script, "--resource"), (bad, "--parameters"), (script, "--context")] {
            let given = try rehearse("validate", target, option, option == "--context" ? "location=x" : "x", "--output", "json")
            XCTAssertEqual(given.status, 2, "\(target) \(option)")
            let problem = ((try JSONSerialization.jsonObject(with: Data(given.stdout.utf8)) as! [String: Any])["problems"] as! [[String: Any]])[0]
            XCTAssertEqual(problem["option"] as? String, option)
        }
    }

    /// An error that cannot be written (standard error on a full device, or a pipe closed early)
    /// loses its text, not the exit status: 2, where FileHandle's write trapped (132).
    func testAnErrorThatCannotBeWrittenStillExitsTwo() throws {
        let script = try temporary("unwritable.lua", "scaleset { name = \"x\", capacity = -1 }\n")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: rehearseBinary)
        process.arguments = ["validate", script]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = try XCTUnwrap(FileHandle(forWritingAtPath: "/dev/full"))
        try process.run()
        process.waitUntilExit()
        XCTAssertEqual(process.terminationReason, .exit)
        XCTAssertEqual(process.terminationStatus, 2)
        // An accepted file whose result cannot be written on standard output is not exit 0:
        // what it printed is lost, and it says so on standard error.
        let good = try temporary("good.lua", "scaleset { name = \"x\", capacity = 3 }\n")
        let full = Process()
        full.executableURL = URL(fileURLWithPath: rehearseBinary)
        full.arguments = ["validate", good, "--output", "json"]
        full.standardOutput = try XCTUnwrap(FileHandle(forWritingAtPath: "/dev/full"))
        full.standardError = FileHandle.nullDevice
        try full.run()
        full.waitUntilExit()
        XCTAssertEqual(full.terminationReason, .exit)
        XCTAssertEqual(full.terminationStatus, 2)
    }

    func testPluginsListShowAndCheck() throws {
        let list = try rehearse("plugins", "list", "--output", "json")
        XCTAssertEqual(list.status, 0, list.stderr)
        let doc = try JSONSerialization.jsonObject(with: Data(list.stdout.utf8)) as! [String: Any]
        let bundles = doc["bundles"] as! [[String: Any]]
        XCTAssertEqual(bundles.map { $0["name"] as! String }, ["alarm-rollback", "batch-approval", "primary-replica", "slow-boot", "zone-outage-drill"])
        XCTAssertEqual(bundles.map { $0["chosen"] as? String }, ["1.0.0", "1.0.0", "1.0.0", "1.2.0", "0.3.0"])
        let slowBoot = (bundles[3]["versions"] as! [[String: Any]])[0]
        XCTAssertEqual((slowBoot["exports"] as! [String: String]).keys.sorted(), ["fault", "health"])
        XCTAssertEqual(slowBoot["folder"] as? String, "plugins/slow-boot")
        let show = try rehearse("plugins", "show", "slow-boot", "--output", "json")
        XCTAssertEqual(show.status, 0, show.stderr)
        XCTAssertEqual((try JSONSerialization.jsonObject(with: Data(show.stdout.utf8)) as! [String: Any])["chosen"] as? String, "1.2.0")
        XCTAssertEqual(try rehearse("plugins", "show", "nothing-here").status, 2)
        let check = try rehearse("plugins", "check", "--output", "json")
        XCTAssertEqual(check.status, 0, check.stderr)
        let findings = try JSONSerialization.jsonObject(with: Data(check.stdout.utf8)) as! [String: Any]
        XCTAssertEqual(findings["bundles"] as? Int, 5)
        XCTAssertEqual((findings["findings"] as! [Any]).count, 0)
    }

    func testHelpListsTheCommands() throws {
        let out = try rehearse("--help")
        for command in ["run", "plan", "validate", "plugins"] {
            XCTAssertTrue(out.stdout.contains("  \(command) "), out.stdout)
        }
    }
}
