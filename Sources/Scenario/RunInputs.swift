public import AzureWire
public import Formats
public import LuaHost
public import UpgradeEngine

/// What one run of a definition takes besides the definition: the seed, policy overrides,
/// parameter values, limits and what to keep. The same definition and inputs give the same
/// record, byte for byte.
public struct RunInputs: Sendable {
    /// Seed of `math.random` and of every seeded behaviour.
    public var seed: UInt64
    /// Policy fields changed before the run, checked as the definition's own policy.
    public var overrides: [PolicyOverride]
    /// Values of the definition's parameters, by name, as written (`0.1`, `PT5M`); nil: the
    /// values the definition describes. Each name must be one the definition declares.
    public var parameterValues: [String: String]?
    /// Limits of every call into a Lua program (and of all of a run's calls together).
    public var limits: LuaLimits
    /// Limits of the run as a whole (actions scheduled, events, instances, probes).
    public var runLimits: RunLimits
    /// The virtual time after which the run stops with work left, in milliseconds (7 days by default).
    public var timeLimit: Millis
    /// Whether the run keeps every event in its `RunRecord` (a caller that streams events, as the
    /// command line does, can spare the memory).
    public var recordEvents: Bool
    /// Judge custom metrics sent as a JSON object as Azure's extension does.
    public var strictWire: Bool
    /// Whether the engine asks the health source for runs of probes due at one instant (the
    /// default) or for one probe at a time; the events are the same (tests compare the two).
    var probesInRuns = true
    /// Whether a Lua program's own `at` callbacks run (`diff` rehearses only the change it
    /// reads, with the program's behaviours, and turns them off); typed actions always run.
    public var scriptTimeline = true
    /// Whether the scenario's gate acts: its `on_hook` answers lifecycle hook events. Off, every
    /// event waits for its `defaultAction` (a shadow gate's other run: `sweep --shadow-gate`).
    public var gateActs = true

    /// Inputs of a run with `seed` and `overrides`: the definition's parameter values, the default
    /// limits, a 7-day time limit, events kept, custom metrics judged leniently.
    public init(seed: UInt64 = 0, overrides: [PolicyOverride] = [], parameterValues: [String: String]? = nil, limits: LuaLimits = LuaLimits(),
                runLimits: RunLimits = RunLimits(), timeLimit: Millis = 7 * 86_400_000, recordEvents: Bool = true, strictWire: Bool = false) {
        self.seed = seed
        self.overrides = overrides
        self.parameterValues = parameterValues
        self.limits = limits
        self.runLimits = runLimits
        self.timeLimit = timeLimit
        self.recordEvents = recordEvents
        self.strictWire = strictWire
    }

    /// The same inputs with another seed.
    public func with(seed: UInt64) -> RunInputs {
        var copy = self
        copy.seed = seed
        return copy
    }

    /// The parameter values a run of `definition` with these inputs uses.
    func parameterValues(of definition: ScenarioDefinition) -> [String: String] {
        parameterValues ?? definition.parameterValues
    }
}
