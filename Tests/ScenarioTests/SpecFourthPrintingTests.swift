import AzureWire
import Formats
import Reports
import Scenario
import UpgradeEngine
import XCTest

/// SPEC's fourth printing (issue 28): seed 001's own workflow (Manual, the extension added to the
/// model, the instances upgraded, then Rolling), the extension as part of the model, reimage,
/// "failed or unhealthy" first, refused versus unanswered probes, seed 002's REST extension body.
final class SpecFourthPrintingTests: XCTestCase {
    /// Runs `text` and returns the record, its events and what the script printed.
    private func run(_ text: String) throws -> (RunRecord, [Event], [String]) { try runScript(text) }

    /// The events of rolling upgrade `number` (from its start to the next one's).
    private func upgrade(_ number: Int, of events: [Event]) -> [Event] {
        var current = 0
        return events.filter { event in
            if case .upgradeStarted(let n, _, _, _, _, _, _, _) = event.payload { current = n }
            return current == number
        }
    }

    /// 10 instances in Rolling mode whose health extension gives a slow boot 600 s of grace.
    private let slowBootScaleSet = """
        scaleset {
          name = "web", capacity = 10, model = { image = "v1" },
          upgradePolicy = { mode = "Rolling", rollingUpgradePolicy = { prioritizeUnhealthyInstances = true } },
          healthExtension = { protocol = "http", port = 8000, requestPath = "/health", gracePeriod = 600 },
        }
        """

    /// `slowBootScaleSet` as a Swift definition: its applications refuse connections for `boot`
    /// ms after each (re)start, `faults` (made once per run) decide operations, and `timeline`.
    private func slowBootFleet(bootsIn boot: Millis, faults: @escaping @Sendable () -> ClosureFaultInjector,
                               at timeline: [(Millis, SessionAction)]) -> ScenarioDefinition {
        var scaleSet = ScaleSetDefinition(name: "web", capacity: 10)
        scaleSet.model = ["image": "v1"]
        scaleSet.policy.mode = .rolling
        scaleSet.policy.rolling.prioritizeUnhealthyInstances = true
        scaleSet.healthExtension = HealthExtensionSettings(protocol: .http, port: 8000, requestPath: "/health", gracePeriod: 600)
        let behaviours = SwiftBehaviours { _ in
            Behaviours(health: ClosureHealthSource { vm, now in now - vm.health.startedAt < boot ? .noAnswer : .named(.healthy) }, faults: faults())
        }
        return ScenarioDefinition(path: "slow boots (Swift)", scaleSet: scaleSet, behaviour: .swift(behaviours),
                                  timeline: timeline.map { .init(time: $0.0, action: .perform($0.1)) })
    }

    /// A health function whose application refuses connections for `seconds` after each (re)start.
    private func bootsIn(_ seconds: Int) -> String {
        """
        health(function(vm, now)
          if now - vm.startedAt < \(seconds) then return nil end
          return { applicationHealthState = "Healthy" }
        end)
        """
    }

    private func healthyTimes(_ events: [Event], instance: Int) -> [Millis] {
        events.compactMap { event in
            guard event.instance == instance, case .healthChanged(_, .healthy, _) = event.payload else { return nil }
            return event.time
        }
    }

    // MARK: Seed 001's workflow

    func testSeed001WorkflowManualThenExtensionThenRollingCompletes() throws {
        let (record, events) = try runScenario(repositoryRoot + "/scripts/seed001-adopt-rolling.lua")
        XCTAssertEqual(record.failedExpectations.map(\.key), [])
        XCTAssertEqual(record.summary.status?.code, .completed)
        XCTAssertEqual(record.summary.status?.progress.successfulInstanceCount, 10)
        XCTAssertEqual(record.upgrades, 1)
        // The refused switch at 30 s changed nothing; the one at 5 min is in the stream and the outcome.
        let updates = events.compactMap { event -> (UpgradePolicy, [String], Int?)? in
            if case .policyUpdated(let policy, let changed, let running) = event.payload { return (policy, changed, running) }
            return nil
        }
        XCTAssertEqual(updates.map(\.0.mode), [.rolling])
        XCTAssertEqual(updates.first?.1, ["mode", "rollingUpgradePolicy.pauseTimeBetweenBatches"])
        XCTAssertEqual(updates.first?.2, nil)
        XCTAssertEqual(record.policy.mode, .rolling)
        XCTAssertEqual(RunJSON.summary(record, scaleSet: ScaleSetDefinition(name: "web", capacity: 10)).field("policy")?.field("mode"),
                       .string("Rolling"))
        // The events file: policyUpdated's fields; healthExtension only on the update that adds it.
        let policyJSON = try XCTUnwrap(events.first { $0.kind == .policyUpdated }?.json)
        XCTAssertEqual(policyJSON.field("mode"), .string("Rolling"))
        XCTAssertEqual(policyJSON.object?["runningUpgrade"], .null)
        XCTAssertEqual(policyJSON.field("policy")?.field("rollingUpgradePolicy")?.field("pauseTimeBetweenBatches"), .string("PT10S"))
        let modelJSON = events.filter { $0.kind == .modelUpdated }.map(\.json)
        XCTAssertEqual(modelJSON.map { $0.field("healthExtension")?.field("protocol") }, [.string("http"), nil])
        XCTAssertEqual(modelJSON.map { $0.field("generic") }, [.bool(false), .bool(false)])
        // Adding the extension is an in-place change: the manual upgrade takes no instance down.
        let manual = events.compactMap { event -> OperationFacts? in
            if case .operationStarted(let facts) = event.payload, facts.targetVersion == 2 { return facts }
            return nil
        }
        XCTAssertEqual(manual.count, 10)
        XCTAssertTrue(manual.allSatisfy { !$0.disruptive })
        // Each instance reports health from the moment its model has the extension (150 s), not before.
        XCTAssertEqual(healthyTimes(events, instance: 0).first, 150_000)
        XCTAssertEqual(events.first { $0.kind == .healthChanged }?.time, 150_000)
    }

    func testRollingWithoutHealthSourceRefusedWithAzuresTextAndCatchable() throws {
        let (record, events, printed) = try run("""
            scaleset { name = "web", capacity = 4, model = { image = "v1" }, upgradePolicy = { mode = "Manual" } }
            at("PT10S", function()
              local ok, message = pcall(update_policy, { mode = "Rolling" })
              print(tostring(ok)); print(message)
            end)
            """)
        XCTAssertEqual(printed.first, "false")
        XCTAssertEqual(printed.last?.hasSuffix(ScaleSetDefinition.noHealthSourceMessage), true)
        XCTAssertEqual(record.policy.mode, .manual)
        XCTAssertFalse(events.contains { $0.kind == .policyUpdated })
    }

    func testUpdatePolicyReportsEveryProblemAtOnce() throws {
        let (record, _, printed) = try run("""
            \(baseScaleSet)
            at("PT10S", function()
              local _, message = pcall(update_policy, { mode = "Sideways",
                rollingUpgradePolicy = { maxBatchInstancePercent = 200, pauseTimeBetweenBatches = "PT1M1M" } })
              print(message)
            end)
            """)
        let message = try XCTUnwrap(printed.first)
        for field in ["upgradePolicy.mode", "rollingUpgradePolicy.maxBatchInstancePercent", "rollingUpgradePolicy.pauseTimeBetweenBatches"] {
            XCTAssertTrue(message.contains(field), "\(field) missing from \(message)")
        }
        XCTAssertEqual(record.policy.rolling.maxBatchInstancePercent, 20)
    }

    func testUpdatePolicyMergesTheFieldsGivenIntoThePolicyInEffect() throws {
        var base = UpgradePolicy(mode: .manual)
        base.rolling.maxSurge = true
        base.rolling.pauseTimeBetweenBatches = 10_000
        let change = try JSON.parse(#"{"mode": "rolling", "rollingUpgradePolicy": {"maxUnhealthyInstancePercent": 10}}"#)
        let (merged, problems) = UpgradePolicy.merge(change, onto: base)
        XCTAssertEqual(problems, [])
        XCTAssertEqual(merged.mode, .rolling)
        XCTAssertEqual(merged.rolling.maxUnhealthyInstancePercent, 10)
        XCTAssertTrue(merged.rolling.maxSurge)
        XCTAssertEqual(merged.rolling.setBooleans, ["maxSurge"])
        XCTAssertEqual(merged.rolling.pauseTimeBetweenBatches, 10_000)
        XCTAssertEqual(merged.changedFields(from: base), ["mode", "rollingUpgradePolicy.maxUnhealthyInstancePercent"])
    }

    func testRollbackOnBreachIsRefusedOnFlexibleByUpdatePolicyAsByTheDefinition() throws {
        var definition = ScaleSetDefinition(name: "web", capacity: 4)
        definition.orchestration = .flexible
        definition.healthExtension = HealthExtensionSettings(protocol: .http, port: 8000)
        let sim = try Simulation(definition)
        var policy = sim.policy
        policy.rolling.rollbackFailedInstancesOnPolicyBreach = true
        var definitionWithIt = definition
        definitionWithIt.policy = policy
        XCTAssertThrowsError(try sim.updatePolicy(policy)) { error in
            XCTAssertEqual((error as? EngineError)?.refusal, .invalid(definitionWithIt.validate()))
        }
        XCTAssertEqual(sim.policy, definition.policy)
    }

    func testRunningUpgradeKeepsItsPolicyAndTheNextUsesTheNewOne() throws {
        // One update domain, so batches are cut by the policy alone.
        var definition = slowBootFleet(bootsIn: 30_000, faults: { ClosureFaultInjector { _, _, _ in nil } }, at: [
            (60_000, .updateModel(["image": "v2"])),
            (180_000, .updatePolicy(PolicyPatch([.maxBatchInstancePercent(50), .maxUnhealthyInstancePercent(50)]))),
            (3_600_000, .updateModel(["image": "v3"])),
        ])
        definition.scaleSet.updateDomainCount = 1
        var completed = Expectation(location: "SpecFourthPrintingTests")
        completed.code = .completed
        definition.expectations = [completed]
        let record = try Rehearsal.run(definition, RunInputs(seed: 0))
        let events = record.events
        XCTAssertEqual(record.failedExpectations, [])
        let starts = events.compactMap { event -> Int? in
            if case .upgradeStarted(_, _, _, _, _, let size, _, _) = event.payload { return size }
            return nil
        }
        XCTAssertEqual(starts, [2, 5])
        XCTAssertEqual(batches(upgrade(1, of: events)).count, 5)
        XCTAssertEqual(batches(upgrade(2, of: events)).count, 2)
        let running = events.compactMap { event -> Int?? in
            if case .policyUpdated(_, _, let running) = event.payload { return running }
            return nil
        }
        XCTAssertEqual(running, [1])
        XCTAssertEqual(record.policy.rolling.maxBatchInstancePercent, 50)
        XCTAssertEqual(record.summary.status?.policy.maxBatchInstancePercent, 50)
    }

    // MARK: The extension belongs to the model

    func testInstancesWithoutTheExtensionFaultTheUpgradeBeforeTheFirstBatch() throws {
        var scaleSet = ScaleSetDefinition(name: "web", capacity: 10)
        scaleSet.model = ["image": "v1"]
        scaleSet.policy.mode = .manual
        let healthy = SwiftBehaviours { _ in Behaviours(health: ClosureHealthSource { _, _ in .named(.healthy) }) }
        let timeline: [(Millis, SessionAction)] = [
            (60_000, .updateModel([:], healthExtension: .set(HealthExtensionSettings(protocol: .http, port: 8000, requestPath: "/health")))),
            (120_000, .manualUpgrade(ids: Array(0...7))),
            (300_000, .updatePolicy(PolicyPatch([.mode(.rolling), .maxUnhealthyInstancePercent(10)]))),
            (360_000, .updateModel(["image": "v2"])),
        ]
        let record = try Rehearsal.run(ScenarioDefinition(path: "extension (Swift)", scaleSet: scaleSet, behaviour: .swift(healthy),
                                                          timeline: timeline.map { .init(time: $0.0, action: .perform($0.1)) }), RunInputs(seed: 0))
        let events = record.events
        let status = try XCTUnwrap(record.summary.status)
        XCTAssertEqual(status.code, .faulted)
        XCTAssertEqual(status.error?.code.rawValue, "MaxUnhealthyInstancePercentExceededBeforeRollingUpgrade")
        XCTAssertEqual(status.error?.details.map(\.target), ["web/virtualMachines/8", "web/virtualMachines/9"])
        let check = events.compactMap { event -> ThresholdCheck? in
            if case .preBatchCheck(let check) = event.payload { return check }
            return nil
        }
        XCTAssertEqual(check.map(\.counted), [[8, 9]])
        XCTAssertEqual(status.progress.pendingInstanceCount, 10)
        XCTAssertEqual(record.instances.map(\.health), Array(repeating: .healthy, count: 8) + [.unknown, .unknown])
    }

    /// Two Manual instances without the extension; operations on model 2 (the one with the tcp
    /// extension added at PT1M) take 60 s, on any other 90 s. Instance 0 is upgraded at PT2M and
    /// every instance reimaged at PT5M; at PT10M the policy turns Rolling, the extension's removal
    /// is refused, the policy turns Manual again and the removal goes through.
    private var extensionRemoved: ScenarioDefinition {
        var scaleSet = ScaleSetDefinition(name: "web", capacity: 2)
        scaleSet.model = ["image": "v1"]
        scaleSet.policy.mode = .manual
        let durations = SwiftBehaviours { _ in
            Behaviours(faults: ClosureFaultInjector { _, vm, _ in OperationOutcome(duration: vm.modelVersion == 2 ? 60_000 : 90_000) })
        }
        let tcp = HealthExtensionSettings(protocol: .tcp, port: 22, requestPath: nil)
        let timeline: [(Millis, SessionAction)] = [
            (60_000, .updateModel([:], healthExtension: .set(tcp))), (120_000, .manualUpgrade(ids: [0])), (300_000, .reimage(ids: nil)),
            (600_000, .updatePolicy(PolicyPatch([.mode(.rolling)]))), (600_000, .updateModel([:], healthExtension: .remove)),
            (600_000, .updatePolicy(PolicyPatch([.mode(.manual)]))), (600_000, .updateModel([:], healthExtension: .remove)),
        ]
        return ScenarioDefinition(path: "extension removed (Swift)", scaleSet: scaleSet, behaviour: .swift(durations),
                                  timeline: timeline.map { .init(time: $0.0, action: .perform($0.1)) })
    }

    func testRemovingTheExtensionIsRefusedInRollingModeAndOperationsSeeTheModelTheyStartFrom() throws {
        let record = try Rehearsal.run(extensionRemoved, RunInputs(seed: 0))
        let events = record.events
        // Each operation is decided on the instance's model before it: instance 0 upgraded from
        // model 1 (90 s); reimaged on model 2 (60 s); instance 1 reimaged on model 1 (90 s).
        let durations = events.compactMap { event -> (OperationKind, Int?, Millis)? in
            if case .operationStarted(let facts) = event.payload { return (facts.kind, event.instance, facts.duration) }
            return nil
        }
        XCTAssertEqual(durations.map(\.0), [.upgrade, .reimage, .reimage])
        XCTAssertEqual(durations.map(\.2), [90_000, 60_000, 90_000])
        // The refused removal is the one actionFailed event, at 600 s, and changes no model.
        let refused = events.compactMap { event -> (Millis, String)? in
            if case .actionFailed(let action, _) = event.payload { return (event.time, action) }
            return nil
        }
        XCTAssertEqual(refused.map(\.0), [600_000])
        XCTAssertEqual(refused.first?.1.hasPrefix(SessionAction.Name.updateModel.rawValue), true)
        XCTAssertEqual(record.policy.mode, .manual)
        let versions = events.compactMap { event -> Int? in
            if case .modelUpdated(let version, _, _, _) = event.payload { return version }
            return nil
        }
        XCTAssertEqual(versions, [2, 3])
    }

    /// The script's `vm.model.healthExtension` is the model's, and `update_model { healthExtension
    /// = false }` is the typed removal: the script gives the Swift definition's events, the
    /// refusal its pcall catches included.
    func testVMModelShowsTheExtensionAndRemovingItIsRefusedInRollingMode() throws {
        // fault reads vm.model before each operation: 60 s with the extension, 90 s without.
        let (_, events, printed) = try run("""
            scaleset { name = "web", capacity = 2, model = { image = "v1" }, upgradePolicy = { mode = "Manual" } }
            fault(function(vm, op, now) return { duration = vm.model.healthExtension and 60 or 90 } end)
            at("PT1M", function() update_model { healthExtension = { protocol = "tcp", port = 22 } } end)
            at("PT2M", function() manual_upgrade { 0 } end)
            at("PT5M", function() reimage("*") end)
            at("PT10M", function()
              update_policy { mode = "Rolling" }
              local ok = pcall(update_model, { healthExtension = false })
              print(tostring(ok))
              update_policy { mode = "Manual" }
              update_model { healthExtension = false }
            end)
            """)
        XCTAssertEqual(printed, ["false"])
        // The refusal is recorded as the typed timeline's is, whether or not the script catches it.
        XCTAssertEqual(events.filter { $0.kind == .actionFailed }.count, 1)
        XCTAssertEqual(events, try Rehearsal.run(extensionRemoved, RunInputs(seed: 0)).events)
    }

    func testAScaleSetWhoseFirstModelHasTheExtensionShowsItInVMModel() throws {
        let (_, events, _) = try run("""
            \(baseScaleSet)
            fault(function(vm, op, now) return { duration = vm.model.healthExtension and 60 or 90 } end)
            at("PT1M", function() update_model { image = "v2" } end)
            """)
        let first = events.first { $0.kind == .operationStarted }
        guard case .operationStarted(let facts)? = first?.payload else { return XCTFail("no operation") }
        XCTAssertEqual(facts.duration, 60_000)
    }

    func testChangingTheExtensionInPlaceRestartsHealthWithTheNewSettings() throws {
        // From rich http to tcp with 600 s of grace: each instance is Initializing again when the
        // in-place upgrade ends, then Healthy on its first tcp probe; no wire warning on the way.
        let tcp = HealthExtensionSettings(protocol: .tcp, port: 22, requestPath: nil, gracePeriod: 600)
        let record = try Rehearsal.run(slowBootFleet(bootsIn: 0, faults: { ClosureFaultInjector { _, _, _ in nil } },
                                                     at: [(60_000, .updateModel([:], healthExtension: .set(tcp)))]), RunInputs(seed: 0))
        let events = record.events
        XCTAssertEqual(record.summary.status?.code, .completed)
        XCTAssertFalse(events.contains { $0.kind == .wireWarning })
        let upgraded = events.compactMap { event -> Millis? in
            guard event.instance == 0, case .operationFinished(.upgrade, _, true) = event.payload else { return nil }
            return event.time
        }
        XCTAssertEqual(upgraded.count, 1)
        XCTAssertEqual(healthyTimes(events, instance: 0).last, upgraded.first)
        let operations = events.compactMap { event -> OperationFacts? in
            if case .operationStarted(let facts) = event.payload { return facts }
            return nil
        }
        XCTAssertTrue(operations.allSatisfy { !$0.disruptive })
    }

    // MARK: Reimage

    func testReimagedInstanceIsInitializingAgainAndHealthyOnlyWhenItsApplicationAnswers() throws {
        // The application listens 50 s after each (re)start; a reimage takes 200 s here.
        let reimageIn200s: @Sendable () -> ClosureFaultInjector = { ClosureFaultInjector { op, _, _ in op == .reimage ? OperationOutcome(duration: 200_000) : nil } }
        let record = try Rehearsal.run(slowBootFleet(bootsIn: 50_000, faults: reimageIn200s,
                                                     at: [(300_000, .reimage(ids: [1, 2])), (900_000, .scale(to: 10))]), RunInputs(seed: 0))
        let events = record.events
        let started = events.filter { $0.kind == .operationStarted }
        XCTAssertEqual(started.map(\.instance), [1, 2])
        for event in started {
            guard case .operationStarted(let facts) = event.payload else { continue }
            XCTAssertEqual(facts.kind, .reimage)
            XCTAssertTrue(facts.disruptive)
            XCTAssertEqual(facts.targetVersion, 1)
            XCTAssertEqual(facts.duration, 200_000)
        }
        // Down at 300 s (Initializing), back at 500 s, Healthy once it answers at 550 s.
        let leftService = events.first { $0.instance == 1 && $0.kind == .servingChanged && $0.time == 300_000 }
        guard case .servingChanged(false, _, let reason)? = leftService?.payload else { return XCTFail("instance 1 kept serving") }
        XCTAssertEqual(reason, .health(.initializing))
        XCTAssertEqual(healthyTimes(events, instance: 1), [50_000, 550_000])
        XCTAssertEqual(record.instances[1].modelVersion, 1)
        XCTAssertEqual(record.instances[1].health, .healthy)
    }

    func testReimageOfAProtectedInstanceIsRefusedWithTheManualUpgradesText() throws {
        let sim = try Simulation(ScaleSetDefinition(name: "web", capacity: 8).with { $0.protected = [2, 7] })
        var reimage: EngineError?, manual: EngineError?
        do { try sim.reimage(ids: [7, 1, 2]) } catch let error as EngineError { reimage = error }
        do { try sim.manualUpgrade(ids: [7, 1, 2]) } catch let error as EngineError { manual = error }
        XCTAssertNotNil(reimage)
        XCTAssertEqual(reimage, manual)
        XCTAssertEqual(reimage?.refusal, .protected([2, 7]))
    }

    // MARK: Failed or unhealthy first

    func testFailedInstanceLeadsTheNextUpgradesFirstBatch() throws {
        // Instance 7's first upgrade fails (once: the instance is still on model 1 afterwards).
        let failsOnce: @Sendable () -> ClosureFaultInjector = {
            var failed = false
            return ClosureFaultInjector { op, vm, _ in
                guard op == .upgrade, vm.id == 7, vm.modelVersion == 1, !failed else { return nil }
                failed = true
                return OperationOutcome(fail: true)
            }
        }
        let record = try Rehearsal.run(slowBootFleet(bootsIn: 40_000, faults: failsOnce,
                                                     at: [(60_000, .updateModel(["image": "v2"])), (3_600_000, .updateModel(["image": "v3"]))]),
                                       RunInputs(seed: 0))
        let events = record.events
        let first = batches(upgrade(1, of: events))
        XCTAssertFalse(first.first?.hasPrefix("7") ?? true)
        let second = batches(upgrade(2, of: events))
        XCTAssertEqual(second.first, "7")
        XCTAssertEqual(record.summary.status?.code, .completed)
    }
}

private extension ScaleSetDefinition {
    func with(_ change: (inout ScaleSetDefinition) -> Void) -> ScaleSetDefinition {
        var copy = self
        change(&copy)
        return copy
    }
}
