import AzureWire
import Formats
import Scenario
import UpgradeEngine
import XCTest

/// `diff`'s reading of a change: the fields that differ, what follows in the new version's mode,
/// and a rehearsal of exactly that change. The fixtures are Terraform plans (terraform show -json)
/// of a 30-instance, 3-zone scale set.
final class ScaleSetDiffTests: XCTestCase {
    func change(_ name: String) throws -> ScaleSetChange {
        let text = try String(contentsOfFile: repositoryRoot + "/Tests/Import/terraform-change-\(name).json", encoding: .utf8)
        return try ScaleSetImport.terraformChange(try JSON.parse(text, maxBytes: 16 << 20), resource: nil)
    }

    /// The diff's inputs with the events kept.
    var recording: RunInputs {
        var inputs = DiffRehearsal.inputs(RunInputs(seed: 0))
        inputs.recordEvents = true
        return inputs
    }

    func diff(_ name: String) throws -> (ScaleSetChange, ScaleSetDiff) {
        let c = try change(name)
        let before = try XCTUnwrap(c.before), after = try XCTUnwrap(c.after)
        return (c, ScaleSetDiff(before: before.definition, after: after.definition))
    }

    func testAnImageVersionOfARollingScaleSetStartsARollingUpgradeInSixBatches() throws {
        let (c, d) = try diff("rolling-image")
        XCTAssertEqual(c.actions, ["update"])
        XCTAssertEqual(d.changes.map(\.field), ["virtualMachineProfile.storageProfile.imageReference.version"])
        XCTAssertEqual(d.changes.first?.before, "22.04.202410020")
        XCTAssertEqual(d.changes.first?.after, "22.04.202411010")
        XCTAssertEqual(d.consequences, [.rollingUpgradeNow])
        XCTAssertTrue(d.disruptive)
        XCTAssertEqual(d.modelChanges, ["imageReference.version": "22.04.202411010"])
        // The rehearsal upgrades every instance, zone by zone: 10 per zone in batches of 6 (20% of 30), 6 and 4.
        let definition = DiffRehearsal.definition(before: c.before!.definition, after: c.after!.definition, diff: d, team: nil, path: "plan.json")
        let record = try Rehearsal.run(definition, recording)
        let batches = record.events.compactMap { if case .batchStarted(let ids, _) = $0.payload { return ids.count } else { return nil } }
        XCTAssertEqual(batches, [6, 4, 6, 4, 6, 4])
        XCTAssertEqual(record.summary.status?.code, .completed)
        // Six of 30 down at once: 24 serve at the lowest.
        XCTAssertEqual(record.summary.availability?.lowestHealthy, 24)
    }

    func testAModeChangeAloneRestartsNoInstance() throws {
        let (c, d) = try diff("rolling-mode-only")
        XCTAssertFalse(d.modelChange)
        XCTAssertTrue(d.changes.allSatisfy { $0.kind == .policy })
        XCTAssertTrue(d.changes.contains { $0.field == "upgradePolicy.mode" && $0.before == "Manual" && $0.after == "Rolling" })
        XCTAssertEqual(d.consequences, [.nextUpgradePolicyOnly])
        let definition = DiffRehearsal.definition(before: c.before!.definition, after: c.after!.definition, diff: d, team: nil, path: "plan.json")
        let record = try Rehearsal.run(definition, recording)
        XCTAssertEqual(record.upgrades, 0)
        XCTAssertFalse(record.events.contains { if case .operationStarted = $0.payload { return true } else { return false } })
    }

    func testAnImageVersionOfAManualScaleSetLeavesEveryInstanceWaiting() throws {
        let (c, d) = try diff("manual-image")
        XCTAssertEqual(d.consequences, [.waitsForManualUpgrade])
        let definition = DiffRehearsal.definition(before: c.before!.definition, after: c.after!.definition, diff: d, team: nil, path: "plan.json")
        let record = try Rehearsal.run(definition, recording)
        XCTAssertEqual(record.upgrades, 0)
        // All 30 stay on the old model.
        XCTAssertEqual(record.instances.filter { $0.leftBehind != nil }.count, 30)
    }

    func testPlacementAndCapacity() throws {
        var before = ScaleSetDefinition(name: "a", capacity: 10)
        before.zones = ["1", "2", "3"]
        var after = before
        after.capacity = 12
        XCTAssertEqual(ScaleSetDiff(before: before, after: after).consequences, [.capacityChange])
        after.zones = ["1", "2"]
        XCTAssertEqual(ScaleSetDiff(before: before, after: after).consequences, [.replacement])
        XCTAssertEqual(ScaleSetDiff(before: before, after: before).consequences, [.none])
    }
}
