import Foundation
import LuaHost
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

    func outcome(_ body: String, _ configure: (inout ScenarioOptions) -> Void = { _ in }) throws -> (ScenarioError?, Double) {
        let path = try writeScenario(rolling + body)
        var o = options()
        configure(&o)
        let started = Date()
        do {
            _ = try Scenario(path: path, options: o).run()
            return (nil, Date().timeIntervalSince(started))
        } catch let error as ScenarioError {
            return (error, Date().timeIntervalSince(started))
        }
    }

    /// The error one run of the scenario at `path` ends with, or nil.
    func runOnce(_ path: String) throws -> ScenarioError? {
        do {
            _ = try Scenario(path: path, options: options()).run()
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
        var seen: Set<String> = []
        for _ in 0..<5 {
            let stop = try XCTUnwrap(budgetStop(try runOnce(path)))
            seen.insert("\(stop.location ?? "?") \(stop.message)")
        }
        XCTAssertEqual(seen.count, 1, "\(seen)")
        XCTAssertTrue(seen.first!.contains("scenario.lua:6"), "\(seen)")
    }

    /// An action that schedules itself at the same instant grew until the process died; it now
    /// stops at the run's action limit, naming the `at` that asked.
    func testSelfSchedulingActionStopsAtTheActionLimit() throws {
        let (error, seconds) = try outcome("local function again() at(0, again) end\nat(0, again)")
        guard case .runLimit(let limit)? = error else { return XCTFail(String(describing: error)) }
        XCTAssertEqual(limit.limit, "actions")
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
        XCTAssertEqual(limit.limit, "instances")
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
}
