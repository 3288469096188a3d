public import Formats

/// Lifecycle hooks (SPEC §6b; Compute api-version 2025-11-01, `properties.lifecycleHooksProfile`):
/// before an automatic OS upgrade is scheduled, and before each of its batches, the platform
/// raises an event and waits for the team's answer, applying `defaultAction` when none comes.

/// The two hook types of api-version 2025-11-01.
public enum LifecycleHookType: String, Sendable, ParsesCaseInsensitively {
    /// Before the platform schedules the OS upgrade of a new image; targets the scale set itself.
    case upgradeAutoOSScheduling = "UpgradeAutoOSScheduling"
    /// Before each batch of an automatic OS upgrade starts; targets the batch's instances.
    case upgradeAutoOSRollingBatchStarting = "UpgradeAutoOSRollingBatchStarting"

    /// The `waitDuration` taken when a hook gives none (azure-cli #33328: scheduling one hour,
    /// a batch 30 minutes).
    public var defaultWait: Millis { self == .upgradeAutoOSScheduling ? 3_600_000 : 1_800_000 }
    /// The longest wait: `waitDuration` and `maxWaitUntil − timeCreated` (azure-cli #33328:
    /// scheduling two days, a batch four hours).
    public var maxWait: Millis { self == .upgradeAutoOSScheduling ? 172_800_000 : 14_400_000 }
}

/// What is done to a target: an answer, or the hook's `defaultAction`.
public enum LifecycleHookAction: String, Sendable, ParsesCaseInsensitively {
    case approve = "Approve", reject = "Reject"
}

/// One entry of `lifecycleHooksProfile.lifecycleHooks`.
public struct LifecycleHook: Equatable, Sendable {
    public var type: LifecycleHookType
    /// How long an event waits for answers, in milliseconds (at most `type.maxWait`).
    public var waitDuration: Millis
    /// Applied to every target still Waiting at `waitUntil` (Approve when the hook says none).
    public var defaultAction: LifecycleHookAction

    /// A hook of `type`; the wait and default action default as Azure's do.
    public init(type: LifecycleHookType, waitDuration: Millis? = nil, defaultAction: LifecycleHookAction = .approve) {
        self.type = type
        self.waitDuration = waitDuration ?? type.defaultWait
        self.defaultAction = defaultAction
    }
}

/// A target's `actionState`.
public enum HookActionState: String, Sendable {
    case waiting = "Waiting", approved = "Approved", rejected = "Rejected"
}

/// One target of a lifecycle hook event: an instance of the batch, or the scale set (`instance` nil).
public struct HookTarget: Equatable, Sendable {
    /// The instance id; nil for the scale set itself (a scheduling event).
    public var instance: Int?
    /// The instance's name (a Flexible scale set's VM name), or the scale set's.
    public var name: String
    public var actionState: HookActionState
    /// Whether `actionState` came from the hook's `defaultAction` at `waitUntil`.
    public var defaulted = false

    /// A target in `actionState`.
    public init(instance: Int?, name: String, actionState: HookActionState, defaulted: Bool = false) {
        self.instance = instance
        self.name = name
        self.actionState = actionState
        self.defaulted = defaulted
    }
}

/// A lifecycle hook event (the child resource `lifecycleHookEvents/{name}`) as the engine keeps it.
public struct LifecycleHookEvent: Equatable, Sendable {
    /// Events of a run, numbered from 1 in the order they are raised.
    public var number: Int
    /// Its resource name (a GUID-shaped name made from `number`, the same in every run).
    public var name: String
    public var type: LifecycleHookType
    /// When it was raised, `waitUntil` (default action then) and the latest `waitUntil` a client
    /// may set, in milliseconds on the virtual clock.
    public var timeCreated: Millis
    public var waitUntil: Millis
    public var maxWaitUntil: Millis
    public var defaultAction: LifecycleHookAction
    public var targets: [HookTarget]
    /// `Active` until every target is decided or `waitUntil` passes; then `Completed`.
    public var isActive = true
    /// When it completed (ms); nil while active.
    public var completedAt: Millis?
    /// The rolling upgrade and the batch (1-based) a batch event stands before.
    public var upgrade: Int?
    public var batch: Int?

    /// An Active event of every field.
    public init(number: Int, name: String, type: LifecycleHookType, timeCreated: Millis, waitUntil: Millis, maxWaitUntil: Millis,
                defaultAction: LifecycleHookAction, targets: [HookTarget], upgrade: Int? = nil, batch: Int? = nil) {
        self.number = number
        self.name = name
        self.type = type
        self.timeCreated = timeCreated
        self.waitUntil = waitUntil
        self.maxWaitUntil = maxWaitUntil
        self.defaultAction = defaultAction
        self.targets = targets
        self.upgrade = upgrade
        self.batch = batch
    }

    /// The name event `number` gets: a GUID shape whose last group is the number.
    public static func name(_ number: Int) -> String {
        let digits = String(number)
        return "00000000-0000-4000-8000-" + String(repeating: "0", count: max(0, 12 - digits.count)) + digits
    }

    /// `Active` or `Completed`, as the resource's `state` says.
    public var state: String { isActive ? "Active" : "Completed" }
    /// Instances (or the scale set, nil) in each state.
    public func targets(_ state: HookActionState) -> [Int?] { targets.filter { $0.actionState == state }.map(\.instance) }
}

/// Which targets an answer decides.
public enum HookSelection: Equatable, Sendable {
    /// Every target still Waiting.
    case all
    /// These instance ids (a scheduling event's only target is the scale set: use `all`).
    case instances([Int])
}

/// An answer to a lifecycle hook event: rejections first, then approvals, and perhaps a new
/// `waitUntil`; given `after` a delay, it arrives that much later (the team's automation).
public struct HookResponse: Equatable, Sendable {
    public var reject: HookSelection?
    public var approve: HookSelection?
    /// The new `waitUntil`, as a time after the event's `timeCreated` (ms); at most `maxWaitUntil`.
    public var waitFor: Millis?
    /// How long after it is asked the answer arrives (ms); nil or 0: at once.
    public var after: Millis?

    /// An answer; nothing decided when every field is nil.
    public init(reject: HookSelection? = nil, approve: HookSelection? = nil, waitFor: Millis? = nil, after: Millis? = nil) {
        self.reject = reject
        self.approve = approve
        self.waitFor = waitFor
        self.after = after
    }

    /// Whether it decides or moves nothing.
    public var isEmpty: Bool { reject == nil && approve == nil && waitFor == nil }
}

/// The scenario's answer to each lifecycle hook event as it is raised (a script's `on_hook`).
public protocol HookAnswerSource: AnyObject {
    /// The answer to `event` at `time` (ms); nil: no answer now (the event waits).
    func answer(_ event: LifecycleHookEvent, at time: Millis) throws -> HookResponse?
}

extension ScaleSetDefinition {
    /// What Azure refuses in a `lifecycleHooksProfile`: a type given twice, a `waitDuration`
    /// that is not positive or longer than its type allows.
    public static func hookProblems(_ hooks: [LifecycleHook]) -> [Problem] {
        var problems: [Problem] = []
        var seen: Set<LifecycleHookType> = []
        for (i, hook) in hooks.enumerated() {
            let field = "lifecycleHooksProfile.lifecycleHooks[\(i)]"
            if !seen.insert(hook.type).inserted {
                problems.append(Problem(field: "\(field).type", "\(hook.type.rawValue) is given twice; one hook of each type"))
            }
            if hook.waitDuration <= 0 || hook.waitDuration > hook.type.maxWait {
                problems.append(Problem(field: "\(field).waitDuration", "\(ISODuration.format(hook.waitDuration)) is out of range for \(hook.type.rawValue); allowed above PT0S up to \(ISODuration.format(hook.type.maxWait))"))
            }
        }
        return problems
    }

    /// The hook of `type`, if the scale set has one.
    public func hook(_ type: LifecycleHookType) -> LifecycleHook? { lifecycleHooks.first { $0.type == type } }
}
