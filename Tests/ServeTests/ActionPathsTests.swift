import AzureWire
import Formats
import Foundation
import Reports
@testable import Scenario
@testable import Serve
import UpgradeEngine
import XCTest

/// One action, three ways in: `update_policy` from a script's `at`, a typed timeline entry and
/// `rehearse serve`'s PATCH of the scale set reach the engine as the same `SessionAction` and
/// leave the same events, byte for byte.
final class ActionPathsTests: XCTestCase {
    /// Ten instances answering Healthy, batches of 20%, the model updated at PT2M; `extra` is
    /// Lua added at the end.
    static func script(_ extra: String = "") -> String {
        """
        scaleset {
          name = "web", capacity = 10, model = { image = "v1" },
          upgradePolicy = { mode = "Rolling", rollingUpgradePolicy = { maxBatchInstancePercent = 20, maxUnhealthyInstancePercent = 50, pauseTimeBetweenBatches = "PT10S" } },
          healthExtension = { protocol = "http", port = 8000, requestPath = "/health", gracePeriod = 600 },
        }
        health(function(vm, now) return { applicationHealthState = "Healthy" } end)
        at("PT2M", function() update_model { image = "v2" } end)
        \(extra)
        """
    }

    /// The fields the PATCH body and the Lua table give: batches of 50%, the rest as it was.
    static let body = #"{"properties": {"upgradePolicy": {"rollingUpgradePolicy": {"maxBatchInstancePercent": 50}}}}"#

    func load(_ text: String) throws -> ScenarioDefinition {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("actions-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let path = dir.appendingPathComponent("scenario.lua").path
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        var options = ScenarioOptions()
        options.environment = [:]
        options.print = { _ in }
        return try ScenarioDefinition(luaScript: path, options: options)
    }

    func lines(_ events: [Event]) -> [String] { events.map { $0.json.serialized(pretty: false) } }

    func testUpdatePolicyFromLuaATypedTimelineAndARESTPATCHGivesTheSameEvents() throws {
        // Lua: the table read into the action by update_policy.
        let lua = try load(Self.script(#"at("PT1M", function() update_policy { rollingUpgradePolicy = { maxBatchInstancePercent = 50 } } end)"#))
        let fromLua = try Rehearsal.run(lua, RunInputs(seed: 3)).events

        // A typed timeline: the patch as a value.
        var typed = try load(Self.script())
        let patch = PolicyPatch([.maxBatchInstancePercent(50)])
        typed.timeline.append(.init(time: 60_000, action: .perform(.updatePolicy(patch))))
        let fromTimeline = try Rehearsal.run(typed, RunInputs(seed: 3)).events

        // REST: the PATCH body read as serve reads it, performed at PT1M on a session.
        let plain = try load(Self.script())
        let session = try RehearsalSession(plain, RunInputs(seed: 3))
        try session.advance(to: 60_000)
        let update = try ScaleSetUpdate.read(try JSON.parse(Self.body), scaleSet: session.scaleSet, policy: session.policy, model: session.model)
        XCTAssertEqual(update.policy, patch)
        XCTAssertNil(try session.perform(.updatePolicy(try XCTUnwrap(update.policy))))
        let fromREST = try session.finish().events

        XCTAssertEqual(lines(fromLua), lines(fromTimeline))
        XCTAssertEqual(lines(fromLua), lines(fromREST))
        // The merge kept what was not given: the pause stays 10 s, the batch share is now 50%.
        let policy = fromLua.compactMap { event -> UpgradePolicy? in
            if case .policyUpdated(let policy, let changed, _) = event.payload {
                XCTAssertEqual(changed, ["rollingUpgradePolicy.maxBatchInstancePercent"])
                return policy
            }
            return nil
        }
        XCTAssertEqual(policy.count, 1)
        XCTAssertEqual(policy.first?.rolling.pauseTimeBetweenBatches, 10_000)
        XCTAssertEqual(policy.first?.rolling.maxBatchInstancePercent, 50)
    }

    func testAPATCHMergesIntoThePolicyInEffect() throws {
        var inEffect = UpgradePolicy(mode: .rolling)
        inEffect.rolling.maxSurge = true
        inEffect.rolling.pauseTimeBetweenBatches = 10_000
        var scaleSet = ScaleSetDefinition(name: "web", capacity: 4)
        scaleSet.loadBalancerProbe = true
        scaleSet.policy = inEffect
        let update = try ScaleSetUpdate.read(try JSON.parse(Self.body), scaleSet: scaleSet, policy: inEffect, model: [:])
        let merged = try XCTUnwrap(update.policy).applied(to: inEffect)
        XCTAssertEqual(merged.mode, .rolling)
        XCTAssertEqual(merged.rolling.maxBatchInstancePercent, 50)
        XCTAssertEqual(merged.rolling.maxSurge, true)
        XCTAssertEqual(merged.rolling.pauseTimeBetweenBatches, 10_000)
        // The same fields again change nothing: no update_policy.
        let again = try ScaleSetUpdate.read(try JSON.parse(Self.body), scaleSet: scaleSet, policy: merged, model: [:])
        XCTAssertNil(again.policy)
    }

    func testEveryActionHasItsLuaFunction() throws {
        // The Lua functions are registered from the vocabulary: each name is a function at the top level.
        let names = SessionAction.Name.allCases.map(\.rawValue)
        let checks = names.map { #"assert(type(\#($0)) == "function", "\#($0)")"# }.joined(separator: "\n")
        XCTAssertNoThrow(try load(Self.script(checks)))
    }
}
