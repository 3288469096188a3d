public import Formats
import LuaHost
public import UpgradeEngine

/// The bounds of the runs `plan` makes to say how long an upgrade takes with the scenario's own
/// behaviour: how many runs, how many upgraded instances are enough, how far past its upgrade's
/// start a run may go in virtual time, and how many script instructions one run may spend.
public struct PlanRangeBounds: Equatable, Sendable {
    /// Runs at most (seeds `seed`, `seed + 1`, …).
    public var runs: Int
    /// Upgraded instances measured at most: once this many are, no more runs start.
    public var instances: Int
    /// Virtual time a run may go past its first rolling upgrade's start, in ms.
    public var virtualTime: Millis
    /// Script instructions one run may spend (all its calls together).
    public var instructions: Int
    /// Upgrades drawn from the measured parts to make the range.
    public var trials: Int
    /// Script instructions all the runs may spend together: more runs share it, each run's own
    /// bound shrinking to its share (`plan --boot-runs 1000` measures no more than 20 runs do).
    public var totalInstructions: Int = 1_000_000_000

    /// The instructions one run may spend: `instructions`, or its share of `totalInstructions`
    /// when the runs would spend more together (at least 1).
    public var instructionsPerRun: Int { max(1, min(instructions, totalInstructions / max(1, runs))) }

    /// 20 runs, 600 instances, 24 h of virtual time past the upgrade's start, 50,000,000
    /// instructions a run, 1,000 drawn upgrades.
    public init(runs: Int = 20, instances: Int = 600, virtualTime: Millis = 86_400_000, instructions: Int = 50_000_000, trials: Int = 1_000) {
        self.runs = runs
        self.instances = instances
        self.virtualTime = virtualTime
        self.instructions = instructions
        self.trials = trials
    }
}

/// Why the measuring runs stopped.
public enum PlanRangeStop: String, Equatable, Sendable {
    /// Every run ran its first rolling upgrade to its end.
    case allRuns = "all runs"
    /// Enough upgraded instances were measured.
    case instances = "enough instances"
    /// A run reached the virtual-time bound before its upgrade ended.
    case virtualTime = "virtual time"
    /// A run spent its script instructions.
    case instructions = "script instructions"
    /// A run started no rolling upgrade.
    case noUpgrade = "no upgrade"
    /// A run failed (a script error, a run limit).
    case failed = "a run failed"
}

/// The duration of a plan's upgrade with the boot: the p50 and p95 of upgrades drawn from what
/// some bounded runs of the scenario measured (each batch waits for its slowest instance), with
/// how much was measured and why the runs stopped.
public struct PlanRange: Equatable, Sendable {
    /// Median duration, in ms; nil when nothing was measured.
    public var p50: Millis?
    /// 95th percentile duration, in ms; nil when nothing was measured.
    public var p95: Millis?
    /// Runs made.
    public var runs: Int
    /// Runs whose first rolling upgrade ended within the bounds.
    public var upgradesEnded: Int
    /// Upgraded instances measured.
    public var instances: Int
    /// Upgrades drawn.
    public var trials: Int
    /// Why the runs stopped.
    public var stopped: PlanRangeStop
    /// The failure that stopped them, when one did.
    public var failure: String?
    /// The bounds the runs had.
    public var bounds: PlanRangeBounds
    /// The seed of the first run.
    public var seed: UInt64
    /// The medians of the first run (the plan's seed), as `plan` has always printed them.
    public var boot: MeasuredBoot?
}

extension Rehearsal {
    /// How long `plan`'s upgrade takes with the scenario's own behaviour: runs of `definition`
    /// with `inputs` (seeds from its seed on) within `bounds`, each watched until its first
    /// rolling upgrade ends, then `bounds.trials` upgrades of the plan's batches drawn from the
    /// parts measured (`pause` between batches when no gap was measured).
    public static func range(of plan: UpgradePlan, pause: Millis, _ definition: ScenarioDefinition, _ inputs: RunInputs,
                             bounds: PlanRangeBounds = PlanRangeBounds()) -> PlanRange {
        final class Watcher { var timings = UpgradeTimings(); var start: Millis?; var upgrades = 0 }
        let watcher = Watcher()
        var runs = 0, ended = 0
        var stopped = PlanRangeStop.allRuns
        var failure: String?
        var boot: MeasuredBoot?
        measuring: while runs < bounds.runs {
            if watcher.timings.instances >= bounds.instances {
                stopped = .instances
                break
            }
            var run = inputs.with(seed: inputs.seed &+ UInt64(runs))
            // The first run's events give the medians of the plan's own seed.
            run.recordEvents = runs == 0
            run.limits.runInstructions = run.limits.runInstructions == 0 ? bounds.instructionsPerRun : min(run.limits.runInstructions, bounds.instructionsPerRun)
            runs += 1
            watcher.timings.nextRun()
            watcher.start = nil
            do {
                let session = try RehearsalSession(definition, run, onEvent: { event in
                    if case .upgradeStarted = event.payload, watcher.start == nil { watcher.start = event.time }
                    watcher.timings.observe(event)
                })
                defer { if run.recordEvents { boot = MeasuredBoot(session.events) } }
                while !watcher.timings.upgradeEnded, try session.step() != nil {
                    if let start = watcher.start, session.now - start > bounds.virtualTime {
                        stopped = .virtualTime
                        break measuring
                    }
                }
            } catch {
                if case .script(let lua, _) = error.error, case .runBudget = lua.kind { stopped = .instructions } else {
                    stopped = .failed
                    failure = error.description
                }
                break
            }
            guard watcher.timings.upgradeEnded else {
                // The run ended (its time limit, or nothing left to do) with its upgrade unfinished, or without one.
                stopped = watcher.start == nil ? .noUpgrade : .virtualTime
                break
            }
            ended += 1
        }
        let sizes = plan.batches.map(\.instances.count)
        let drawn = watcher.timings.simulate(batches: sizes, pause: pause, trials: bounds.trials, seed: inputs.seed)
        return PlanRange(p50: drawn.flatMap { UpgradeTimings.percentile($0, 50) }, p95: drawn.flatMap { UpgradeTimings.percentile($0, 95) }, runs: runs,
                         upgradesEnded: ended, instances: watcher.timings.instances, trials: drawn == nil ? 0 : bounds.trials,
                         stopped: stopped, failure: failure, bounds: bounds, seed: inputs.seed, boot: boot)
    }
}
