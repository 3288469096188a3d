public import AzureWire
import Formats
public import UpgradeEngine

extension ScenarioDefinition {
    /// The importer's adapter: the starting scenario for the scale set a document describes
    /// (`az vmss show`, an ARM template or compiled Bicep, a Terraform plan), read from `path`,
    /// with `fleet` as `az vmss list-instances` lists it when given (the list is taken: the
    /// capacity is its length). Every probe answers Healthy (no health source of its own); the
    /// timeline holds the actions that fit the upgrade mode: a model update a minute in (Rolling
    /// and Automatic), every instance upgraded a minute later (Manual), a platform image released
    /// an hour in when automatic OS image upgrades are on. It expects the rolling upgrade to
    /// complete (Rolling, or OS upgrades on), else no rolling upgrade at all.
    public init(imported: ImportedScaleSet, path: String, parameters: String? = nil, fleet: [ExistingInstance]? = nil) {
        var scaleSet = imported.definition
        if let fleet {
            scaleSet.fleet = fleet
            scaleSet.capacity = fleet.count
        }
        var timeline = [TimelineEntry(time: 60_000, action: .perform(.updateModel(NextModel.changes(from: scaleSet.model))))]
        if scaleSet.policy.mode == .manual { timeline.append(TimelineEntry(time: 120_000, action: .perform(.manualUpgrade(ids: nil)))) }
        let osUpgrades = scaleSet.policy.automaticOS.enableAutomaticOSUpgrade
        if osUpgrades { timeline.append(TimelineEntry(time: 3_600_000, action: .perform(.releaseImage(version: "next")))) }
        var expectation = Expectation(location: path)
        if scaleSet.policy.mode == .rolling || osUpgrades {
            expectation.code = .completed
        } else {
            expectation.upgrades = 0
        }
        self.init(path: path, scaleSet: scaleSet, behaviour: .swift(SwiftBehaviours { _ in Behaviours() }), timeline: timeline,
                  expectations: [expectation], scaleSetLocation: path, warnings: imported.warnings.map { "\(path): \($0.field): \($0.message)" },
                  documents: [path] + (parameters.map { [$0] } ?? []))
    }
}
