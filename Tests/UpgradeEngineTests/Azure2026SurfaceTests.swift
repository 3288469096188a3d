import AzureWire
import Formats
import UpgradeEngine
import XCTest

/// The 2026 surface of real documents (SPEC §6b): the 2017 `automaticOsUpgrade` field, a Flexible
/// scale set's VM names as instance ids, `RollingBack` by api-version, five attempts of history.
final class Azure2026SurfaceTests: XCTestCase {
    func testTheLegacyAutomaticOsUpgradeFieldIsReadWithAWarningNamingItsSuccessor() throws {
        let given = try JSON.parse(#"{"mode": "Manual", "automaticOsUpgrade": true}"#)
        let (moved, warnings) = UpgradePolicy.movingLegacyFields(given)
        XCTAssertEqual(warnings.map(\.field), ["upgradePolicy.automaticOsUpgrade"])
        XCTAssertTrue(warnings[0].message.contains("automaticOSUpgradePolicy.enableAutomaticOSUpgrade"))
        let policy = try UpgradePolicy.parse(moved)
        XCTAssertTrue(policy.automaticOS.enableAutomaticOSUpgrade)
        XCTAssertEqual(policy.mode, .manual)
        // The successor, when given too, wins; a value that is not a boolean is not read.
        let both = try JSON.parse(#"{"automaticOsUpgrade": true, "automaticOSUpgradePolicy": {"enableAutomaticOSUpgrade": false}}"#)
        XCTAssertFalse(try UpgradePolicy.parse(UpgradePolicy.movingLegacyFields(both).0).automaticOS.enableAutomaticOSUpgrade)
        XCTAssertEqual(UpgradePolicy.movingLegacyFields(try JSON.parse(#"{"automaticOsUpgrade": "yes"}"#)).1.count, 1)
        // Without it, nothing moves and nothing is said.
        XCTAssertEqual(UpgradePolicy.movingLegacyFields(try JSON.parse(#"{"mode": "Rolling"}"#)).1, [])
    }

    func testAFlexibleListNamesItsVMsAndTheEngineKeepsTheNames() throws {
        let list = try JSON.parse("""
            [{"instanceId": "web_a1b2c3", "latestModelApplied": true}, {"instanceId": "web_d4e5f6", "latestModelApplied": false}]
            """)
        let fleet = try InstanceList.read(list)
        XCTAssertEqual(fleet.map(\.id), [0, 1])
        XCTAssertEqual(fleet.map(\.name), ["web_a1b2c3", "web_d4e5f6"])
        var definition = ScaleSetDefinition(name: "web", capacity: 2)
        definition.orchestration = .flexible
        definition.fleet = fleet
        let sim = try Simulation(definition)
        XCTAssertEqual(sim.instances.map(\.name), ["web_a1b2c3", "web_d4e5f6"])
        XCTAssertEqual(sim.instances.map(\.modelVersion), [2, 1])
        // A name that is not one, or one given twice, is refused with its place.
        XCTAssertThrowsError(try InstanceList.read(try JSON.parse(#"[{"instanceId": "web a"}, {"instanceId": "x"}, {"instanceId": "x"}]"#))) { error in
            XCTAssertEqual((error as? ValidationFailure)?.problems.map(\.field), ["[0].instanceId", "[2].instanceId"])
        }
    }

    /// A Flexible scale set's instance ids are VM names, so Azure's error names the VM: three
    /// named VMs in batches of one, the second Unhealthy on the new model; after batch 2, 1 of 3
    /// upgraded is unhealthy (33% > 20%) and the error's first failed instance and its detail's
    /// target are web_d4e5f6. The same fleet as Uniform keeps the number.
    func testAFlexibleScaleSetsErrorsNameTheVM() throws {
        let list = try JSON.parse("""
            [{"instanceId": "web_a1b2c3", "latestModelApplied": true}, {"instanceId": "web_d4e5f6", "latestModelApplied": true},
             {"instanceId": "web_g7h8i9", "latestModelApplied": true}]
            """)
        func run(_ orchestration: Orchestration) throws -> UpgradeError {
            let definition = scaleSet(3) {
                $0.orchestration = orchestration
                $0.fleet = try? InstanceList.read(list)
                $0.policy.rolling.maxBatchInstancePercent = 34
            }
            let outcome = try simulate(definition, health: { vm, _ in
                .http(status: 200, body: wireBody(vm.id == 1 && vm.modelVersion == 2 ? "Unhealthy" : "Healthy"))
            })
            XCTAssertEqual(outcome.batches(), [[0], [1]])
            return try XCTUnwrap(outcome.status.error)
        }
        let flexible = try run(.flexible)
        XCTAssertEqual(flexible.code, .unhealthyUpgraded)
        XCTAssertEqual(flexible.details.map(\.target), ["web/virtualMachines/web_d4e5f6"])
        XCTAssertEqual(flexible.firstFailedInstance, "web_d4e5f6")
        let uniform = try run(.uniform)
        XCTAssertEqual(uniform.details.map(\.target), ["web/virtualMachines/1"])
        XCTAssertEqual(uniform.firstFailedInstance, "1")
    }

    func testRollingBackIsShownOnlyFromApiVersion20260901() {
        XCTAssertEqual(RunningCode.rollingBack.shown(toAPIVersion: "2025-11-01"), .rollingForward)
        XCTAssertEqual(RunningCode.rollingBack.shown(toAPIVersion: "2026-03-01"), .rollingForward)
        XCTAssertEqual(RunningCode.rollingBack.shown(toAPIVersion: "2026-09-01"), .rollingBack)
        XCTAssertEqual(RunningCode.rollingBack.shown(toAPIVersion: nil), .rollingBack)
        XCTAssertEqual(RunningCode.faulted.shown(toAPIVersion: "2017-03-30"), .faulted)
    }

    /// Seven images released an hour apart: each OS upgrade completes before the next; the
    /// history keeps the last five (versions 3 to 7).
    func testTheOSUpgradeHistoryKeepsFiveAttempts() throws {
        var definition = scaleSet(4, mode: .manual) { $0.policy.automaticOS.enableAutomaticOSUpgrade = true }
        definition.model = ["image": "v0"]
        let releases: [(Millis, (Simulation) throws -> Void)] = (1...7).map { n in
            (Millis(n) * 3_600_000, { try $0.releasePlatformImage(version: "v\(n)") })
        }
        let outcome = try simulate(definition, actions: releases)
        XCTAssertEqual(outcome.summary.osUpgradeHistory.count, Simulation.osUpgradeHistoryLength)
        XCTAssertEqual(outcome.summary.osUpgradeHistory.map { $0.targetImageReference["version"] }, ["v3", "v4", "v5", "v6", "v7"])
        XCTAssertEqual(outcome.summary.osUpgradeHistory.map(\.code), Array(repeating: .completed, count: 5))
    }
}
