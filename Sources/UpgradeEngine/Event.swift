/// One thing that happened, at one virtual time. Serialized as one JSON object per line.
public struct Event: Equatable, Sendable {
    /// What kind of thing happened.
    public enum Kind: String, Sendable {
        case modelUpdated, upgradeStarted, metricsRead, batchStarted, operationStarted, operationFinished
        case healthChanged, preBatchCheck, postBatchCheck, batchFinished, pause, upgradeCompleted
        case upgradeFaulted, upgradeCancelled, rollbackStarted, surgeCreated, surgeFallback, instanceDeleted
        case scaled, manualUpgrade, automaticUpgrade, actionFailed, wireWarning, runEnded
    }

    /// Milliseconds since the scenario epoch.
    public var time: Millis
    public var kind: Kind
    public var instance: Int?
    public var batch: Int?
    public var phase: Int?
    public var detail: String

    public init(time: Millis, kind: Kind, instance: Int? = nil, batch: Int? = nil, phase: Int? = nil, detail: String) {
        self.time = time
        self.kind = kind
        self.instance = instance
        self.batch = batch
        self.phase = phase
        self.detail = detail
    }

    /// `{"batch":…,"detail":…,"instance":…,"kind":…,"phase":…,"time":…}`: keys sorted, absent
    /// fields null, time in seconds.
    public var json: JSON {
        .object([
            "time": time % 1000 == 0 ? .int(time / 1000) : .double(Double(time) / 1000),
            "kind": .string(kind.rawValue),
            "instance": instance.map(JSON.int) ?? .null,
            "batch": batch.map(JSON.int) ?? .null,
            "phase": phase.map(JSON.int) ?? .null,
            "detail": .string(detail),
        ])
    }

    /// The event as one line of JSON.
    public var jsonLine: String { json.serialized(pretty: false) }
}
