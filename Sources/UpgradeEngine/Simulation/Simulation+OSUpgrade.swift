public import Formats

/// OS image upgrades (SPEC §6): on demand (`startOSUpgrade`) and automatic, when a new platform
/// image is released to a scale set with `automaticOSUpgradePolicy.enableAutomaticOSUpgrade`.
/// Both run as rolling upgrades; an automatic one batches with the default policy unless told
/// otherwise, gives each upgraded instance five minutes to become Healthy, restores one that does
/// not to its previous image, and may let instances defer.

/// Decides which instances defer their automatic OS upgrade (the scenario's `deferral`).
public protocol DeferralSource: AnyObject {
    /// What `instance` answers, at `time` (milliseconds on the virtual clock), to the notice that
    /// its OS upgrade is coming.
    func deferral(of instance: Instance, at time: Millis) throws -> OSUpgradeDeferral
}

/// Five minutes: how long each instance of an automatic OS upgrade has to become Healthy.
public let automaticOSUpgradeHealthWait: Millis = 300_000

extension Simulation {
    /// An OS image upgrade on demand (`az vmss rolling-upgrade start`): the model's `image`
    /// becomes `image` (default: a new version of the current one) and a rolling upgrade runs
    /// whatever the mode. Refused, as Azure refuses it (HTTP 409 OperationNotAllowed), unless
    /// some unprotected instance runs an image whose version is `latest`: a model attribute
    /// `imageReference.version` names an explicit version; a model without one runs `latest`.
    public func startOSUpgrade(image: String? = nil) throws {
        let onLatest = presentInstances.contains { vm in
            !vm.protectFromScaleSetActions && (models[vm.modelVersion - 1][Self.imageVersionAttribute] ?? "latest").lowercased() == "latest"
        }
        guard onLatest else {
            throw EngineError("The OS Rolling Upgrade API cannot be used on a Virtual Machine Scale Set unless the Virtual Machine Scale Set has some unprotected instances which have imageReference.version set to latest.", .notOnLatestImage)
        }
        let value = image ?? nextImage()
        let terms = OSUpgradeTerms(startedBy: .user, image: value, reference: imageReference, usesDefaultPolicy: false,
                                   healthWait: nil, restoreFailed: false, deferral: false)
        try platformUpgrade(attribute: "image", value: value, what: "OS image upgrade", os: terms)
    }

    /// A new platform image `version` is released. With automatic OS upgrades on and a model that
    /// runs the `latest` version, the model's `image` becomes `version` and an automatic OS
    /// upgrade starts (a newer one supersedes it). Otherwise nothing changes; the event says why.
    public func releasePlatformImage(version: String) throws {
        fleet.newestPlatformImage = version
        let automatic = policy.automaticOS
        guard automatic.enableAutomaticOSUpgrade else {
            emit(.imageReleased(version: version, outcome: .automaticUpgradesOff))
            return
        }
        let pinned = models[models.count - 1][Self.imageVersionAttribute] ?? "latest"
        guard pinned.lowercased() == "latest" else {
            emit(.imageReleased(version: version, outcome: .pinned(pinned)))
            return
        }
        emit(.imageReleased(version: version, outcome: .upgrading))
        let terms = OSUpgradeTerms(startedBy: .platform, image: version, reference: imageReference,
                                   usesDefaultPolicy: !automatic.useRollingUpgradePolicy,
                                   healthWait: automaticOSUpgradeHealthWait, restoreFailed: !automatic.disableAutomaticRollback,
                                   deferral: automatic.osRollingUpgradeDeferral, batchHook: hook(.upgradeAutoOSRollingBatchStarting))
        // With a scheduling hook the upgrade waits for its event's approval (SPEC §6b).
        if let scheduling = hook(.upgradeAutoOSScheduling) {
            hooks.scheduling = terms
            try raiseHook(scheduling, targets: [], upgrade: nil, batch: nil, phase: nil)
            return
        }
        try startAutomaticOSUpgrade(terms)
    }

    /// The automatic OS upgrade of `terms` starts: the model's image becomes its version.
    func startAutomaticOSUpgrade(_ terms: OSUpgradeTerms) throws {
        try platformUpgrade(attribute: "image", value: terms.image, what: "automatic OS image upgrade", os: terms)
    }

    /// An extension upgrade: the model's `extensions` becomes `version` (default: a new version)
    /// and a rolling upgrade applies it in place, whatever the mode. Needs a health source.
    public func startExtensionUpgrade(version: String? = nil) throws {
        let value = version ?? ImageVersion.successor(of: models[models.count - 1]["extensions"] ?? ImageVersion.firstExtension)
        try platformUpgrade(attribute: "extensions", value: value, what: "extension upgrade", os: nil)
    }

    private func platformUpgrade(attribute: String, value: String, what: String, os: OSUpgradeTerms?) throws {
        guard hasHealthSource else {
            throw EngineError("\(what) refused: it runs as a rolling upgrade and needs a health probe or the Application Health extension", .needsHealthSource)
        }
        var attributes = models[models.count - 1]
        attributes[attribute] = value
        if let problem = ModelLimits.problem(attributes) { throw EngineError("\(what) refused: \(problem)", .invalid([Problem(field: "model", problem)])) }
        guard models.count < limits.modelVersions else {
            reachLimit("modelVersions", limits.modelVersions, detail: what)
            throw EngineError(counters.limitReached!.description, .runLimit(counters.limitReached!))
        }
        appendModel(attributes, extension: probes.plan.extensions[models.count - 1])
        emit(.modelUpdated(version: modelVersion, changes: [attribute: value], via: what))
        try requestRollingUpgrade(reason: what, os: os)
    }

    /// What an on-demand OS upgrade given no image brings: the newest platform image released to
    /// the scale set when the model does not run it yet, otherwise the next version after the
    /// model's (SPEC §6: the upgrade moves to the latest image the platform has).
    private func nextImage() -> String {
        let current = models[models.count - 1]["image"]
        if let released = fleet.newestPlatformImage, released != current { return released }
        return ImageVersion.successor(of: current ?? ImageVersion.firstImage)
    }

    /// The model attribute that pins the image version (`imageReference.version`); absent or
    /// `latest` runs the latest version.
    public static let imageVersionAttribute = "imageReference.version"

    /// The image reference of the newest model (`imageReference.publisher`, `.offer`, `.sku`),
    /// which the history names beside the version.
    private var imageReference: [String: String] {
        var reference: [String: String] = [:]
        for field in ["publisher", "offer", "sku"] {
            if let value = models[models.count - 1]["imageReference.\(field)"] { reference[field] = value }
        }
        return reference
    }

    /// Approves the deferred OS upgrades of `ids` (nil: every deferred instance), as
    /// `ApproveRollingUpgrade` does. Refused whole when no upgrade waits or an id is not deferred.
    public func approveOSUpgrade(ids: [Int]?) throws(EngineError) {
        guard let run = upgrades.current, run.code == .rollingForward, !run.deferred.isEmpty else {
            throw EngineError("approve refused: no instance is deferring an OS upgrade", .notDeferring([]))
        }
        let chosen = ids ?? run.deferred.sorted()
        let unknown = chosen.filter { !run.deferred.contains($0) }
        guard unknown.isEmpty else {
            throw EngineError("approve refused: instance(s) \(unknown.map(String.init).joined(separator: ", ")) are not deferring an OS upgrade; deferring: \(run.deferred.sorted().map(String.init).joined(separator: ", "))",
                              .notDeferring(unknown))
        }
        for id in Set(chosen).sorted() {
            do { try drive { $0.approve(id, byAction: true) } } catch let error as EngineError { throw error } catch {
                throw EngineError("approve: \(error)")
            }
        }
    }

    /// Whether the running upgrade waits only for approvals that no scheduled action can give.
    var stalledOnApproval: Bool {
        // Read from the outline: the run loop asks before every event.
        script.left == 0 && upgrades.outline.code == .rollingForward && upgrades.outline.waitsOnlyOnApprovals
    }

    /// How many OS image upgrade attempts the history keeps: the last five (Azure's automatic OS
    /// upgrade page, 2026 revision).
    public static let osUpgradeHistoryLength = 5

    /// The run's last five OS image upgrades, oldest first, as `az vmss get-os-upgrade-history`
    /// reports them.
    public var osUpgradeHistory: [OSUpgradeRecord] {
        upgrades.osUpgrades.suffix(Self.osUpgradeHistoryLength).map { run in
            let status = statusOf(run)
            var reference = run.os?.reference ?? [:]
            reference["version"] = run.os?.image
            return OSUpgradeRecord(code: run.code, startTime: run.terms.startTime, endTime: run.endTime, progress: status.progress,
                                   error: run.error, startedBy: run.os?.startedBy ?? .unknown, targetImageReference: reference,
                                   rolledBack: run.rolledBack, rollbackFailed: run.rollbackFailed.count)
        }
    }
}
