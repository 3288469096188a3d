public import Formats
import LuaHost
public import UpgradeEngine

/// A scenario as a value: the scale set, what happens to it and when, what every run must show,
/// and how its instances behave. Nothing in it is live and nothing is fixed for one run (the
/// seed, policy overrides, parameter values and limits are a run's `RunInputs`), so a definition
/// can be run any number of times, on any thread, with the same record for the same inputs.
///
/// It comes from any source: the Lua loader (`init(luaScript:options:)`) runs a script's top
/// level once and keeps what it described; an importer or a Swift test builds one with the
/// memberwise initializer, with Swift behaviours and typed timeline actions and no Lua at all.
public struct ScenarioDefinition: Sendable {
    /// The name messages give the scenario: a script's path, or a name the builder chose.
    public var path: String
    /// The scale set every run starts from (a run applies its overrides to a copy).
    public var scaleSet: ScaleSetDefinition
    /// Where the scale set was described (`file:line`, or a document path); nil when built in code.
    public var scaleSetLocation: String?
    /// What happens to the scale set and when, in the order the source gave it: entries at one
    /// time run in this order.
    public var timeline: [TimelineEntry]
    /// What every run must show at its end.
    public var expectations: [Expectation]
    /// Requirements on shares of runs that `sweep`, `compare`, `test` and `tune` judge; nil
    /// without any.
    public var risk: RiskQuestion?
    /// The parameters the scenario declares, by name: a run's `RunInputs.parameterValues` may
    /// give any of them a value.
    public var parameters: [String: ScenarioParameter]
    /// The parameter values this definition describes (the rest take their defaults): a run
    /// whose inputs give other values describes its scenario again from them (see
    /// `Rehearsal.run`).
    public var parameterValues: [String: String]
    /// How the instances behave: a Lua program, or Swift behaviours.
    public var behaviour: Behaviour
    /// What is odd about the definition without stopping a run.
    public var warnings: [String]
    /// The documents the scale set was read from (`from`, `parameters`), by path.
    public var documents: [String]

    /// A definition built in code: `scaleSet` and `behaviour` with, by default, an empty timeline,
    /// no expectations, no risk question, no parameters, no warnings and no documents.
    public init(path: String, scaleSet: ScaleSetDefinition, behaviour: Behaviour, timeline: [TimelineEntry] = [],
                expectations: [Expectation] = [], risk: RiskQuestion? = nil, parameters: [String: ScenarioParameter] = [:],
                parameterValues: [String: String] = [:], scaleSetLocation: String? = nil, warnings: [String] = [], documents: [String] = []) {
        self.path = path
        self.scaleSet = scaleSet
        self.behaviour = behaviour
        self.timeline = timeline
        self.expectations = expectations
        self.risk = risk
        self.parameters = parameters
        self.parameterValues = parameterValues
        self.scaleSetLocation = scaleSetLocation
        self.warnings = warnings
        self.documents = documents
    }

    /// How a definition's instances behave and where its script callbacks come from.
    public enum Behaviour: Sendable {
        /// A Lua program: every run makes a fresh Lua state from it, runs its top level and calls
        /// its callbacks.
        case lua(LuaProgram)
        /// Swift behaviours: every run asks the factory for fresh sources.
        case swift(SwiftBehaviours)
    }

    /// One entry of the timeline: when, and what happens.
    public struct TimelineEntry: Equatable, Sendable {
        /// Virtual time, in milliseconds from the start of the run (at least 0).
        public var time: Millis
        /// What happens then.
        public var action: Action

        /// An entry at `time` (ms).
        public init(time: Millis, action: Action) {
            self.time = time
            self.action = action
        }

        /// What a timeline entry does.
        public enum Action: Equatable, Sendable {
            /// The script's `at` callback registered at `location` (`file:line`): the n-th
            /// `.script` entry of a timeline is the n-th callback the program's top level put on
            /// its timeline. Only a Lua program has these.
            case script(location: String)
            /// A typed action, performed as a script's `at` callback performing it would.
            case perform(SessionAction)
        }

        /// `file:line` of a script callback; nil for a typed action.
        public var location: String? {
            if case .script(let location) = action { return location }
            return nil
        }
    }

    /// The Lua program, when the behaviour is one.
    public var program: LuaProgram? {
        if case .lua(let program) = behaviour { return program }
        return nil
    }

    /// The folder of the script at `path`: where `from` documents' relative paths start.
    static func folder(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }
}

/// A Lua scenario program as a value: its source, the modules it required, the callbacks it
/// registered and what its top level described, so that a run can make a fresh state from it
/// without reading a file, and check that its top level describes the same scenario.
public struct LuaProgram: Sendable {
    /// The script's path, as errors name it.
    public var path: String
    /// The script's text.
    public var source: String
    /// Every module the top level required beyond the built-in ones, by name: its source and the
    /// path it was read from. Runs read these, not the files.
    public var modules: [String: ModuleSource]
    /// The bundles those modules came from, with the version chosen and whether a lock bound it.
    public var bundles: [BundleChoice]
    /// Where the script registers each callback; nil where it registers none.
    public var hooks: Hooks
    /// The plugin folders, in search order, for a `require` the top level did not make.
    public var searchPath: [String]
    /// The lock file binding bundle versions, if any.
    public var lockPath: String?
    /// The table the script gave `scaleset`, as a value: a run checks its own top level against
    /// it (without reading a `from` document again).
    var described: LuaValue

    /// Where each callback was registered (`file:line`).
    public struct Hooks: Equatable, Sendable {
        /// `health(...)`.
        public var health: String?
        /// `phase(...)`.
        public var phase: String?
        /// `fault(...)`.
        public var fault: String?
        /// `deferral(...)`.
        public var deferral: String?
        /// `on_hook(...)`.
        public var onHook: String?
    }

    /// A module's text and the path its errors name.
    public struct ModuleSource: Equatable, Sendable {
        /// The Lua source.
        public var source: String
        /// The path shown in errors (`plugins/slow-boot/init.lua`).
        public var path: String
    }

    /// A bundle the script required.
    public struct BundleChoice: Equatable, Sendable {
        /// The bundle's name.
        public var name: String
        /// The version chosen.
        public var version: String
        /// The folder it was read from.
        public var folder: String
        /// Whether `rehearse.lock` bound it (its files were checked against the lock).
        public var locked: Bool
    }
}

/// Swift behaviours: a factory the run asks, once per run, for fresh sources. A source may keep
/// state for the run it was made for; none is shared between runs.
public struct SwiftBehaviours: Sendable {
    /// Makes the sources of one run.
    public var make: @Sendable (BehaviourContext) throws -> Behaviours

    /// Behaviours made by `make`, once per run.
    public init(_ make: @escaping @Sendable (BehaviourContext) throws -> Behaviours) { self.make = make }
}

/// What a run tells the factory of Swift behaviours.
public struct BehaviourContext: Sendable {
    /// The run's seed.
    public var seed: UInt64
    /// The run's parameter values, by name (the definition's, or its inputs').
    public var parameterValues: [String: String]
    /// The scale set the run starts from, overrides applied.
    public var scaleSet: ScaleSetDefinition
}

/// The sources of one run; nil where the engine's default applies (every probe Healthy, phases
/// from metrics only, every operation succeeding in its default time, no deferral).
public struct Behaviours {
    /// Answers health probes.
    public var health: (any HealthSource)?
    /// Gives instances their `PhaseOrderingNumber`.
    public var phases: (any PhaseSource)?
    /// Decides operations' outcomes and durations.
    public var faults: (any FaultInjector)?
    /// Answers notices of automatic OS upgrades.
    public var deferrals: (any DeferralSource)?
    /// Answers lifecycle hook events as they are raised (SPEC §6b).
    public var hooks: (any HookAnswerSource)?

    /// Sources of one run.
    public init(health: (any HealthSource)? = nil, phases: (any PhaseSource)? = nil, faults: (any FaultInjector)? = nil,
                deferrals: (any DeferralSource)? = nil, hooks: (any HookAnswerSource)? = nil) {
        self.health = health
        self.phases = phases
        self.faults = faults
        self.deferrals = deferrals
        self.hooks = hooks
    }
}
