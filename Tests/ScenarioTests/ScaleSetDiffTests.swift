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
        return (c, ScaleSetDiff(before: before, after: after, actions: c.actions))
    }

    func testAnImageVersionOfARollingScaleSetStartsARollingUpgradeInSixBatches() throws {
        let (c, d) = try diff("rolling-image")
        XCTAssertEqual(c.actions, ["update"])
        XCTAssertEqual(d.changes.map(\.field), ["source_image_reference.version"])
        XCTAssertEqual(d.changes.map(\.kind), [.modelRestart])
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
        // azurerm marks upgrade_mode ForceNew, but this plan's actions are ["update"]: respected, not replaced.
        XCTAssertEqual(d.keptByPlan.map(\.field), ["upgrade_mode"])
        XCTAssertEqual(d.replacedBy, [])
        XCTAssertTrue(d.changes.contains { $0.field == "upgrade_mode" && $0.before == "Manual" && $0.after == "Rolling" })
        XCTAssertEqual(d.consequences, [.nextUpgradePolicyOnly])
        let definition = DiffRehearsal.definition(before: c.before!.definition, after: c.after!.definition, diff: d, team: nil, path: "plan.json")
        let record = try Rehearsal.run(definition, recording)
        XCTAssertEqual(record.upgrades, 0)
        XCTAssertFalse(record.events.contains { if case .operationStarted = $0.payload { return true } else { return false } })
    }

    func testAnImageVersionOfAManualScaleSetUnderTerraformIsRolledByApplyOneAtATime() throws {
        // azurerm's defaults (roll_instances_when_required, reimage_on_manual_upgrade): apply
        // updates then reimages each of the 30 instances itself, one at a time.
        let (c, d) = try diff("manual-image")
        XCTAssertEqual(d.consequences, [.terraformRollsEachInstance])
        let definition = DiffRehearsal.definition(before: c.before!.definition, after: c.after!.definition, diff: d, team: nil, path: "plan.json")
        // Update (2 min) then reimage (2 min) per instance, from the change at 1 min: 30 × 2 entries.
        let rolls = definition.timeline.filter { if case .perform(.manualUpgrade) = $0.action { return true } else { return false } }
        XCTAssertEqual(rolls.map(\.time).prefix(3), [60_000, 300_000, 540_000])
        XCTAssertEqual(rolls.count, 30)
        let record = try Rehearsal.run(definition, recording)
        // None is left on the old model; at most one instance is down at a time: 29 of 30 serve.
        XCTAssertEqual(record.instances.filter { $0.leftBehind != nil }.count, 0)
        XCTAssertEqual(record.summary.availability?.lowestHealthy, 29)
    }

    func testAnImageVersionOfAManualScaleSetInTwoDocumentsLeavesEveryInstanceWaiting() throws {
        // The same change as two az documents: no tool rolls the instances.
        var before = try azDocument()
        before["upgradePolicy"] = .object(["mode": .string("Manual")])
        var after = before
        after = setting(after, ["virtualMachineProfile", "storageProfile", "imageReference", "version"], .string("22.04.202411010"))
        let d = try diffOf(before, after)
        XCTAssertEqual(d.consequences, [.waitsForManualUpgrade])
        let definition = DiffRehearsal.definition(before: try imported(before).definition, after: try imported(after).definition, diff: d, team: nil, path: "x")
        let record = try Rehearsal.run(definition, recording)
        XCTAssertEqual(record.upgrades, 0)
        XCTAssertEqual(record.instances.filter { $0.leftBehind != nil }.count, 9)
    }

    func testPlacementAndCapacity() throws {
        let base = try azDocument()
        // 9 → 12 instances.
        XCTAssertEqual(try diffOf(base, setting(base, ["sku", "capacity"], .int(12))).consequences, [.capacityChange])
        // A zone removed: Azure does not remove zones; the scale set must be replaced.
        let removed = try diffOf(base, setting(base, ["zones"], .array([.string("1"), .string("2")])))
        XCTAssertEqual(removed.consequences, [.replacement])
        XCTAssertEqual(removed.replacedBy.map(\.field), ["zones"])
        // Zones in another order are the same zones.
        XCTAssertEqual(try diffOf(base, setting(base, ["zones"], .array([.string("3"), .string("1"), .string("2")]))).consequences, [.none])
        XCTAssertEqual(try diffOf(base, base).consequences, [.none])
    }
}
