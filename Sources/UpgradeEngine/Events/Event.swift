public import Formats

/// One thing that happened, at one virtual time: a typed payload per kind. Serialized as one JSON
/// object per line; `detail`, the one-line text of the timeline, is rendered from the payload (in `Reports`) and
/// never read back.
public struct Event: Equatable, Sendable {
    /// What kind of thing happened (the payload's case).
    public enum Kind: String, Sendable, CaseIterable {
        case modelUpdated, upgradeStarted, metricsRead, batchStarted, operationStarted, operationFinished
        case healthChanged, servingChanged, preBatchCheck, postBatchCheck, batchFinished, pause, upgradeCompleted
        case upgradeFaulted, upgradeCancelled, rollbackStarted, surgeCreated, surgeFallback, instanceDeleted
        case scaled, manualUpgrade, automaticUpgrade, actionFailed, wireWarning, metricsMissing, runEnded
        case imageReleased, osUpgradeDeferred, osUpgradeApproved, imageRestoreStarted
        case policyUpdated, reimage
        case hookRaised, hookAnswered, hookCompleted, repairStarted, repairsSuspended
        case restart, stop, start
    }

    /// Milliseconds since the scenario epoch.
    public var time: Millis
    /// The instance it concerns, if one.
    public var instance: Int?
    /// The batch (1-based, within the running rolling upgrade) it belongs to, if any.
    public var batch: Int?
    /// The phase (PhaseOrderingNumber) of that batch; nil for unphased instances or no batch.
    public var phase: Int?
    /// What happened, with its facts.
    public var payload: Payload

    /// An event at `time` (milliseconds) about `instance`, in `batch` and `phase`.
    public init(time: Millis, instance: Int? = nil, batch: Int? = nil, phase: Int? = nil, _ payload: Payload) {
        self.time = time
        self.instance = instance
        self.batch = batch
        self.phase = phase
        self.payload = payload
    }

    /// The payload's kind.
    public var kind: Kind { payload.kind }
}


/// A threshold check before or after a batch.
public struct ThresholdCheck: Equatable, Sendable {
    /// The instances that counted against the threshold (unhealthy; after a batch: unhealthy or failed upgraded ones).
    public var counted: [Int]
    /// The capacity when the upgrade started: the denominator.
    public var capacity: Int
    /// The threshold, in percent of `capacity`.
    public var thresholdPercent: Int
    /// Whether the check passed (`counted.count × 100 ≤ threshold × capacity`).
    public var passed: Bool
    /// `counted.count` in percent of `capacity`, rounded down.
    public var percent: Int { capacity == 0 ? 0 : counted.count * 100 / capacity }
}

/// An operation on one instance, as it started.
public struct OperationFacts: Equatable, Sendable {
    /// Upgrade, create, delete or rollback.
    public var kind: OperationKind
    /// The instance's name, e.g. `web_3`.
    public var name: String
    /// The model version the operation brings the instance to (upgrade, rollback, create) or it runs (delete).
    public var targetVersion: Int
    /// Whether it restarts the instance (restart/reimage) rather than applying in place.
    public var disruptive: Bool
    /// How long it takes, in milliseconds.
    public var duration: Millis
    /// Whether the fault injector made it fail.
    public var willFail: Bool
    /// Under MaxSurge, the old instance a created one replaces.
    public var replaces: Int?
}

/// What a platform image release did to the scale set.
public enum ImageReleaseOutcome: Equatable, Sendable {
    /// An automatic OS image upgrade starts.
    case upgrading
    /// `enableAutomaticOSUpgrade` is not true: nothing changes.
    case automaticUpgradesOff
    /// The model names this explicit image version rather than `latest`: nothing changes.
    case pinned(String)
}

/// How many candidates a rolling upgrade found in one phase.
public struct PhaseCount: Equatable, Sendable {
    /// The PhaseOrderingNumber; nil for the last, unphased group.
    public var phase: Int?
    /// Candidates in it, in instances.
    public var count: Int
}

/// What happened, by kind, with its facts.
public enum Payload: Equatable, Sendable {
    /// A new model version (`changes` sorted by attribute) or, with no change, a generic update.
    /// `via` names an OS image or extension upgrade that made it; `healthExtension` what it did to
    /// the Application Health extension (nil: nothing).
    case modelUpdated(version: Int, changes: [String: String], via: String?, healthExtension: HealthExtensionChange? = nil)
    case upgradeStarted(upgrade: Int, targetVersion: Int, reason: String, candidates: Int, capacity: Int, batchSize: Int,
                        skipped: [Int], protected: [Int])
    case metricsRead(phases: [PhaseCount])
    case preBatchCheck(ThresholdCheck)
    /// `shrunk`: the unhealthy budget made the batch smaller than maxBatchInstancePercent.
    case batchStarted(instances: [Int], shrunk: Bool)
    case surgeFallback(needed: Int, quota: Int)
    case surgeCreated(name: String, replaces: Int, replacesName: String, version: Int)
    case operationStarted(OperationFacts)
    case operationFinished(kind: OperationKind, name: String, succeeded: Bool)
    case healthChanged(from: HealthState, to: HealthState, reason: HealthChangeReason)
    /// The instance entered or left service (running or upgrading, and Healthy): `count`
    /// instances serve after it; `reason` is the health state it reached, or its lifecycle
    /// (`deleting`, `deleted`, …) when its health did not change. The capacity curve's steps.
    case servingChanged(serving: Bool, count: Int, reason: ServingReason)
    case batchFinished(healthy: Int, count: Int)
    case postBatchCheck(ThresholdCheck)
    /// Milliseconds before the next batch.
    case pause(duration: Millis)
    case rollbackStarted(name: String, toVersion: Int)
    case upgradeCompleted(upgrade: Int, successful: Int, failed: Int)
    case upgradeFaulted(code: UpgradeErrorCode, message: String)
    /// Cancelled by `cancel`, or superseded by a newer model (`supersededBy` says what).
    case upgradeCancelled(upgrade: Int, supersededBy: String?)
    case instanceDeleted(name: String)
    /// `deleted`: the instances a scale-in removes; `short` when protected or busy ones were spared.
    case scaled(from: Int, to: Int, deleted: [Int], short: Bool)
    /// Manual mode: a model update that changes no instance.
    case manualModeUpdate(outdated: Int)
    /// A manual upgrade of `ids` (nil: `*`).
    case manualUpgrade(ids: [Int]?, upgrading: Int, version: Int)
    case automaticUpgrade(upgrading: Int)
    case actionFailed(action: String, message: String)
    case wireWarning(name: String, message: String)
    /// Candidates whose latest answer was not Healthy when an upgrade was planned, in a scale
    /// set whose phases or skips are in use: they get no phase and no skip (SPEC §3). One event
    /// names them all, ascending.
    case metricsMissing(instances: [Int])
    case runEnded(hitTimeLimit: Bool)
    /// A new platform image version was released.
    case imageReleased(version: String, outcome: ImageReleaseOutcome)
    /// The instance defers its automatic OS upgrade until approved (nil) or for this many ms.
    case osUpgradeDeferred(approveAfter: Millis?)
    /// The instance's deferral ended: by an approve action, or by its own time running out.
    case osUpgradeApproved(byAction: Bool)
    /// An automatic OS upgrade returns an instance that did not become Healthy in time to the
    /// model (image) it ran before.
    case imageRestoreStarted(name: String, toVersion: Int)
    /// The upgrade policy changed (`update_policy`): the policy now in effect, the ARM paths of
    /// the fields that changed, and the rolling upgrade still running with the policy it
    /// started with (nil: none runs).
    case policyUpdated(UpgradePolicy, changed: [String], runningUpgrade: Int?)
    /// A reimage of `ids` (nil: `*`): `reimaging` instances restart on the model they run.
    case reimage(ids: [Int]?, reimaging: Int)
    /// A lifecycle hook event was raised (SPEC §6b): its targets (instance ids; empty: the scale
    /// set itself), when its default action applies and the latest a client may move that to.
    case hookRaised(name: String, type: LifecycleHookType, targets: [Int], waitUntil: Millis, maxWaitUntil: Millis,
                    defaultAction: LifecycleHookAction)
    /// An answer reached the event: the targets it decided (instance nil: the scale set), and the
    /// new `waitUntil` if it moved it; `via` says who answered (`on_hook`, `answer_hook`, …).
    case hookAnswered(name: String, decided: [HookTarget], waitUntil: Millis?, via: String)
    /// The event completed: every target decided, or `waitUntil` came (the default action for
    /// the rest), or the upgrade it stood before ended first (`abandoned`).
    case hookCompleted(HookCompletion)
    /// Automatic instance repairs repair the instance (SPEC §6b); `replacement`: the new
    /// instance a Replace creates on the latest model.
    case repairStarted(action: RepairAction, name: String, replacement: Int?)
    /// The instance's line was repaired `attempts` times and is unhealthy again: the repair
    /// service suspends itself (`serviceState` Suspended).
    case repairsSuspended(attempts: Int)
    /// A restart of `ids` (nil: `*`): `restarting` running instances boot again on the model they run.
    case restart(ids: [Int]?, restarting: Int)
    /// A power off (`deallocate` false) or deallocation of `ids` (nil: `*`): `stopping` instances
    /// leave service and report no health until started.
    case stop(ids: [Int]?, deallocate: Bool, stopping: Int)
    /// A start of `ids` (nil: `*`): `starting` stopped or deallocated instances boot.
    case start(ids: [Int]?, starting: Int)

    /// The kind this payload is.
    public var kind: Event.Kind {
        switch self {
        case .modelUpdated: return .modelUpdated
        case .upgradeStarted: return .upgradeStarted
        case .metricsRead: return .metricsRead
        case .preBatchCheck: return .preBatchCheck
        case .batchStarted: return .batchStarted
        case .surgeFallback: return .surgeFallback
        case .surgeCreated: return .surgeCreated
        case .operationStarted: return .operationStarted
        case .operationFinished: return .operationFinished
        case .healthChanged: return .healthChanged
        case .servingChanged: return .servingChanged
        case .batchFinished: return .batchFinished
        case .postBatchCheck: return .postBatchCheck
        case .pause: return .pause
        case .rollbackStarted: return .rollbackStarted
        case .upgradeCompleted: return .upgradeCompleted
        case .upgradeFaulted: return .upgradeFaulted
        case .upgradeCancelled: return .upgradeCancelled
        case .instanceDeleted: return .instanceDeleted
        case .scaled: return .scaled
        case .manualModeUpdate, .manualUpgrade: return .manualUpgrade
        case .automaticUpgrade: return .automaticUpgrade
        case .actionFailed: return .actionFailed
        case .wireWarning: return .wireWarning
        case .metricsMissing: return .metricsMissing
        case .runEnded: return .runEnded
        case .imageReleased: return .imageReleased
        case .osUpgradeDeferred: return .osUpgradeDeferred
        case .osUpgradeApproved: return .osUpgradeApproved
        case .imageRestoreStarted: return .imageRestoreStarted
        case .policyUpdated: return .policyUpdated
        case .reimage: return .reimage
        case .hookRaised: return .hookRaised
        case .hookAnswered: return .hookAnswered
        case .hookCompleted: return .hookCompleted
        case .repairStarted: return .repairStarted
        case .repairsSuspended: return .repairsSuspended
        case .restart: return .restart
        case .stop: return .stop
        case .start: return .start
        }
    }
}

/// How a lifecycle hook event ended.
public struct HookCompletion: Equatable, Sendable {
    public var name: String
    public var type: LifecycleHookType
    /// Targets approved and rejected (by an answer or by default), and how many of them got the
    /// default action at `waitUntil`.
    public var approved: Int
    public var rejected: Int
    public var defaulted: Int
    /// The rejected instances, ascending (empty for the scale set target).
    public var rejectedInstances: [Int]
    /// From `timeCreated` to completion, in milliseconds.
    public var waited: Millis
    /// The upgrade it stood before ended first: nothing was applied.
    public var abandoned: Bool

    /// An outcome of every field.
    public init(name: String, type: LifecycleHookType, approved: Int, rejected: Int, defaulted: Int, rejectedInstances: [Int],
                waited: Millis, abandoned: Bool) {
        self.name = name
        self.type = type
        self.approved = approved
        self.rejected = rejected
        self.defaulted = defaulted
        self.rejectedInstances = rejectedInstances
        self.waited = waited
        self.abandoned = abandoned
    }
}
