import Formats
import LuaHost
import Scenario
import UpgradeEngine

/// RehearsalTests.realisticFleet as a Swift definition: thirty instances in three zones, batches
/// of 20% (6), at most 10% of the upgraded instances unhealthy, 10 s between batches, 600 s of
/// grace, the model updated to v2 at PT1M. On v1 every instance answers Healthy; on v2 each
/// instance draws, from the run's seed, a boot of 120–360 s and, one in about twelve, a boot that
/// never answers.
enum RealisticFleet {
    static var scaleSet: ScaleSetDefinition {
        var scaleSet = ScaleSetDefinition(name: "shop", capacity: 30)
        scaleSet.zones = ["1", "2", "3"]
        scaleSet.model = ["image": "v1"]
        scaleSet.policy.mode = .rolling
        scaleSet.policy.rolling.maxBatchInstancePercent = 20
        scaleSet.policy.rolling.maxUnhealthyUpgradedInstancePercent = 10
        scaleSet.policy.rolling.pauseTimeBetweenBatches = 10_000
        scaleSet.healthExtension = HealthExtensionSettings(protocol: .http, port: 8080, requestPath: "/health", intervalInSeconds: 5,
                                                           gracePeriod: 600)
        return scaleSet
    }

    /// Each instance's boot on v2, drawn at its first probe on v2 and kept (as a script's `vm.state`).
    final class Boots {
        var generator: SeededGenerator
        var drawn: [Int: (boot: Millis, silent: Bool)] = [:]

        init(seed: UInt64) { generator = SeededGenerator(seed: seed) }

        func boot(of id: Int) -> (boot: Millis, silent: Bool) {
            if let known = drawn[id] { return known }
            let boot = Millis.random(in: 120...360, using: &generator) * 1_000
            let silent = Double.random(in: 0..<1, using: &generator) < 0.08
            drawn[id] = (boot, silent)
            return (boot, silent)
        }
    }

    static let behaviours = SwiftBehaviours { context in
        let boots = Boots(seed: context.seed)
        return Behaviours(health: ClosureHealthSource { vm, now in
            if vm.modelVersion == 1 { return .named(.healthy) }
            let (boot, silent) = boots.boot(of: vm.id)
            return silent || now - vm.health.startedAt < boot ? .noAnswer : .named(.healthy)
        })
    }

    static var definition: ScenarioDefinition {
        ScenarioDefinition(path: "realistic fleet (Swift)", scaleSet: scaleSet, behaviour: .swift(behaviours),
                           timeline: [.init(time: 60_000, action: .perform(.updateModel(["image": "v2"])))])
    }
}
