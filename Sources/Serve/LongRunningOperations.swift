import Formats
import UpgradeEngine

/// A long-running operation as Compute reports it (`…/locations/{l}/operations/{id}`).
struct LongRunningOperation {
    enum Tracks {
        /// Done once saved (a model update, an approval, a cancel).
        case immediate
        /// The rolling upgrade the action started (the `upgrades` count it must pass).
        case rollingUpgrade(after: Int)
        /// The instances a manual upgrade works on.
        case instances([Int])
    }

    enum State: Equatable {
        case inProgress, succeeded, canceled
        case failed(code: String, message: String)

        var text: String {
            switch self {
            case .inProgress: "InProgress"
            case .succeeded: "Succeeded"
            case .canceled: "Canceled"
            case .failed: "Failed"
            }
        }
    }

    let id: String
    let location: String
    let startTime: Millis
    let tracks: Tracks
    var state = State.inProgress
    var endTime: Millis?

    /// The run as an operation's state depends on it.
    struct Progress {
        let clock: Millis
        /// Rolling upgrades started so far.
        let upgrades: Int
        let status: RollingUpgradeStatus?
        /// Nothing is left to happen.
        let idle: Bool
        /// Instances in an operation (not running, stopped or deallocated).
        let busy: Set<Int>
    }

    /// Brings the state up to `progress`: a finished operation gets its end time.
    mutating func settle(_ progress: Progress) {
        guard state == .inProgress else { return }
        switch tracks {
        case .immediate:
            state = .succeeded
        case .rollingUpgrade(let after):
            if progress.upgrades > after, let status = progress.status {
                switch status.code {
                case .rollingForward, .rollingBack: return
                case .completed: state = .succeeded
                case .cancelled: state = .canceled
                case .faulted: state = .failed(code: status.error?.code.rawValue ?? "RollingUpgradeFaulted", message: status.error?.message ?? "The rolling upgrade faulted.")
                }
            } else if !progress.idle {
                return
            } else {
                state = .succeeded
            }
        case .instances(let ids):
            if ids.contains(where: progress.busy.contains) { return }
            state = .succeeded
        }
        endTime = progress.clock
    }

    /// The operation status resource, its times counted from `epoch` (Unix seconds).
    func json(epoch: Int) -> JSON {
        var fields: [String: JSON] = ["name": .string(id), "status": .string(state.text), "startTime": .string(Timestamp.format(startTime, epoch: epoch))]
        if let endTime { fields["endTime"] = .string(Timestamp.format(endTime, epoch: epoch)) }
        if case .failed(let code, let message) = state { fields["error"] = .object(["code": .string(code), "message": .string(message)]) }
        return .object(fields)
    }
}

/// The operations clients started, by id: `begin` gives each an id, `operation` reads one
/// settled against the run's progress.
struct OperationStore {
    private var operations: [String: LongRunningOperation] = [:]
    private var count = 0

    /// Starts tracking an operation (settled at once when already done); returns its id.
    mutating func begin(_ tracks: LongRunningOperation.Tracks, location: String, progress: LongRunningOperation.Progress) -> String {
        count += 1
        let id = ScaleSetShapes.uuid(0x0ff0_0000 + count)
        var op = LongRunningOperation(id: id, location: location, startTime: progress.clock, tracks: tracks)
        op.settle(progress)
        operations[id] = op
        return id
    }

    /// The operation `id`, brought up to `progress`; nil when there is none.
    mutating func operation(_ id: String, progress: LongRunningOperation.Progress) -> LongRunningOperation? {
        guard var op = operations[id] else { return nil }
        op.settle(progress)
        operations[id] = op
        return op
    }
}
