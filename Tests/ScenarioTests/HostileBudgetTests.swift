import Foundation
import LuaHost
import Scenario
import UpgradeEngine
import XCTest

/// Budgets that give the same answer whatever the machine's load and the number of jobs, and
/// host work on what a script returns that is bounded or charged.
final class HostileBudgetTests: XCTestCase {
    let twoInstances = """
        scaleset { name = "web", capacity = 2, upgradePolicy = { mode = "Rolling" },
                   healthExtension = { protocol = "http", port = 80, requestPath = "/" } }

        """

    func definition(_ body: String, limits: LuaLimits = LuaLimits()) throws -> ScenarioDefinition {
        var o = options()
        o.limits = limits
        return try ScenarioDefinition(luaScript: try writeScenario(twoInstances + body), options: o)
    }

    /// The failure a sweep throws, or nil when it finished.
    func sweepFailure(_ definition: ScenarioDefinition, seeds: [UInt64], jobs: Int) -> RunFailure? {
        do {
            _ = try Sweep.run(definition, seeds: seeds, jobs: jobs)
            return nil
        } catch {
            return error as? RunFailure
        }
    }

    /// The kind of the script error that ended a run.
    func luaKind(_ failure: RunFailure?) -> LuaError.Kind? {
        guard case .script(let lua, _)? = failure?.error else { return nil }
        return lua.kind
    }

    /// Some seeds hang in a backtracking pattern, some raise a plain error. The pattern is counted
    /// like any Lua code, so its seed fails with the budget, in its place: whichever comes first
    /// in the sweep's order is named, with one job or eight (the watchdog ended the process from
    /// whichever thread's pattern had run 5 s, naming that seed).
    func testAPatternThatHangsFailsInItsPlaceWhateverTheJobs() throws {
        let definition = try ScenarioDefinition(luaScript: repositoryRoot + "/Tests/Budget/hang-or-fail.lua", options: options())
        var hangs: [UInt64] = [], errors: [UInt64] = [], passes: [UInt64] = []
        for seed in UInt64(0)..<40 {
            do {
                _ = try Rehearsal.run(definition, seed: seed)
                passes.append(seed)
            } catch {
                switch luaKind(error) {
                case .budget?: hangs.append(seed)
                case .runtime?: errors.append(seed)
                default: XCTFail("seed \(seed): \(error)")
                }
            }
        }
        let hang = try XCTUnwrap(hangs.first), error = try XCTUnwrap(errors.first)
        XCTAssertGreaterThanOrEqual(passes.count, 8)
        for order in [[hang, error], [error, hang]] {
            // Passing seeds around them, so several threads are busy at once.
            let seeds = Array(passes.prefix(4)) + order + Array(passes.dropFirst(4).prefix(4))
            for jobs in [1, 8] {
                let failure = sweepFailure(definition, seeds: seeds, jobs: jobs)
                XCTAssertEqual(failure?.seed, order[0], "order \(order), jobs \(jobs)")
                XCTAssertEqual(luaKind(failure), order[0] == hang ? .budget(10_000_000) : .runtime, "order \(order), jobs \(jobs)")
            }
        }
        let all = Array(UInt64(0)..<40)
        XCTAssertEqual(sweepFailure(definition, seeds: all, jobs: 1)?.seed, min(hang, error))
        XCTAssertEqual(sweepFailure(definition, seeds: all, jobs: 8)?.seed, min(hang, error))
    }

    /// The body of the issue: 64 KiB of nested JSON, the same string on every probe.
    let bigBody = """
        local parts = {}
        for i = 1, 700 do
          parts[i] = string.format('{"k%03d":[%d,{"x":"%s","y":[true,null,{"z":1.5}]}]}', i, i, string.rep("y", 40))
        end
        body = '{"applicationHealthState":"Healthy","data":[' .. table.concat(parts, ",") .. ']}'
        assert(#body > 60000 and #body < 65536, #body)

        """

    /// A simulated day of four instances each answering that body: the very same Lua string
    /// again is neither copied nor parsed again, so the day ends (it took 70 s, parsing 4.5 GB).
    func testTheSameLargeBodyEveryProbeIsJudgedOnce() throws {
        let path = try writeScenario("""
            scaleset { name = "web", capacity = 4, upgradePolicy = { mode = "Rolling" },
                       healthExtension = { protocol = "http", port = 80, requestPath = "/" } }
            \(bigBody)
            health(function(vm) return body end)
            at("P1D", function() end)
            """)
        var events: [Event] = []
        let record = try load(path: path, options: options()).run { events.append($0) }
        XCTAssertGreaterThanOrEqual(record.summary.probes, 4 * 17_280)
        XCTAssertEqual(record.summary.endTime, 86_400_000)
        XCTAssertFalse(events.contains { $0.kind == .wireWarning })
        XCTAssertEqual(events.filter { $0.kind == .healthChanged }.count, 4, "each instance became Healthy once")
    }

    /// A body that differs on every probe (here one space more or less) is copied and judged
    /// each time: that work is charged to the run's instructions, four per byte, so the run's
    /// budget bounds it as it bounds Lua code. The same in the `{ status, body }` form.
    func testEveryNewBodyIsChargedToTheRun() throws {
        var limits = LuaLimits()
        limits.runInstructions = 20_000_000
        for answer in ["body .. string.rep(' ', n % 2)", "{ status = 200, body = body .. string.rep(' ', n % 2) }"] {
            let definition = try definition(bigBody + """
                local n = 0
                health(function(vm) n = n + 1 return \(answer) end)
                at("PT1H", function() end)
                """, limits: limits)
            XCTAssertThrowsError(try Rehearsal.run(definition, RunInputs(limits: limits)), answer) { error in
                guard let failure = error as? RunFailure, case .script(let lua, _) = failure.error else { return XCTFail("\(error)") }
                XCTAssertEqual(lua.kind, .runBudget(20_000_000), answer)
                XCTAssertEqual(lua.function, "health", answer)
            }
            // The same answer every time costs nothing: an hour passes.
            let same = try self.definition(bigBody + """
                health(function(vm) return \(answer.replacingOccurrences(of: " .. string.rep(' ', n % 2)", with: "")) end)
                at("PT1H", function() end)
                """, limits: limits)
            XCTAssertEqual(try Rehearsal.run(same, RunInputs(limits: limits)).summary.endTime, 3_600_000, answer)
        }
    }
}
