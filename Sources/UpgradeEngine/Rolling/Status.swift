public import AzureWire

/// `runningStatus.code` of a rolling upgrade.
public enum RunningCode: String, Sendable {
    case rollingForward = "RollingForward", rollingBack = "RollingBack", cancelled = "Cancelled", completed = "Completed", faulted = "Faulted"
}

/// One entry of `error.details`.
public struct ErrorDetail: Equatable, Sendable {
    /// Azure's code, e.g. RollingUpgradeInstanceUnhealthyError.
    public var code: String
    /// The instance, `<scaleSet>/virtualMachines/<id>`.
    public var target: String
    /// Azure's message for it.
    public var message: String

    /// A detail.
    public init(code: String, target: String, message: String) {
        self.code = code
        self.target = target
        self.message = message
    }
}

/// The `error` of a stopped rolling upgrade.
public struct UpgradeError: Equatable, Sendable {
    /// Azure's code, e.g. MaxUnhealthyInstancePercentExceededInRollingUpgrade.
    public var code: String
    /// Azure's message, with its percentages.
    public var message: String
    /// One detail per instance counted.
    public var details: [ErrorDetail]

    /// `{code, message, details: [{code, target, message}]}`, as Azure's `ApiError`.
    public var json: JSON {
        .object([
            "code": .string(code),
            "message": .string(message),
            "details": .array(details.map { .object(["code": .string($0.code), "target": .string($0.target), "message": .string($0.message)]) }),
        ])
    }
}

/// Instance counts of a rolling upgrade (skipped and protected instances are in none).
public struct Progress: Equatable, Sendable {
    /// Instances upgraded and healthy.
    public var successfulInstanceCount = 0
    /// Instances whose upgrade failed or that were unhealthy once upgraded.
    public var failedInstanceCount = 0
    /// Instances of the batch in flight.
    public var inProgressInstanceCount = 0
    /// Instances not reached yet.
    public var pendingInstanceCount = 0

    /// Counts, in instances.
    public init(successfulInstanceCount: Int = 0, failedInstanceCount: Int = 0, inProgressInstanceCount: Int = 0, pendingInstanceCount: Int = 0) {
        self.successfulInstanceCount = successfulInstanceCount
        self.failedInstanceCount = failedInstanceCount
        self.inProgressInstanceCount = inProgressInstanceCount
        self.pendingInstanceCount = pendingInstanceCount
    }

    /// The four counts, as `progress` in the status and the OS upgrade history.
    public var json: JSON {
        .object([
            "failedInstanceCount": .int(failedInstanceCount),
            "inProgressInstanceCount": .int(inProgressInstanceCount),
            "pendingInstanceCount": .int(pendingInstanceCount),
            "successfulInstanceCount": .int(successfulInstanceCount),
        ])
    }
}

/// What `az vmss rolling-upgrade get-latest` prints for one rolling upgrade.
public struct RollingUpgradeStatus: Equatable, Sendable {
    /// The scale set's region.
    public var location: String
    /// The policy applied.
    public var policy: RollingUpgradePolicy
    /// Instance counts.
    public var progress: Progress
    /// RollingForward, RollingBack, Cancelled, Completed or Faulted.
    public var code: RunningCode
    /// "Start" or "Cancel".
    public var lastAction: String
    /// When the last action happened, in milliseconds.
    public var lastActionTime: Millis
    /// When the upgrade started, in milliseconds.
    public var startTime: Millis
    /// Why it stopped, when it did.
    public var error: UpgradeError?

    /// The status in `get-latest`'s shape, keys sorted, `error` only when there is one, times as
    /// ISO 8601 from the scenario epoch.
    public func json(epoch: Int = Timestamp.defaultEpoch) -> JSON {
        var root: [String: JSON] = [
            "location": .string(location),
            "policy": policy.json,
            "progress": progress.json,
            "runningStatus": .object([
                "code": .string(code.rawValue),
                "lastAction": .string(lastAction),
                "lastActionTime": .string(Timestamp.format(lastActionTime, epoch: epoch)),
                "startTime": .string(Timestamp.format(startTime, epoch: epoch)),
            ]),
            "type": .string("Microsoft.Compute/virtualMachineScaleSets/rollingUpgrades"),
        ]
        if let error { root["error"] = error.json }
        return .object(root)
    }

    /// The REST resource Azure's SDKs read (`RollingUpgradeStatusInfo`): the same data as `json`
    /// with `policy`, `runningStatus`, `progress` and `error` under `properties`, beside `id`,
    /// `name` ("latest"), `location` and `type`. `scaleSet` names the scale set in the `id`.
    public func restJSON(scaleSet: String, epoch: Int = Timestamp.defaultEpoch) -> JSON {
        guard case .object(var flat) = json(epoch: epoch) else { return json(epoch: epoch) }
        var properties: [String: JSON] = [:]
        for key in ["policy", "runningStatus", "progress", "error"] {
            if let value = flat.removeValue(forKey: key) { properties[key] = value }
        }
        flat["properties"] = .object(properties)
        flat["name"] = .string("latest")
        flat["id"] = .string("/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/rehearse/providers/Microsoft.Compute/virtualMachineScaleSets/\(scaleSet)/rollingUpgrades/latest")
        return .object(flat)
    }
}
