public import Formats
public import UpgradeEngine

/// The status shapes: `az vmss rolling-upgrade get-latest` and the REST resource.
extension UpgradeError {
    /// `{code, message, details: [{code, target, message}]}`, as Azure's `ApiError`.
    public var json: JSON {
        .object([
            "code": .string(code.rawValue),
            "message": .string(message),
            "details": .array(details.map { .object(["code": .string($0.code), "target": .string($0.target), "message": .string($0.message)]) }),
        ])
    }
}

extension Progress {
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

extension RollingUpgradeStatus {
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

extension OSUpgradeRecord {
    /// The entry in the history's JSON shape: `properties` (runningStatus, progress, error,
    /// startedBy, targetImageReference, rollbackInfo), `location` and `type`.
    public func json(location: String, epoch: Int = Timestamp.defaultEpoch) -> JSON {
        var running: [String: JSON] = ["code": .string(code.rawValue), "startTime": .string(Timestamp.format(startTime, epoch: epoch))]
        if let endTime { running["endTime"] = .string(Timestamp.format(endTime, epoch: epoch)) }
        var properties: [String: JSON] = [
            "runningStatus": .object(running),
            "progress": progress.json,
            "startedBy": .string(startedBy.rawValue),
            "targetImageReference": .object(targetImageReference.mapValues(JSON.string)),
            "rollbackInfo": .object(["successfullyRolledbackInstanceCount": .int(rolledBack),
                                     "failedRolledbackInstanceCount": .int(rollbackFailed)]),
        ]
        if let error { properties["error"] = error.json }
        return .object(["properties": .object(properties), "location": .string(location),
                        "type": .string("Microsoft.Compute/virtualMachineScaleSets/rollingUpgrades")])
    }
}
