import Formats
import Foundation
import LuaHost
import Reports
import Scenario
import UpgradeEngine
import XCTest

/// Hostile scenarios, round two: what a run as a whole may do. Nested calls cannot slip past the
/// budget, the budget's verdict and the line it names are the same on every run, actions that
/// schedule themselves and instances created without end stop at run-level limits. Each ends
/// as a typed error within seconds.
final class HostileRunTests: XCTestCase {
    let rolling = """
        scaleset { name = "web", capacity = 4, upgradePolicy = { mode = "Rolling" },
                   healthExtension = { protocol = "http", port = 80, requestPath = "/" } }
        phase(function(vm) return 0 end)

        """

    func outcome(_ body: String, _ configure: (inout RunInputs) -> Void = { _ in }) throws -> (ScenarioError?, Double) {
        let path = try writeScenario(rolling + body)
        let started = Date()
        do {
            _ = try load(path: path, options: options(), configure).run()
            return (nil, Date().timeIntervalSince(started))
        } catch let error as ScenarioError {
            return (error, Date().timeIntervalSince(started))
        }
    }

    /// The error one run of the scenario at `path` ends with, or nil.
    func runOnce(_ path: String) throws -> ScenarioError? {
        do {
            _ = try load(path: path, options: options()).run()
            return nil
        } catch let error as ScenarioError {
            return error
        }
    }

    func budgetStop(_ error: ScenarioError?) -> LuaError? {
        guard case .script(let lua, _)? = error, case .budget = lua.kind else { return nil }
        return lua
    }

    /// A loop whose every turn makes the engine call back into the script (a generic model
    /// update asks `phase` of every instance) once slipped past a watchdog that armed the hook
    /// only when no nested call happened for 10 ms.
    func testNestedCallsCannotSlipPastTheBudget() throws {
        for loop in ["while true do for i = 1, 2e5 do end update_model{} end", "while true do update_model{} end"] {
            let (error, seconds) = try outcome("at(\"PT1M\", function() \(loop) end)")
            let stop = try XCTUnwrap(budgetStop(error), "\(loop): \(String(describing: error))")
            XCTAssertEqual(stop.kind, .budget(10_000_000))
            XCTAssertTrue(stop.location?.hasSuffix("scenario.lua:4") == true, "\(stop)")
            XCTAssertLessThan(seconds, 15)
        }
    }

    /// Calls that each stay far inside their own budget but together run on: 4 instances probed
    /// every 5 s for a simulated day, 200,000 instructions a probe, is 14 billion instructions.
    /// The run's budget (lowered here to 50 million) stops it at the same count and the same line
    /// on every run, as a typed error; a generous budget lets an ordinary run finish.
    func testTheRunsInstructionBudgetBoundsManyCallsTogether() throws {
        let body = """
            health(function(vm, now)
              local x = 0
              for i = 1, 1e5 do x = x + i end
              return { applicationHealthState = "Healthy" }
            end)
            at("P1D", function() end)
            """
        let path = try writeScenario(rolling + body)
        var seen: [(String?, ScriptContext?)] = []
        for _ in 0..<3 {
            var o = options()
            o.limits.runInstructions = 50_000_000
            let started = Date()
            do {
                _ = try load(path: path, options: o).run()
                XCTFail("the run finished")
            } catch ScenarioError.script(let lua, let context) {
                XCTAssertEqual(lua.kind, .runBudget(50_000_000))
                XCTAssertTrue(lua.location?.hasSuffix("scenario.lua:6") == true, "\(lua)")
                seen.append((lua.location, context))
            }
            XCTAssertLessThan(Date().timeIntervalSince(started), 15)
        }
        // The verdict falls on the same probe of the same instance every time.
        XCTAssertTrue(seen.allSatisfy { $0 == seen[0] }, "\(seen)")
        guard case .callback("health", _, _)? = seen.first?.1 else { return XCTFail("\(seen)") }
        // An hour of the same probes is 576 million instructions: inside the default 2 billion.
        let hour = try writeScenario(rolling + body.replacingOccurrences(of: "P1D", with: "PT1H"))
        XCTAssertNoThrow(try load(path: hour, options: options()).run())
    }

    /// Scaling out and in for ever: each instance's `vm` table (and the `vm.state` a script keeps
    /// in it) goes when the instance is deleted, so 40,000 instances made over a run fit in a
    /// Lua state of 8 MiB, where keeping them all did not.
    func testDeletedInstancesTablesAreDropped() throws {
        let path = try writeScenario("""
            scaleset { name = "web", capacity = 10, model = { image = "v1" },
                       healthExtension = { protocol = "http", port = 80, requestPath = "/" } }
            health(function(vm, now)
              vm.state.seen = (vm.state.seen or 0) + 1
              vm.state.note = "instance " .. vm.id
              return { applicationHealthState = "Healthy" }
            end)
            for i = 1, 20 do
              at(i * 600 - 300, function() scale(2000) end)
              at(i * 600, function() scale(10) end)
            end
            """)
        var o = options()
        o.limits.memoryBytes = 8 << 20
        let record = try load(path: path, options: o) { $0.recordEvents = false }.run()
        XCTAssertEqual(record.summary.capacity, 10)
        XCTAssertEqual(record.instances.count, 10 + 20 * 1990)
        XCTAssertEqual(record.instances.count { $0.exists }, 10)
    }

    /// Each refusal a script catches is an `actionFailed` event and costs it 1,000 instructions:
    /// a loop of them stops at the call's budget of 10 million after about 10,000 refusals, the
    /// same way on every run, in a fraction of the CPU-time backstop.
    func testALoopOfCaughtRefusalsStopsAtTheBudgetTheSameWayEveryRun() throws {
        let path = try writeScenario(rolling + "at(\"PT1M\", function() for i = 1, 1e7 do pcall(cancel) end end)")
        let definition = try ScenarioDefinition(luaScript: path, options: options())
        var seen: [(LuaError.Kind?, Int)] = []
        for _ in 0..<2 {
            var refused = 0
            do {
                _ = try Rehearsal.run(definition, RunInputs(seed: 0), onEvent: { if $0.kind == .actionFailed { refused += 1 } })
                XCTFail("the run finished")
            } catch {
                guard case .script(let lua, _) = error.error else { return XCTFail("\(error)") }
                seen.append((lua.kind, refused))
            }
        }
        XCTAssertEqual(seen.first?.0, .budget(10_000_000))
        let refusals = try XCTUnwrap(seen.first?.1)
        XCTAssertGreaterThan(refusals, 9_000)
        XCTAssertLessThanOrEqual(refusals, 10_000)
        XCTAssertTrue(seen.allSatisfy { $0 == seen[0] }, "\(seen)")
    }

    /// About 16 million instructions in one call: over the budget of 10 million on every run,
    /// stopped at the same line, whatever the machine is doing.
    func testBudgetVerdictAndLineAreTheSameOnEveryRun() throws {
        let body = """
            health(function(vm, now)
              local x = 0
              for i = 1, 8e6 do x = x + i end
              return { applicationHealthState = "Healthy" }
            end)
            at("PT1M", function() end)
            """
        let path = try writeScenario(rolling + body)
        var seen: [LuaError] = []
        for _ in 0..<5 {
            seen.append(try XCTUnwrap(budgetStop(try runOnce(path))))
        }
        XCTAssertEqual(Set(seen.map { $0.location.map { URL(fileURLWithPath: $0).lastPathComponent } }), ["scenario.lua:6"], "\(seen)")
        XCTAssertTrue(seen.allSatisfy { $0 == seen[0] }, "\(seen)")
    }

    /// An action that schedules itself at the same instant grew until the process died; it now
    /// stops at the run's action limit, naming the `at` that asked.
    func testSelfSchedulingActionStopsAtTheActionLimit() throws {
        let (error, seconds) = try outcome("local function again() at(0, again) end\nat(0, again)")
        guard case .runLimit(let limit)? = error else { return XCTFail(String(describing: error)) }
        XCTAssertEqual(limit.limit, .actions)
        XCTAssertEqual(limit.allowed, 100_000)
        XCTAssertTrue(limit.detail.hasSuffix("scenario.lua:4"), limit.detail)
        XCTAssertLessThan(seconds, 15)
    }

    /// Scaling out and in without end creates instances without end: the instance limit stops it.
    func testEndlessScalingStopsAtTheInstanceLimit() throws {
        let body = """
            local function flap(n) return function()
              scale(n) at(os.clock() + 300, flap(n == 4 and 400 or 4))
            end end
            at(0, flap(400))
            """
        let (error, _) = try outcome(body) { $0.runLimits.instances = 5_000 }
        guard case .runLimit(let limit)? = error else { return XCTFail(String(describing: error)) }
        XCTAssertEqual(limit.limit, .instances)
        XCTAssertEqual(limit.allowed, 5_000)
    }

    /// `table.remove({}, math.mininteger)` is Lua's argument error, which `pcall` catches; it was
    /// charged as a budget stop before Lua could check the position.
    func testTableRemoveAtAnImpossiblePositionIsAnArgumentError() throws {
        let (error, _) = try outcome("""
            local ok, message = pcall(table.remove, {}, math.mininteger)
            assert(not ok and message:find("position out of bounds"), tostring(message))
            local ok2, message2 = pcall(table.insert, {}, math.maxinteger, 1)
            assert(not ok2 and message2:find("position out of bounds"), tostring(message2))
            """)
        XCTAssertNil(error)
    }

    /// Every model version keeps its attributes: model updates without end stop at the run's
    /// version limit, and a model growing an attribute per update stops at 256 attributes.
    func testModelUpdatesWithoutEndAreBounded() throws {
        let (versions, seconds) = try outcome("""
            at("PT1M", function()
              for i = 1, 1e6 do if not pcall(update_model, { image = "v" .. i }) then break end end
            end)
            """) { $0.runLimits.modelVersions = 2_000 }
        guard case .runLimit(let limit)? = versions else { return XCTFail(String(describing: versions)) }
        XCTAssertEqual(limit.limit, .modelVersions)
        XCTAssertEqual(limit.allowed, 2_000)
        XCTAssertLessThan(seconds, 15)

        let (attributes, _) = try outcome("""
            at("PT1M", function() for i = 1, 1e6 do update_model { ["k" .. i] = "v" } end end)
            """)
        guard case .script(let lua, _)? = attributes else { return XCTFail(String(describing: attributes)) }
        XCTAssertEqual(lua.kind, .runtime)
        XCTAssertTrue(lua.location?.hasSuffix("scenario.lua:4") == true, "\(lua)")
    }

    /// A 15 MB model attribute is refused with the definition; instances on one model version
    /// share one `vm.model` table, so no attribute is copied per instance.
    func testModelValuesAreBoundedAndShared() throws {
        let huge = try writeScenario("""
            scaleset { name = "web", capacity = 300, model = { image = string.rep("x", 15e6) }, upgradePolicy = { mode = "Manual" } }
            """)
        XCTAssertThrowsError(try load(path: huge, options: options())) { error in
            guard case ScenarioError.definition(let problems, _) = error else { return XCTFail("\(error)") }
            XCTAssertEqual(problems.map(\.field), ["scaleset.model"])
        }
        let (error, _) = try outcome("""
            local first = {}
            health(function(vm)
              local shared = first[vm.model.version]
              if shared == nil then first[vm.model.version] = vm.model
              elseif not rawequal(shared, vm.model) then error("vm.model is not shared") end
              return { applicationHealthState = "Healthy" }
            end)
            at("PT1M", function() update_model { image = "v2" } end)
            """)
        XCTAssertNil(error)
    }

    /// `print(s, s, s, s)` of a 25 MB string keeps 64 KiB of it and says how much it left out.
    func testPrintKeepsAtMost64KiB() throws {
        var printed: [String] = []
        let path = try writeScenario(rolling + "local s = string.rep('x', 25e6)\nprint(s, s, s, s)\n")
        _ = try load(path: path, options: options(printed: { printed.append($0) }))
        XCTAssertEqual(printed.count, 1)
        XCTAssertLessThan(printed[0].utf8.count, maxPrintBytes + 100)
        XCTAssertTrue(printed[0].hasSuffix("(\(100_000_000 - maxPrintBytes) more bytes not shown)"), String(printed[0].suffix(80)))
    }

    /// What a health answer makes the host copy is bounded: a 20 MB state string, a 20 MB raw
    /// body and 100,000-value metrics cost the host a bounded amount per probe, not their size.
    func testHealthAnswersCostTheHostABoundedCopy() throws {
        var events: [Event] = []
        let path = try writeScenario("""
            scaleset { name = "web", capacity = 300, upgradePolicy = { mode = "Rolling" },
                       healthExtension = { protocol = "http", port = 80, requestPath = "/" } }
            local big = string.rep("x", 20e6)
            health(function(vm) if vm.id % 2 == 0 then return { applicationHealthState = big } end return big end)
            at("PT1M", function() update_model { image = "v2" } end)
            """)
        let started = Date()
        let result = try load(path: path, options: options()).run { events.append($0) }
        XCTAssertLessThan(Date().timeIntervalSince(started), 15)
        XCTAssertEqual(result.summary.status?.error?.code.rawValue, "MaxUnhealthyInstancePercentExceededBeforeRollingUpgrade")
        let warnings = events.compactMap { event -> String? in
            if case .wireWarning(_, let message) = event.payload { return message }
            return nil
        }
        XCTAssertEqual(warnings.count, 300)
        XCTAssertLessThan(warnings.map(\.utf8.count).max() ?? 0, 2_000)

        let (error, seconds) = try outcome("""
            local metrics = {}
            for i = 1, 100000 do metrics[i] = i end
            health(function(vm) return { applicationHealthState = "Healthy", customMetrics = metrics } end)
            at("PT1M", function() update_model { image = "v2" } end)
            """)
        guard case .script(let lua, let context)? = error else { return XCTFail(String(describing: error)) }
        XCTAssertEqual(lua.refusal, .value(path: "value", .tooManyValues(1000)), "\(lua)")
        XCTAssertTrue(lua.location?.hasSuffix("scenario.lua:6") == true, "\(lua)")
        XCTAssertEqual(context, .callback("health", instance: "web_0", at: 60_000))
        XCTAssertLessThan(seconds, 15)
    }

    /// Every error names its file and line: the memory cap met inside a C function (Lua calls
    /// no message handler for it), the parser's own limits, `coroutine.yield` inside `phase`.
    func testEveryErrorIsPositioned() throws {
        func failure(_ text: String) throws -> LuaError? {
            let path = try writeScenario(text)
            do {
                _ = try load(path: path, options: options()).run()
                return nil
            } catch let error as ScenarioError {
                guard case .script(let lua, _) = error else { return nil }
                return lua
            }
        }
        let manual = "scaleset { name = \"w\", capacity = 2, upgradePolicy = { mode = \"Manual\" } }\n"
        let top = try XCTUnwrap(failure(manual + "local t = {}\nlocal s = string.rep('x', 1e8)\n"))
        XCTAssertEqual(top.kind, .memory(64 << 20))
        XCTAssertTrue(top.location?.hasSuffix("scenario.lua:3") == true, "\(top)")

        let nested = try XCTUnwrap(failure(rolling.replacingOccurrences(of: "phase(function(vm) return 0 end)",
            with: "phase(function(vm)\n  local s = string.rep('y', 1e8)\n  return 0\nend)") + "at('PT1M', function() pcall(update_model, { image = 'v2' }) end)\n"))
        XCTAssertEqual(nested.kind, .memory(64 << 20))
        XCTAssertTrue(nested.location?.hasSuffix("scenario.lua:4") == true, "\(nested)")

        for deep in ["local x = " + String(repeating: "(", count: 300) + "1" + String(repeating: ")", count: 300),
                     "do " + (0..<200).map { "::l\($0)::" }.joined(separator: " ") + " end"] {
            let syntax = try XCTUnwrap(failure(manual + deep))
            XCTAssertEqual(syntax.kind, .syntax)
            XCTAssertTrue(syntax.location?.hasSuffix("scenario.lua") == true, "\(syntax)")
        }

        let yield = try XCTUnwrap(failure(rolling.replacingOccurrences(of: "phase(function(vm) return 0 end)",
            with: "phase(function(vm)\n  coroutine.yield(1)\n  return 0\nend)") + "at('PT1M', function() update_model { image = 'v2' } end)\n"))
        XCTAssertEqual(yield.kind, .runtime)
        XCTAssertTrue(yield.location?.hasSuffix("scenario.lua:4") == true, "\(yield)")
    }

    /// A string that is not UTF-8 handed to the host is refused, never replaced silently.
    func testInvalidUTF8IsRefusedWhereTheHostReadsIt() throws {
        let path = try writeScenario("scaleset { name = \"w\", capacity = 1, model = { image = \"v\\xff\" }, upgradePolicy = { mode = \"Manual\" } }\n")
        XCTAssertThrowsError(try load(path: path, options: options())) { error in
            guard case ScenarioError.script(let lua, _) = error else { return XCTFail("\(error)") }
            XCTAssertEqual(lua.refusal, .value(path: "value.model.image", .notUTF8), "\(lua)")
            XCTAssertTrue(lua.location?.hasSuffix("scenario.lua:1") == true, "\(lua)")
        }
    }

    /// Operations that last six days keep every other instance probed every 5 s for six days:
    /// the run's probe limit ends it (here lowered, to keep the test short).
    func testDaysOfProbingStopAtTheProbeLimit() throws {
        let path = try writeScenario("""
            scaleset { name = "web", capacity = 1000, upgradePolicy = { mode = "Rolling" }, timings = { upgrade = "P6D" },
                       healthExtension = { protocol = "http", port = 80, requestPath = "/" } }
            at("PT1M", function() update_model { image = "v2" } end)
            """)
        XCTAssertThrowsError(try load(path: path, options: options()) { $0.runLimits.probes = 200_000 }.run()) { error in
            guard case ScenarioError.runLimit(let limit) = error else { return XCTFail("\(error)") }
            XCTAssertEqual(limit.limit, .probes)
            XCTAssertEqual(limit.allowed, 200_000)
        }
    }
}
