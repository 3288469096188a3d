import AzureWire
import Formats
import UpgradeEngine
import XCTest

final class SurgeAndModesTests: XCTestCase {
    // Seed 001 / SPEC §5: new instances first, old ones deleted once the new are healthy.
    func testMaxSurgeNeverDropsBelowCapacity() throws {
        var fewest = Int.max
        let sim = try Simulation(scaleSet(10, { $0.policy.rolling.maxSurge = true }), health: AlwaysHealthy())
        var present: Set<Int> = Set(0..<10)
        var created = 0, deleted = 0
        sim.onEvent = { event in
            switch event.payload {
            case .operationFinished(kind: .create, _, succeeded: true):
                present.insert(event.instance!)
                created += 1
            case .instanceDeleted:
                present.remove(event.instance!)
                deleted += 1
                fewest = min(fewest, present.count)
            default: break
            }
        }
        sim.schedule(at: 60_000, name: "update") { try $0.updateModel(["image": "v2"]) }
        let summary = try sim.run()
        XCTAssertEqual(summary.status?.code, .completed)
        XCTAssertEqual(created, 10)
        XCTAssertEqual(deleted, 10)
        XCTAssertEqual(fewest, 10)
        let live = sim.instances.filter { $0.lifecycle != .deleted }
        XCTAssertEqual(live.map(\.id), Array(10..<20))
        XCTAssertTrue(live.allSatisfy { $0.modelVersion == 2 })
        XCTAssertEqual(summary.availability?.lowestHealthy, 10)
    }

    func testMaxSurgeReplacementsTakeTheZoneAndDomainsOfTheOldInstances() throws {
        let outcome = try simulate(scaleSet(6, zones: ["1", "2", "3"], { $0.policy.rolling.maxSurge = true }))
        let all = outcome.simulation.instances
        for new in all where new.id >= 6 {
            let oldID = outcome.events.compactMap { event -> Int? in
                if case .surgeCreated(_, let replaces, _, _) = event.payload, event.instance == new.id { return replaces }
                return nil
            }.first!
            XCTAssertEqual(new.zone, all[oldID].zone)
            XCTAssertEqual(new.faultDomain, all[oldID].faultDomain)
            XCTAssertEqual(new.updateDomain, all[oldID].updateDomain)
        }
    }

    func testMaxSurgeQuotaFallbackLastsForTheRestOfTheUpgrade() throws {
        // Quota 11: the first batch of 2 new instances would make 12, so it upgrades in place,
        // and so does every later batch of this upgrade (logged once).
        let outcome = try simulate(scaleSet(10, { $0.policy.rolling.maxSurge = true; $0.quota = 11 }))
        XCTAssertEqual(outcome.count(.surgeFallback), 1)
        XCTAssertEqual(outcome.batches().map(\.count), [2, 2, 2, 2, 2])
        XCTAssertEqual(outcome.count(.surgeCreated), 0)
        XCTAssertEqual(outcome.status.code, .completed)
        XCTAssertTrue(outcome.simulation.instances.allSatisfy { $0.modelVersion == 2 })
    }

    /// A MaxSurge batch takes nothing down, so the unhealthy budget never shrinks it: 10
    /// instances at 50% (one update domain, so no domain boundary) run as two batches of 5,
    /// not five of 2.
    func testMaxSurgeBatchesAreNeverShrunkByTheUnhealthyBudget() throws {
        let outcome = try simulate(scaleSet(10, {
            $0.policy.rolling.maxSurge = true
            $0.policy.rolling.maxBatchInstancePercent = 50
            $0.updateDomainCount = 1
        }))
        XCTAssertEqual(outcome.batches().map(\.count), [5, 5])
        XCTAssertTrue(outcome.events.allSatisfy {
            if case .batchStarted(_, let shrunk) = $0.payload { return !shrunk }
            return true
        })
        XCTAssertEqual(outcome.status.code, .completed)
    }

    /// An in-place change (an extension upgrade) stops nothing either: batches of 5 at 50%.
    func testInPlaceBatchesAreNeverShrunkByTheUnhealthyBudget() throws {
        let outcome = try simulate(scaleSet(10, mode: .automatic, { $0.policy.rolling.maxBatchInstancePercent = 50; $0.updateDomainCount = 1 }),
                                   actions: [(60_000, { try $0.startExtensionUpgrade(version: "2.1") })])
        XCTAssertEqual(outcome.batches().map(\.count), [5, 5])
        // A disruptive change with the same policy is shrunk to the 20% budget: batches of 2.
        let disruptive = try simulate(scaleSet(10, { $0.policy.rolling.maxBatchInstancePercent = 50; $0.updateDomainCount = 1 }))
        XCTAssertEqual(disruptive.batches().map(\.count), [2, 2, 2, 2, 2])
    }

    func testUnhealthySurgeInstanceCountsAsFailedAndItsOldCounterpartStays() throws {
        let outcome = try simulate(scaleSet(10, { $0.policy.rolling.maxSurge = true }), health: { vm, _ in
            .http(status: 200, body: wireBody(vm.id == 10 ? "Unhealthy" : "Healthy"))
        })
        // Instance 10 replaces 0 in batch 1 and reports Unhealthy: 0 stays, 10 is deleted.
        XCTAssertEqual(outcome.status.progress.failedInstanceCount, 1)
        XCTAssertEqual(outcome.simulation.instances[0].lifecycle, .running)
        XCTAssertEqual(outcome.simulation.instances[0].modelVersion, 1)
        XCTAssertEqual(outcome.simulation.instances[10].lifecycle, .deleted)
        XCTAssertEqual(outcome.status.code, .completed)
    }

    func testAutomaticModeUpgradesEveryInstanceAtOnce() throws {
        let outcome = try simulate(scaleSet(10, mode: .automatic, { $0.protected = [4] }))
        let starts = outcome.events.filter { $0.kind == .operationStarted }
        XCTAssertEqual(starts.count, 9)
        XCTAssertEqual(Set(starts.map(\.time)), [60_000])
        XCTAssertNil(outcome.summary.status)
        XCTAssertEqual(outcome.simulation.instances.filter { $0.modelVersion == 2 }.count, 9)
        // No thresholds: every instance was down at once.
        XCTAssertEqual(outcome.summary.availability?.lowestHealthy, 1)
    }

    func testManualModeChangesNothingUntilAManualUpgrade() throws {
        let outcome = try simulate(scaleSet(10, mode: .manual, { $0.protected = [7] }), actions: [
            (60_000, { try $0.updateModel(["image": "v2"]) }),
            (100_000, { try $0.manualUpgrade(ids: [1, 2]) }),
            (200_000, { try $0.manualUpgrade(ids: [3, 7]) }),
            (300_000, { try $0.scale(to: 12) }),
        ])
        let versions = outcome.simulation.instances.map(\.modelVersion)
        XCTAssertEqual(versions, [1, 2, 2, 1, 1, 1, 1, 1, 1, 1, 2, 2])
        let refused = outcome.events.compactMap { event -> String? in
            if case .actionFailed(_, let message) = event.payload { return message }
            return nil
        }
        XCTAssertEqual(refused.count, 1)
        XCTAssertEqual(refused[0], "InstanceIds may not contain instances that are protected from scale set actions. The following instance ids are protected from scale set action: 7.")
    }

    /// `az vmss rolling-upgrade start` needs an unprotected instance on a `latest` image version.
    func testOnDemandOSUpgradeRefusedWithoutALatestImage() throws {
        let pinned = try simulate(scaleSet(4, mode: .manual, { $0.model[Simulation.imageVersionAttribute] = "1.2.3" }),
                                  actions: [(60_000, { try $0.startOSUpgrade(image: "ubuntu-24.04") })])
        let refused = pinned.events.compactMap { event -> String? in
            if case .actionFailed(_, let message) = event.payload { return message }
            return nil
        }
        XCTAssertEqual(refused, ["The OS Rolling Upgrade API cannot be used on a Virtual Machine Scale Set unless the Virtual Machine Scale Set has some unprotected instances which have imageReference.version set to latest."])
        XCTAssertNil(pinned.summary.status)
        let allProtected = try simulate(scaleSet(2, mode: .manual, { $0.protected = [0, 1] }),
                                        actions: [(60_000, { try $0.startOSUpgrade(image: "ubuntu-24.04") })])
        XCTAssertEqual(allProtected.count(.actionFailed), 1)
        let latest = try simulate(scaleSet(4, mode: .manual, { $0.model[Simulation.imageVersionAttribute] = "latest" }),
                                  actions: [(60_000, { try $0.startOSUpgrade(image: "ubuntu-24.04") })])
        XCTAssertEqual(latest.status.code, .completed)
    }

    func testOSUpgradeUsesTheRollingPolicyInManualMode() throws {
        let outcome = try simulate(scaleSet(10, mode: .manual), actions: [(60_000, { try $0.startOSUpgrade(image: "ubuntu-24.04") })])
        XCTAssertEqual(outcome.batches().map(\.count), [2, 2, 2, 2, 2])
        XCTAssertEqual(outcome.status.code, .completed)
        XCTAssertEqual(outcome.simulation.models.last?["image"], "ubuntu-24.04")
    }

    func testExtensionUpgradeAppliesInPlace() throws {
        let outcome = try simulate(scaleSet(10, mode: .automatic), actions: [(60_000, { try $0.startExtensionUpgrade(version: "2.1") })])
        let operations = outcome.events.compactMap { event -> OperationFacts? in
            if case .operationStarted(let op) = event.payload { return op }
            return nil
        }
        XCTAssertEqual(operations.count, 10)
        XCTAssertTrue(operations.allSatisfy { $0.kind == .upgrade && !$0.disruptive && $0.duration == 30_000 })
        // In place: instances keep serving, so none is ever down.
        XCTAssertEqual(outcome.summary.availability?.lowestHealthy, 10)
    }

    func testRollingModeNeedsAHealthSource() {
        var d = scaleSet(10)
        d.healthExtension = nil
        XCTAssertThrowsError(try Simulation(d)) { error in
            XCTAssertEqual("\(error)", "upgradePolicy.mode: Rolling Upgrade mode is not supported for this Virtual Machine Scale Set because a health probe or health extension was not provided.")
        }
        d.loadBalancerProbe = true
        XCTAssertNoThrow(try Simulation(d))
        d.orchestration = .flexible
        XCTAssertThrowsError(try Simulation(d))
    }

    func testScaleInSparesProtectedFromScaleIn() throws {
        let outcome = try simulate(scaleSet(10, mode: .manual, { $0.protectedFromScaleIn = [9] }), actions: [(10_000, { try $0.scale(to: 7) })])
        let gone = outcome.simulation.instances.filter { $0.lifecycle == .deleted }.map(\.id)
        XCTAssertEqual(gone, [6, 7, 8])
    }

    func testNewInstancesSpreadRoundRobinOverZonesThenDomains() throws {
        let sim = try Simulation(scaleSet(7, zones: ["1", "2", "3"], { $0.faultDomainCount = 5 }))
        XCTAssertEqual(sim.instances.map { $0.zone! }, ["1", "2", "3", "1", "2", "3", "1"])
        XCTAssertEqual(sim.instances.map(\.faultDomain), [0, 0, 0, 1, 1, 1, 2])
        let regional = try Simulation(scaleSet(7))
        XCTAssertEqual(regional.instances.map(\.updateDomain), [0, 1, 2, 3, 4, 0, 1])
    }

    /// The status echoes the four numeric and duration fields always and only the booleans that
    /// were set (seed 001's sample shows no enableCrossZoneUpgrade).
    func testStatusJSONHasGetLatestShape() throws {
        let outcome = try simulate(scaleSet(10, { $0.policy.rolling.prioritizeUnhealthyInstances = true }))
        let json = outcome.status.json().serialized()
        XCTAssertEqual(json, """
            {
              "location": "eastus",
              "policy": {
                "maxBatchInstancePercent": 20,
                "maxUnhealthyInstancePercent": 20,
                "maxUnhealthyUpgradedInstancePercent": 20,
                "pauseTimeBetweenBatches": "PT0S",
                "prioritizeUnhealthyInstances": true
              },
              "progress": {
                "failedInstanceCount": 0,
                "inProgressInstanceCount": 0,
                "pendingInstanceCount": 0,
                "successfulInstanceCount": 10
              },
              "runningStatus": {
                "code": "Completed",
                "lastAction": "Start",
                "lastActionTime": "2024-01-01T00:01:00.0000000+00:00",
                "startTime": "2024-01-01T00:01:00.0000000+00:00"
              },
              "type": "Microsoft.Compute/virtualMachineScaleSets/rollingUpgrades"
            }
            """)
    }

    func testFaultedStatusJSONCarriesTheError() throws {
        let outcome = try simulate(scaleSet(10), health: { vm, _ in .http(status: 200, body: wireBody(vm.id < 3 ? "Unhealthy" : "Healthy")) })
        let json = outcome.status.json()
        guard case .object(let error)? = json.member("error") else { return XCTFail("no error") }
        XCTAssertEqual(Set(error.keys), ["code", "message", "details"])
        XCTAssertEqual(json.member("runningStatus")?.member("code"), .string("Faulted"))
        XCTAssertNil(try simulate(scaleSet(10)).status.json().member("error"))
    }

    func testPlanWithoutRunningTime() throws {
        let sim = try Simulation(scaleSet(10, { $0.protected = [7]; $0.updateDomainCount = 1 }), health: ClosureHealthSource { vm, _ in
            .http(status: 200, body: wireBody(phase: vm.id % 2, skip: vm.id == 4 ? "true" : nil))
        })
        try sim.advance(to: 5_000)
        XCTAssertEqual(try sim.planNow().batches, [])
        let plan = try sim.planNow(assumingModelChange: true)
        XCTAssertEqual(plan.batches.map { $0.instances.map(\.id) }, [[0, 2], [6, 8], [1, 3], [5, 9]])
        XCTAssertEqual(plan.batches.map(\.phase), [0, 0, 1, 1])
        XCTAssertEqual(plan.skipped, [4])
        XCTAssertEqual(plan.protected, [7])
        let json = plan.json.serialized(pretty: false)
        XCTAssertTrue(json.hasPrefix(#"{"batches":[{"phase":0,"instances":[{"id":0,"zone":null,"faultDomain":0,"updateDomain":0},{"id":2,"#), json)
        XCTAssertTrue(json.hasSuffix(#"]}],"withoutMetrics":[],"skipped":[4],"protected":[7]}"#), json)
    }
}

final class OrchestrationTests: XCTestCase {
    func testFlexibleBatchNeverCrossesAFaultDomain() throws {
        // Flexible with 3 fault domains: 9 instances, 3 per domain, batches of 4 at 40% cut at domains.
        let outcome = try simulate(scaleSet(9, {
            $0.orchestration = .flexible
            $0.faultDomainCount = 3
            $0.policy.rolling.maxBatchInstancePercent = 40
            $0.policy.rolling.maxUnhealthyInstancePercent = 40
        }))
        let fdOf = { (id: Int) in outcome.simulation.instances[id].faultDomain }
        XCTAssertEqual(outcome.batches(), [[0, 3, 6], [1, 4, 7], [2, 5, 8]])
        XCTAssertEqual(outcome.batches().map { Set($0.map(fdOf)) }, [[0], [1], [2]])
        XCTAssertTrue(outcome.simulation.instances.allSatisfy { $0.updateDomain == 0 })
    }

    func testFlexibleWithOneFaultDomainHasNoDomainBoundary() throws {
        let outcome = try simulate(scaleSet(10, { $0.orchestration = .flexible }))
        XCTAssertEqual(outcome.batches(), [[0, 1], [2, 3], [4, 5], [6, 7], [8, 9]])
    }
}
