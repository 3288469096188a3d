public import Formats

/// What makes an OS image upgrade's run differ from a model update's.
struct OSUpgradeTerms {
    /// Who started it, as the OS upgrade history says.
    var startedBy: OSUpgradeRecord.Invoker
    /// The image version it brings (the model's `image` attribute).
    var image: String
    /// The scale set's other image attributes (`publisher`, `offer`, `sku`), for the history.
    var reference: [String: String]
    /// Automatic upgrades without `useRollingUpgradePolicy`: batch with the default policy.
    var usesDefaultPolicy: Bool
    /// Automatic upgrades: how long each upgraded instance has to become Healthy, in milliseconds.
    var healthWait: Millis?
    /// Automatic upgrades unless `disableAutomaticRollback`: restore an instance that does not
    /// become Healthy in time to its previous image.
    var restoreFailed: Bool
    /// `osRollingUpgradeDeferral`: each instance may defer its upgrade until approved.
    var deferral: Bool
    /// The `UpgradeAutoOSRollingBatchStarting` hook: each batch waits for its event (SPEC §6b).
    var batchHook: LifecycleHook? = nil
}

/// An instance's answer when told its OS upgrade is coming (`osRollingUpgradeDeferral`).
public enum OSUpgradeDeferral: Equatable, Sendable {
    /// Go ahead now.
    case none
    /// Wait for an `approveOSUpgrade` of this instance.
    case untilApproved
    /// Approve by itself after this many milliseconds.
    case approveAfter(Millis)
}
