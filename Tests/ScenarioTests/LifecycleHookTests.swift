import Foundation
import Formats
import LuaHost
import Scenario
import UpgradeEngine
import XCTest

/// Answers each lifecycle hook event with what `decide` says (a team's automation in Swift).
final class ClosureHookAnswers: HookAnswerSource {
    let decide: (LifecycleHookEvent, Millis) -> HookResponse?
    init(_ decide: @escaping (LifecycleHookEvent, Millis) -> HookResponse?) { self.decide = decide }
    func answer(_ event: LifecycleHookEvent, at time: Millis) throws -> HookResponse? { decide(event, time) }
}

/// Lifecycle hooks (SPEC §6b) on Swift definitions: the numbers are worked out by hand.
///
/// The fleet: 10 instances with automatic OS image upgrades and the default policy (20/20/20,
/// no pause), so 2 instances per batch and 5 batches. The image is released at 1 min.
final class LifecycleHookTests: XCTestCase {
    static let release: Millis = 60_000
    static let twelveMinutes: Millis = 720_000
    static let thirtyMinutes: Millis = 1_800_000

    static func fleet(hooks: [LifecycleHook]) -> ScaleSetDefinition {
        var scaleSet = ScaleSetDefinition(name: "web", capacity: 10)
        scaleSet.model = ["image": "2026.01.01"]
        scaleSet.policy.mode = .manual
        scaleSet.policy.automaticOS.enableAutomaticOSUpgrade = true
        scaleSet.healthExtension = HealthExtensionSettings(protocol: .http, port: 8000, requestPath: "/health")
        scaleSet.lifecycleHooks = hooks
        return scaleSet
    }

    static let batchHook = LifecycleHook(type: .upgradeAutoOSRollingBatchStarting, waitDuration: thirtyMinutes, defaultAction: .approve)

    func run(hooks: [LifecycleHook], answers: @escaping @Sendable () -> (any HookAnswerSource)? = { nil },
             timeline: [ScenarioDefinition.TimelineEntry] = []) throws -> RunRecord {
        let behaviours = SwiftBehaviours { _ in Behaviours(hooks: answers()) }
        let definition = ScenarioDefinition(path: "hooks (Swift)", scaleSet: Self.fleet(hooks: hooks), behaviour: .swift(behaviours),
                                            timeline: [.init(time: Self.release, action: .perform(.releaseImage(version: "2026.02.01")))] + timeline)
        return try Rehearsal.run(definition, RunInputs(seed: 1))
    }

    private func completions(_ record: RunRecord) -> [HookCompletion] {
        record.events.compactMap { if case .hookCompleted(let outcome) = $0.payload { return outcome } else { return nil } }
    }

    private func batchStarts(_ record: RunRecord) -> [Millis] {
        record.events.compactMap { $0.kind == .batchStarted ? $0.time : nil }
    }

    // MARK: Done when

    /// Approving 12 minutes after each event is raised delays each of the 5 batches by exactly
    /// 12 minutes (720 s is a whole number of 5 s probe intervals, so nothing else shifts): the
    /// upgrade ends 5 × 12 min = 3,600 s later than without the hook.
    func testApprovalAfterTwelveMinutesFinishesFiveTimesTwelveMinutesLater() throws {
        let plain = try run(hooks: [])
        let gated = try run(hooks: [Self.batchHook], answers: {
            ClosureHookAnswers { _, _ in HookResponse(approve: .all, after: LifecycleHookTests.twelveMinutes) }
        })
        XCTAssertEqual(plain.summary.status?.code, .completed)
        XCTAssertEqual(gated.summary.status?.code, .completed)
        XCTAssertEqual(gated.summary.status?.progress.successfulInstanceCount, 10)
        let plainEnd = try XCTUnwrap(plain.summary.upgradeEnded), gatedEnd = try XCTUnwrap(gated.summary.upgradeEnded)
        XCTAssertEqual(gatedEnd - plainEnd, 5 * Self.twelveMinutes)
        XCTAssertEqual(gated.summary.hooks.batchWaits, Array(repeating: Self.twelveMinutes, count: 5))
        XCTAssertEqual(gated.summary.hooks.totalBatchWait, 3_600_000)
        XCTAssertEqual(gated.summary.hooks.defaultedEvents, 0)
        // Batch k starts 12 min × k later than it does without the hook.
        let plainStarts = batchStarts(plain), gatedStarts = batchStarts(gated)
        XCTAssertEqual(plainStarts.count, 5)
        XCTAssertEqual(zip(gatedStarts, plainStarts).map { $0 - $1 }, (1...5).map { Millis($0) * Self.twelveMinutes })
        // The first event is raised at the release (1 min) and waits until 1 min + 30 min.
        let first = try XCTUnwrap(gated.events.first { $0.kind == .hookRaised })
        XCTAssertEqual(first.time, Self.release)
        guard case .hookRaised(_, .upgradeAutoOSRollingBatchStarting, let targets, let waitUntil, let maxWaitUntil, .approve) = first.payload else {
            return XCTFail("not a batch event: \(first.payload)")
        }
        XCTAssertEqual(targets.count, 2)
        XCTAssertEqual(waitUntil, Self.release + Self.thirtyMinutes)
        XCTAssertEqual(maxWaitUntil, Self.release + 4 * 3_600_000)
    }

    /// Rejecting instance 3 leaves it on the old image, skipped with the hook as its reason; the
    /// other 9 upgrade and the upgrade completes.
    func testRejectingInstanceThreeLeavesItOnTheOldImageWithTheHookAsReason() throws {
        let record = try run(hooks: [Self.batchHook], answers: {
            ClosureHookAnswers { event, _ in
                event.targets.contains { $0.instance == 3 } ? HookResponse(reject: .instances([3]), approve: .all) : HookResponse(approve: .all)
            }
        })
        XCTAssertEqual(record.summary.status?.code, .completed)
        XCTAssertEqual(record.summary.status?.progress.successfulInstanceCount, 9)
        XCTAssertEqual(record.summary.hooks.rejected, [3])
        let three = try XCTUnwrap(record.instances.first { $0.id == 3 })
        XCTAssertEqual(three.modelVersion, 1)
        XCTAssertEqual(three.leftBehind, .rejectedByHook)
        XCTAssertEqual(record.instances.filter { $0.modelVersion == 2 }.count, 9)
        // Every answer came at once: no batch waited.
        XCTAssertEqual(record.summary.hooks.batchWaits, [0, 0, 0, 0, 0])
        XCTAssertEqual(completions(record).map(\.rejectedInstances).filter { !$0.isEmpty }, [[3]])
    }

    /// Nobody answers: every batch's event gets its defaultAction (Approve) at waitUntil, 30 min
    /// after it was raised; the upgrade ends 5 × 30 min later than without the hook.
    func testUnansweredEventsGetTheDefaultActionAtWaitUntilInEveryBatch() throws {
        let plain = try run(hooks: [])
        let record = try run(hooks: [Self.batchHook])
        let outcomes = completions(record)
        XCTAssertEqual(outcomes.count, 5)
        XCTAssertEqual(outcomes.map(\.defaulted), [2, 2, 2, 2, 2])
        XCTAssertEqual(outcomes.map(\.waited), Array(repeating: Self.thirtyMinutes, count: 5))
        XCTAssertEqual(record.summary.hooks.defaultedEvents, 5)
        XCTAssertEqual(record.summary.hooks.defaultedTargets, 10)
        XCTAssertEqual(try XCTUnwrap(record.summary.upgradeEnded) - (try XCTUnwrap(plain.summary.upgradeEnded)), 5 * Self.thirtyMinutes)
        XCTAssertEqual(record.summary.status?.progress.successfulInstanceCount, 10)
    }

    // MARK: Decisions of §6b

    /// A partly decided batch waits for the rest (here until waitUntil, whose default is Reject):
    /// instance approved at once goes only when the event completes, 30 min later, and the
    /// undecided one is rejected by default.
    func testAPartlyDecidedBatchWaitsForWaitUntil() throws {
        let rejecting = LifecycleHook(type: .upgradeAutoOSRollingBatchStarting, waitDuration: Self.thirtyMinutes, defaultAction: .reject)
        let record = try run(hooks: [rejecting], answers: {
            ClosureHookAnswers { event, _ in HookResponse(approve: .instances([event.targets[0].instance!])) }
        })
        let outcomes = completions(record)
        XCTAssertEqual(outcomes.count, 5)
        XCTAssertEqual(outcomes.map(\.approved), [1, 1, 1, 1, 1])
        XCTAssertEqual(outcomes.map(\.defaulted), [1, 1, 1, 1, 1])
        XCTAssertEqual(record.summary.hooks.rejected.count, 5)
        XCTAssertEqual(record.summary.status?.progress.successfulInstanceCount, 5)
        // The first batch starts when its event completes: release + 30 min.
        XCTAssertEqual(batchStarts(record).first, Self.release + Self.thirtyMinutes)
    }

    /// A batch whose targets are all rejected is passed over: no batch starts for it.
    func testABatchAllRejectedIsPassedOver() throws {
        let record = try run(hooks: [Self.batchHook], answers: {
            ClosureHookAnswers { event, _ in event.number == 1 ? HookResponse(reject: .all) : HookResponse(approve: .all) }
        })
        XCTAssertEqual(record.summary.hooks.rejected.count, 2)
        // The batch passed over takes no number: the next event still stands before batch 1.
        let batches = record.events.compactMap { event -> Int? in event.kind == .hookRaised ? event.batch : nil }
        XCTAssertEqual(batches, [1, 1, 2, 3, 4])
        XCTAssertEqual(batchStarts(record).count, 4)
        XCTAssertEqual(record.summary.status?.progress.successfulInstanceCount, 8)
        XCTAssertEqual(record.summary.status?.code, .completed)
        XCTAssertEqual(record.instances.filter { $0.leftBehind == .rejectedByHook }.count, 2)
    }

    /// The scheduling hook: nobody answers, so the upgrade is scheduled at waitUntil, one hour
    /// (the type's default wait) after the release; rejected, the image never changes.
    func testSchedulingHookHoldsTheUpgradeUntilApprovedAndRejectedKeepsTheImage() throws {
        let scheduling = LifecycleHook(type: .upgradeAutoOSScheduling)
        XCTAssertEqual(scheduling.waitDuration, 3_600_000)
        let waited = try run(hooks: [scheduling])
        let started = try XCTUnwrap(waited.events.first { $0.kind == .upgradeStarted })
        XCTAssertEqual(started.time, Self.release + 3_600_000)
        XCTAssertEqual(waited.summary.status?.code, .completed)

        let rejected = try run(hooks: [scheduling], answers: { ClosureHookAnswers { _, _ in HookResponse(reject: .all) } })
        XCTAssertFalse(rejected.events.contains { $0.kind == .upgradeStarted })
        XCTAssertEqual(rejected.summary.hooks.rejectedSchedules, 1)
        XCTAssertEqual(rejected.instances.map(\.modelVersion), Array(repeating: 1, count: 10))
    }

    /// A client moves waitUntil later (never past maxWaitUntil) and answers from the timeline:
    /// the first event is delayed to 45 min, the timeline approves at 20 min after the release.
    func testWaitUntilMovesAndATimelineAnswerCompletesTheEvent() throws {
        let record = try run(hooks: [Self.batchHook], answers: {
            ClosureHookAnswers { event, _ in event.batch == 1 ? HookResponse(waitFor: 45 * 60_000) : HookResponse(approve: .all) }
        }, timeline: [.init(time: Self.release + 20 * 60_000, action: .perform(.answerHook(event: nil, HookResponse(approve: .all))))])
        XCTAssertEqual(record.summary.hooks.batchWaits.first, 20 * 60_000)
        XCTAssertEqual(batchStarts(record).first, Self.release + 20 * 60_000)
        let moved = record.events.compactMap { event -> Millis? in
            if case .hookAnswered(_, _, let until?, _) = event.payload { return until } else { return nil }
        }
        XCTAssertEqual(moved, [Self.release + 45 * 60_000])

        // Past maxWaitUntil (4 h for a batch event) is refused, and the refusal is an event.
        let refused = try run(hooks: [Self.batchHook], timeline: [
            .init(time: Self.release + 60_000, action: .perform(.answerHook(event: nil, HookResponse(waitFor: 5 * 3_600_000)))),
        ])
        let failure = refused.events.compactMap { event -> String? in
            if case .actionFailed(_, let message) = event.payload { return message } else { return nil }
        }
        XCTAssertEqual(failure.count, 1)
        XCTAssertEqual(refused.summary.hooks.defaultedEvents, 5)
    }

    /// The profile's limits: a type twice, a wait over the type's maximum.
    func testProfileLimitsAreRefused() {
        var hooks = [Self.batchHook, Self.batchHook]
        XCTAssertEqual(ScaleSetDefinition.hookProblems(hooks).map(\.field), ["lifecycleHooksProfile.lifecycleHooks[1].type"])
        hooks = [LifecycleHook(type: .upgradeAutoOSRollingBatchStarting, waitDuration: 4 * 3_600_000 + 1_000)]
        XCTAssertEqual(ScaleSetDefinition.hookProblems(hooks).map(\.field), ["lifecycleHooksProfile.lifecycleHooks[0].waitDuration"])
        hooks = [LifecycleHook(type: .upgradeAutoOSScheduling, waitDuration: 48 * 3_600_000)]
        XCTAssertEqual(ScaleSetDefinition.hookProblems(hooks), [])
    }

    // MARK: Lua

    static func luaScenario(_ body: String) -> String {
        """
        scaleset {
          name = "web", capacity = 10, model = { image = "2026.01.01" },
          upgradePolicy = { mode = "Manual", automaticOSUpgradePolicy = { enableAutomaticOSUpgrade = true } },
          healthExtension = { protocol = "http", port = 8000, requestPath = "/health" },
          lifecycleHooksProfile = { lifecycleHooks = { { type = "UpgradeAutoOSRollingBatchStarting", waitDuration = "PT30M" } } },
        }
        at("PT1M", function() release_image { version = "2026.02.01" } end)
        \(body)
        """
    }

    /// answer_hook from the timeline approves the first event at 5 min (it waited 4 min); the
    /// other four wait for their default action (30 min each); the profile's defaultAction left
    /// out is Approve.
    func testAnswerHookFromTheTimeline() throws {
        let loaded = try load(path: try writeScenario(Self.luaScenario("at(\"PT5M\", function() answer_hook(\"approve\") end)")), options: options())
        let record = try loaded.run()
        XCTAssertEqual(record.summary.hooks.batchWaits, [240_000] + Array(repeating: Self.thirtyMinutes, count: 4))
        XCTAssertEqual(record.summary.hooks.defaultedEvents, 4)
        let via = record.events.compactMap { event -> String? in
            if case .hookAnswered(_, _, _, let via) = event.payload { return via } else { return nil }
        }
        XCTAssertEqual(via, ["answer_hook"])
    }

    /// on_hook returning something it cannot mean is a script error at the function.
    func testOnHookReturningNonsenseIsAnError() throws {
        let loaded = try load(path: try writeScenario(Self.luaScenario("on_hook(function(event) return 42 end)")), options: options())
        XCTAssertThrowsError(try loaded.run()) { error in
            guard case .script(let lua, _)? = error as? ScenarioError else { return XCTFail("\(error)") }
            XCTAssertEqual(lua.function, "on_hook")
        }
    }

    /// on_hook without a lifecycle hook profile would never be called: refused at load.
    func testOnHookWithoutHooksIsRefused() throws {
        let text = Self.luaScenario("on_hook(function(event) return \"approve\" end)").replacingOccurrences(of: "lifecycleHooksProfile", with: "-- lifecycleHooksProfile")
        XCTAssertThrowsError(try load(path: try writeScenario(text), options: options()))
    }

    /// A plugin bundle ships an approval policy, a function the script gives to on_hook: the
    /// shipped batch-approval approves each batch 12 minutes after its event, rejecting the held id.
    func testABundleShipsAnApprovalPolicy() throws {
        var o = options()
        o.pluginPath = [repositoryRoot + "/plugins"]
        let text = Self.luaScenario("on_hook(require(\"batch-approval\").approve { after = \"PT12M\", hold = \"3\" })")
        let record = try load(path: try writeScenario(text), options: o).run()
        XCTAssertEqual(record.summary.hooks.batchWaits, Array(repeating: Self.twelveMinutes, count: 5))
        XCTAssertEqual(record.summary.hooks.rejected, [3])
        XCTAssertEqual(record.instances.first { $0.id == 3 }?.leftBehind, .rejectedByHook)
    }

    /// A sweep's hook figures from real runs: of three runs (answered at 12 min, unanswered,
    /// instance 3 rejected at once) a defaultAction fired in one (1 of 3); the batch waits per
    /// upgrade are 0, 3,600 and 9,000 s; `defaultAction <= 10%` counts the one run.
    func testSweepFiguresAndRequirementsOnHooks() throws {
        let approved = try run(hooks: [Self.batchHook], answers: {
            ClosureHookAnswers { _, _ in HookResponse(approve: .all, after: LifecycleHookTests.twelveMinutes) }
        })
        let unanswered = try run(hooks: [Self.batchHook])
        let rejecting = try run(hooks: [Self.batchHook], answers: {
            ClosureHookAnswers { event, _ in HookResponse(reject: event.targets.contains { $0.instance == 3 } ? .instances([3]) : nil, approve: .all) }
        })
        let digests = [approved, unanswered, rejecting].map(RunDigest.init)
        let report = SweepReport(scenario: "hooks", seeds: SeedRange(1, 3), overrides: [], runs: digests, expectations: [], deadline: nil)
        XCTAssertEqual(report.defaultActionFired, Share(1, of: 3))
        XCTAssertEqual(report.hookWait.sorted, [0, 3_600, 9_000])
        XCTAssertEqual(report.hookRejectedMostOften().map(\.id), [3])
        let requirement = try Requirement.parse("defaultAction <= 10%").get()
        XCTAssertEqual(requirement.share(of: digests, keys: [], deadline: nil), Share(1, of: 3))
        XCTAssertEqual(try Requirement.parse("hookRejected >= 50%").get().share(of: digests, keys: [], deadline: nil), Share(1, of: 3))
        // Without hooks a sweep has no hook figures.
        XCTAssertNil(SweepReport(scenario: "plain", seeds: SeedRange(1, 1), overrides: [], runs: [RunDigest(try run(hooks: []))],
                                 expectations: [], deadline: nil).defaultActionFired)
    }
}
