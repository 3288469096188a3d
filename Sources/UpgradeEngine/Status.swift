public import AzureWire

/// `runningStatus.code` of a rolling upgrade.
public enum RunningCode: String, Sendable {
    case rollingForward = "RollingForward", rollingBack = "RollingBack", cancelled = "Cancelled", completed = "Completed", faulted = "Faulted"
}

/// One entry of `error.details`.
public struct ErrorDetail: Equatable, Sendable {
    public var code: String
    public var target: String
    public var message: String

    public init(code: String, target: String, message: String) {
        self.code = code
        self.target = target
        self.message = message
    }
}

/// The `error` of a stopped rolling upgrade.
public struct UpgradeError: Equatable, Sendable {
    public var code: String
    public var message: String
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
    public var successfulInstanceCount = 0
    public var failedInstanceCount = 0
    public var inProgressInstanceCount = 0
    public var pendingInstanceCount = 0

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
    public var location: String
    public var policy: RollingUpgradePolicy
    public var progress: Progress
    public var code: RunningCode
    /// "Start" or "Cancel".
    public var lastAction: String
    public var lastActionTime: Millis
    public var startTime: Millis
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
