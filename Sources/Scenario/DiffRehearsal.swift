public import AzureWire
public import Formats
public import UpgradeEngine

/// A rehearsal of exactly the change between two versions of a scale set: the fleet starts as
/// `before` is (with the policy `after` gives, as Azure applies a PUT's policy to the update it
/// makes) and a minute in the change is made: the model fields that differ (`update_model`), the
/// capacity (`scale`), or, when only the policy changes, the policy (`update_policy`). A Manual
/// scale set's instances then wait; nobody upgrades them. The behaviours are `team`'s (a
/// scenario's health, phases and faults, its own `at` actions left out), else every probe
/// answers Healthy with the engine's timings.
public enum DiffRehearsal {
    /// When the change is made.
    public static let changeAt: Millis = 60_000

    /// The definition that rehearses `diff` from `before` to `after`; `team` gives the behaviours.
    public static func definition(before: ScaleSetDefinition, after: ScaleSetDefinition, diff: ScaleSetDiff,
                                  team: ScenarioDefinition?, path: String) -> ScenarioDefinition {
        var start = before
        start.policy = after.policy
        if let team {
            start.timings = team.scaleSet.timings
        }
        // Rolling needs a health source: a change that adds the extension starts under the old policy.
        var timeline: [ScenarioDefinition.TimelineEntry] = []
        if !start.validate().isEmpty {
            start.policy = before.policy
            timeline.append(.init(time: changeAt, action: .perform(.updatePolicy(PolicyPatch(whole: after.policy)))))
        }
        if before.capacity != after.capacity { timeline.append(.init(time: changeAt, action: .perform(.scale(to: after.capacity)))) }
        if !diff.modelChanges.isEmpty {
            timeline.append(.init(time: changeAt, action: .perform(.updateModel(diff.modelChanges))))
            if diff.consequences.contains(.terraformRollsEachInstance) { timeline += terraformRoll(start, disruptive: diff.disruptive) }
        } else if before.policy != after.policy, !timeline.contains(where: { if case .perform(.updatePolicy) = $0.action { return true } else { return false } }) {
            timeline.append(.init(time: changeAt, action: .perform(.updatePolicy(PolicyPatch(whole: after.policy)))))
        }
        guard var definition = team else {
            return ScenarioDefinition(path: path, scaleSet: start, behaviour: .swift(SwiftBehaviours { _ in Behaviours() }), timeline: timeline,
                                      scaleSetLocation: path)
        }
        definition.scaleSet = start
        definition.timeline = definition.timeline.filter { $0.location != nil } + timeline
        return definition
    }

    /// Whether the change rolls instances or changes their number: what a rehearsal measures.
    public static func rehearses(_ diff: ScaleSetDiff) -> Bool {
        let rolls: [ScaleSetDiff.Consequence] = [.rollingUpgradeNow, .allAtOnce, .terraformRollsEachInstance, .capacityChange]
        return !diff.consequences.contains(.replacement) && diff.consequences.contains { rolls.contains($0) }
    }

    /// What `terraform apply` does under Manual with azurerm's defaults: each instance updated
    /// to the new model and then reimaged, one at a time, each operation waited for
    /// (virtual_machine_scale_set_update.go, upgradeInstancesForManualUpgradePolicy).
    static func terraformRoll(_ scaleSet: ScaleSetDefinition, disruptive: Bool) -> [ScenarioDefinition.TimelineEntry] {
        let update = disruptive ? scaleSet.timings.disruptiveUpgrade : scaleSet.timings.inPlaceUpgrade
        let reimage = scaleSet.timings.disruptiveUpgrade
        var entries: [ScenarioDefinition.TimelineEntry] = []
        var time = changeAt
        for id in 0..<scaleSet.capacity {
            entries.append(.init(time: time, action: .perform(.manualUpgrade(ids: [id]))))
            time += update
            entries.append(.init(time: time, action: .perform(.reimage(ids: [id]))))
            time += reimage
        }
        return entries
    }

    /// The inputs of its runs: a team scenario's own `at` actions do not run.
    public static func inputs(_ base: RunInputs = RunInputs()) -> RunInputs {
        var inputs = base
        inputs.scriptTimeline = false
        inputs.recordEvents = false
        return inputs
    }
}
