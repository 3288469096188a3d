import Formats
import LuaHost
import Scenario
import UpgradeEngine
import XCTest

final class ScenarioAPITests: XCTestCase {
    func load(_ text: String) throws -> Loaded {
        try ScenarioTests.load(path: try writeScenario(text), options: options())
    }

    func assertScenarioError(_ text: String, contains fragments: [String], file: StaticString = #filePath, line: UInt = #line) {
        do {
            let scenario = try load(text)
            _ = try scenario.run()
            XCTFail("expected an error", file: file, line: line)
        } catch {
            let message = "\(error)"
            for fragment in fragments {
                XCTAssertTrue(message.contains(fragment), "«\(message)» lacks «\(fragment)»", file: file, line: line)
            }
        }
    }

    func testEveryDefinitionProblemAtOnce() {
        assertScenarioError("""
            scaleset { name = "web", capacity = "ten", zones = "1",
              upgradePolicy = { mode = "Rolling", rollingUpgradePolicy = { maxBatchInstancePercent = 200 } },
              healthExtension = { protocol = "ftp" }, colour = "blue" }
            """, contains: ["scenario.lua:1:", "problems in the scenario",
                            "scaleset.colour: unknown field", "scaleset.capacity: \"ten\" is not a whole number",
                            "scaleset.zones: expected a list", "maxBatchInstancePercent: 200 is out of range; allowed 5–100",
                            "scaleset.healthExtension.protocol: \"ftp\" is not a protocol"])
    }

    func testRollingWithoutHealthSourceIsABadScenario() {
        assertScenarioError("""
            scaleset { name = "web", capacity = 3, upgradePolicy = { mode = "Rolling" } }
            """, contains: ["Rolling Upgrade mode is not supported for this Virtual Machine Scale Set because a health probe or health extension was not provided."])
    }

    func testScriptWithoutScaleset() {
        assertScenarioError("health(function() return nil end)", contains: ["never calls scaleset"])
    }

    func testBlockedFunctionNamesFileAndLine() {
        assertScenarioError(baseScaleSet + "\nlocal f = io.open('/etc/passwd')", contains: ["scenario.lua:6:", "global 'io'"])
        assertScenarioError(baseScaleSet + "\nos.execute('true')", contains: ["scenario.lua:6:", "field 'execute'"])
    }

    func testRunawayHealthScriptEndsWithBudgetErrorNamingInstanceAndTime() {
        assertScenarioError(baseScaleSet + """

            health(function(vm, now)
              if vm.id == 3 and now >= 10 then while true do end end
              return { applicationHealthState = "Healthy" }
            end)
            at("PT1M", function() update_model { image = "v2" } end)
            """, contains: ["health: budget of 10000000 instructions exceeded at", "scenario.lua:7 (health of web_3 at PT10S)"])
    }

    func testMemoryHungryScriptEndsWithMemoryError() {
        assertScenarioError(baseScaleSet + """

            local hoard = {}
            health(function(vm, now)
              for i = 1, 1e7 do hoard[#hoard + 1] = string.rep("x", 64) .. i end
              return { applicationHealthState = "Healthy" }
            end)
            at("PT1M", function() update_model { image = "v2" } end)
            """, contains: ["health: memory limit of 64 MiB exceeded", "health of web_0 at PT0S"])
    }

    func testWrongHealthResultIsAScriptError() {
        assertScenarioError(baseScaleSet + "\nhealth(function(vm, now) return 42 end)\nat('PT1M', function() update_model() end)",
                            contains: ["health returned a number", "scenario.lua:6", "health of web_0 at PT0S"])
    }

    func testActionsOnlyInsideAt() {
        assertScenarioError(baseScaleSet + "\nupdate_model { image = 'v2' }", contains: ["inside an at(...) callback", "scenario.lua:6"])
    }

    func testBadArgumentsNameTheFunctionAndArgument() {
        assertScenarioError(baseScaleSet + "\nat('soon', function() end)", contains: ["bad argument #1 to 'at'", "'soon' is not an ISO 8601 duration"])
        assertScenarioError(baseScaleSet + "\nat('PT1M', function() scale('many') end)", contains: ["bad argument #1 to 'scale' (integer expected, got string)"])
        assertScenarioError(baseScaleSet + "\nhealth(1)", contains: ["bad argument #1 to 'health' (function expected, got number)"])
    }

    func testUnknownExpectationKeyIsReported() {
        assertScenarioError(baseScaleSet + "\nexpect { code = 'Completed', sucessful = 10 }", contains: ["unknown key sucessful"])
    }

    func testFailedExpectationsAreNamed() throws {
        let scenario = try load(baseScaleSet + """

            at("PT1M", function() update_model { image = "v2" } end)
            expect { code = "Faulted", successful = 3 }
            """)
        let result = try scenario.run()
        XCTAssertEqual(result.failedExpectations.map(\.key), [.code, .successful])
        XCTAssertEqual(result.failedExpectations.map(\.actual), [.text("Completed"), .count(10)])
        XCTAssertEqual(result.failedExpectations.map(\.expected), [.equal(.text("Faulted")), .equal(.count(3))])
        XCTAssertTrue(result.failedExpectations.allSatisfy { $0.location.hasSuffix("scenario.lua:7") })
    }

    func testCustomMetricsAsObjectOnTheWireWarnsAndStrictWireMakesItUnknown() throws {
        let path = try writeScenario(baseScaleSet + """

            health(function(vm, now)
              return '{"ApplicationHealthState": "Healthy", "CustomMetrics": {"RollingUpgrade": {"PhaseOrderingNumber": ' .. (vm.id % 2) .. '}}}'
            end)
            at("PT1M", function() update_model { image = "v2" } end)
            """)
        let (lenient, events) = try runScenario(path)
        XCTAssertEqual(lenient.summary.status?.code, .completed)
        let warnings = events.filter { $0.kind == .wireWarning }
        XCTAssertEqual(warnings.count, 10)
        guard case .wireWarning(let name, let message) = warnings[0].payload else { return XCTFail("\(warnings[0])") }
        XCTAssertEqual(name, "web_0")
        XCTAssertTrue(message.hasPrefix("customMetrics sent as a JSON object"), message)
        // Phase 0 (even ids) then phase 1, one update domain per batch.
        XCTAssertEqual(events.filter { $0.kind == .batchStarted }.map(\.phase), [0, 0, 0, 0, 0, 1, 1, 1, 1, 1])
        let (strict, _) = try runScenario(path, strictWire: true)
        XCTAssertEqual(strict.summary.status?.error?.code.rawValue, "MaxUnhealthyInstancePercentExceededBeforeRollingUpgrade")
    }

    func testVmTableCarriesPlacementModelAndState() throws {
        var printed: [String] = []
        let scenario = try ScenarioTests.load(path: try writeScenario("""
            scaleset { name = "web", capacity = 3, zones = { "1", "2" }, model = { image = "v1", sku = { name = "Standard_D2s_v3" } },
              upgradePolicy = { mode = "Rolling", rollingUpgradePolicy = { maxBatchInstancePercent = 50, maxUnhealthyInstancePercent = 50 } },
              healthExtension = { protocol = "http", port = 80, requestPath = "/" } }
            health(function(vm, now)
              vm.state.probes = (vm.state.probes or 0) + 1
              if vm.id == 2 and (now == 0 or now == 300) then
                print(vm.name, vm.zone, vm.faultDomain, vm.updateDomain, vm.model.version, vm.model.image, vm.model.sku.name, vm.state.probes)
              end
              return { applicationHealthState = "Healthy" }
            end)
            at("PT1M", function() update_model { image = "v2" } end)
            """), options: options(printed: { printed.append($0) }))
        _ = try scenario.run()
        // A zonal Uniform scale set has one fault domain per zone (Azure's default).
        XCTAssertEqual(printed.first, "web_2\t1\t0\t1\t1\tv1\tStandard_D2s_v3\t1")
        XCTAssertTrue(printed.last!.hasPrefix("web_2\t1\t0\t1\t2\tv2\tStandard_D2s_v3\t"), printed.last!)
        XCTAssertGreaterThan(Int(printed.last!.split(separator: "\t").last!)!, 30)
    }

    func testPhaseShorthandAndFaults() throws {
        let (result, events) = try runScenario(try writeScenario(baseScaleSet + """

            phase(function(vm) return vm.id >= 5 and 0 or 1 end)
            fault(function(vm, op, now)
              if op == "upgrade" and vm.id == 7 then return { fail = true } end
              if op == "upgrade" then return { duration = 30 } end
            end)
            at("PT1M", function() update_model { image = "v2" } end)
            """))
        XCTAssertEqual(events.filter { $0.kind == .batchStarted }.first?.phase, 0)
        XCTAssertEqual(result.summary.status?.progress.failedInstanceCount, 1)
        guard case .operationStarted(let firstOp) = events.first(where: { $0.kind == .operationStarted })?.payload else {
            return XCTFail("no operation")
        }
        XCTAssertEqual(firstOp.duration, 30_000)
    }

    func testBuiltinFaultLibraryIsSeeded() throws {
        let text = baseScaleSet + """

            local faults = require "rehearse.faults"
            health(function(vm, now) return { applicationHealthState = "Healthy" } end)
            fault(faults.boot_failures { probability = 0.3 })
            at("PT1M", function() update_model { image = "v2" } end)
            """
        let path = try writeScenario(text)
        let failedOps = { (seed: UInt64) in
            try runScenario(path, seed: seed).1.filter {
                if case .operationFinished(_, _, succeeded: false) = $0.payload { return true }
                return false
            }.compactMap(\.instance)
        }
        XCTAssertEqual(try failedOps(1), try failedOps(1))
        XCTAssertNotEqual(try failedOps(1), try failedOps(2))
    }

    func testZoneOutageAndNeverAnswerInjectors() throws {
        let (result, _) = try runScenario(try writeScenario("""
            local faults = require "rehearse.faults"
            scaleset { name = "web", capacity = 6, zones = { "1", "2", "3" }, model = { image = "v1" },
              upgradePolicy = { mode = "Rolling" },
              healthExtension = { protocol = "http", port = 80, requestPath = "/", gracePeriod = 20 } }
            health(faults.never_answer { version = 2 }(function(vm, now) return { applicationHealthState = "Healthy" } end))
            at("PT1M", function() update_model { image = "v2" } end)
            expect { code = "Faulted", errorCode = "MaxUnhealthyUpgradedInstancePercentExceededInRollingUpgrade" }
            """))
        XCTAssertEqual(result.failedExpectations, [])
    }
}

/// `plan` and `run` share one loaded scenario: its top level runs once.
final class PlanTests: XCTestCase {
    func testPlanWithoutAnUpgradeRunsTheTopLevelOnceAndSettlesFirst() throws {
        var printed: [String] = []
        let path = try writeScenario(baseScaleSet + """

            print("loaded")
            health(function(vm, now)
              if now < 20 then return nil end
              return { applicationHealthState = vm.id == 3 and "Unhealthy" or "Healthy" }
            end)
            """)
        let scenario = try ScenarioTests.load(path: path, options: options(printed: { printed.append($0) }))
        let plan = try scenario.plan()
        XCTAssertEqual(printed, ["loaded"])
        // Instance 3 settled Unhealthy (it had not answered before 20 s): with the 20% unhealthy
        // budget (2 of 10) one healthy instance may go down beside it, so batches of one.
        XCTAssertEqual(plan.batches.map(\.instances.count), Array(repeating: 1, count: 10))
        XCTAssertEqual(Set(plan.batches.flatMap { $0.instances.map(\.id) }), Set(0..<10))
    }
}

/// Validation reports every problem at once, and one problem never hides or causes another.
final class ValidationTests: XCTestCase {
    func problems(_ script: String) throws -> [Problem] {
        do {
            _ = try ScenarioTests.load(path: try writeScenario(script), options: options())
            return []
        } catch ScenarioError.definition(let problems, _) {
            return problems
        }
    }

    func testRefusedExtensionSettingsDoNotAlsoCountAsNoHealthSource() throws {
        let found = try problems("""
            scaleset { name = "web", capacity = 4, upgradePolicy = { mode = "Rolling" },
                       healthExtension = { protocol = "tcp", requestPath = "/", intervalInSeconds = 100 } }
            """)
        XCTAssertEqual(found.map(\.field), ["scaleset.healthExtension.requestPath", "scaleset.healthExtension.intervalInSeconds",
                                            "scaleset.healthExtension.port"])
        // With no extension at all, the missing health source is the one problem.
        XCTAssertEqual(try problems("scaleset { name = 'web', capacity = 4, upgradePolicy = { mode = 'Rolling' } }").map(\.field),
                       ["scaleset.upgradePolicy.mode"])
    }
}

/// A health answer as a Lua table is judged like the same answer as a body: keys are
/// case-insensitive on the wire, so they are in a table too.
final class HealthAnswerCasingTests: XCTestCase {
    func phases(_ answer: String) throws -> [Int?] {
        let path = try writeScenario(baseScaleSet + """

            health(function(vm, now)
              local phase = vm.id % 2
              return \(answer)
            end)
            at("PT1M", function() update_model { image = "v2" } end)
            """)
        let (result, events) = try runScenario(path)
        XCTAssertEqual(result.summary.status?.code, .completed)
        return events.filter { $0.kind == .batchStarted }.map(\.phase)
    }

    func testOtherCasingsOfStateAndMetricsInATableMatchTheBody() throws {
        let metrics = #"'{"rollingUpgrade": {"PhaseOrderingNumber": ' .. phase .. '}}'"#
        let body = try phases(#"'{"APPLICATIONHEALTHSTATE": "Healthy", "customMETRICS": ' .. string.format("%q", "{\"rollingUpgrade\": {\"PhaseOrderingNumber\": " .. phase .. "}}") .. '}'"#)
        let table = try phases("{ APPLICATIONHEALTHSTATE = \"Healthy\", customMETRICS = \(metrics) }")
        let usual = try phases("{ applicationHealthState = \"Healthy\", customMetrics = \(metrics) }")
        XCTAssertEqual(usual, [0, 0, 0, 0, 0, 1, 1, 1, 1, 1])
        XCTAssertEqual(table, usual)
        XCTAssertEqual(body, usual)
    }
}

/// Custom metrics count only from Healthy answers (SPEC §3): an instance still Initializing when
/// an upgrade starts gets no phase and is named, in run and in plan alike.
final class MetricsFromHealthyAnswersTests: XCTestCase {
    let script = baseScaleSet + """

        health(function(vm, now)
          if vm.id == 3 and now < 600 then return nil end   -- 3 has not answered at 1 min
          return { applicationHealthState = "Healthy",
                   customMetrics = { rollingUpgrade = { PhaseOrderingNumber = vm.id == 3 and 0 or 1 } } }
        end)
        at("PT1M", function() update_model { image = "v2" } end)
        """

    func testInitializingInstanceGetsNoPhaseAndIsNamedInRunAndPlan() throws {
        let path = try writeScenario(script)
        let (_, events) = try runScenario(path)
        let named = events.compactMap { event -> [Int]? in
            if case .metricsMissing(let ids) = event.payload { return ids }
            return nil
        }
        XCTAssertEqual(named, [[3]])
        // 3 would lead as phase 0; without metrics it goes last, unphased.
        XCTAssertEqual(events.filter { $0.kind == .batchStarted }.map(\.phase).last, .some(nil))

        var planned: [[Int]] = []
        let plan = try ScenarioTests.load(path: path, options: options()).plan { event in
            if case .metricsMissing(let ids) = event.payload { planned.append(ids) }
        }
        XCTAssertEqual(plan.withoutMetrics, [3])
        XCTAssertEqual(planned, [[3]])
        XCTAssertNil(plan.batches.last?.phase)
        XCTAssertEqual(plan.batches.last?.instances.map(\.id).contains(3), true)
    }

    func testPhaseShorthandIsRefusedWithBinaryStatesOrTcp() throws {
        for health in [#"{ protocol = "tcp", port = 22 }"#, #"{ protocol = "http", port = 80, requestPath = "/", typeHandlerVersion = "1.0" }"#] {
            let path = try writeScenario("""
                scaleset { name = "web", capacity = 4, upgradePolicy = { mode = "Rolling" }, healthExtension = \(health) }
                phase(function(vm) return 0 end)
                """)
            do {
                _ = try ScenarioTests.load(path: path, options: options())
                XCTFail("accepted with \(health)")
            } catch ScenarioError.definition(let problems, _) {
                XCTAssertEqual(problems.count, 1)
                XCTAssertTrue(problems[0].field.hasPrefix("phase at "), problems[0].field)
            }
        }
    }

    func testDeferralWithoutTheDeferralPolicyIsRefusedAtLoad() throws {
        let path = try writeScenario("""
            scaleset { name = "web", capacity = 4, upgradePolicy = { automaticOSUpgradePolicy = { enableAutomaticOSUpgrade = true } },
              healthExtension = { protocol = "http", port = 80, requestPath = "/" } }
            deferral(function(vm) return true end)
            """)
        do {
            _ = try ScenarioTests.load(path: path, options: options())
            XCTFail("accepted a deferral that is never called")
        } catch ScenarioError.definition(let problems, _) {
            XCTAssertEqual(problems.count, 1)
            XCTAssertTrue(problems[0].field.hasPrefix("deferral at ") && problems[0].field.hasSuffix("scenario.lua:3"), problems[0].field)
        }
    }

    func testReleaseImageAndApproveFromAScript() throws {
        let path = try writeScenario("""
            scaleset { name = "web", capacity = 2, updateDomains = 1, model = { image = "a" },
              upgradePolicy = { automaticOSUpgradePolicy = { enableAutomaticOSUpgrade = true, osRollingUpgradeDeferral = true } },
              healthExtension = { protocol = "http", port = 80, requestPath = "/" } }
            deferral(function(vm) return vm.id == 0 end)
            at("PT1M", function()
              local ok = pcall(release_image, {})
              assert(not ok, "release_image without a version must fail")
              release_image { version = "b" }
            end)
            at("PT30M", function() approve_os_upgrade "*" end)
            """)
        let (result, events) = try runScenario(path)
        XCTAssertEqual(result.summary.status?.code, .completed)
        XCTAssertEqual(result.instances.map(\.modelVersion), [2, 2])
        let approved = events.filter { $0.kind == .osUpgradeApproved }
        XCTAssertEqual(approved.map(\.instance), [0])
        XCTAssertEqual(approved.map(\.time), [1_800_000])
    }
}
