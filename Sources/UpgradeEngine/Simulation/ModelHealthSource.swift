public import Formats

/// A health source answering from a `HealthModel`: no script runs per probe. Each instance's
/// boot (when it answers Healthy, or never) is drawn once per start and kept.
public final class ModelHealthSource: HealthSource {
    let model: HealthModel
    let seed: UInt64
    /// Per instance: the start the boot was drawn for and when it answers Healthy (nil: never).
    private var boots: [(startedAt: Millis, healthyAt: Millis?)?] = []

    /// A source answering `model`, its draws seeded by `seed` (the run's).
    public init(_ model: HealthModel, seed: UInt64) {
        self.model = model
        self.seed = seed
    }

    /// Runs of probes are answered natively, one after the other.
    public var answersRuns: Bool { true }

    public func probe(run: inout ProbeRun) { probeOneByOne(&run) }

    public func probe(_ instance: borrowing Instance, at time: Millis) throws -> ProbeReply {
        answer(id: instance.id, version: instance.modelVersion, startedAt: instance.health.startedAt, at: time)
    }

    public func probe(lent instance: LentInstance, at time: Millis) throws -> ProbeReply {
        // Field by field where the instance lies: binding `instance.instance` copied it per probe.
        answer(id: instance.instance.id, version: instance.instance.modelVersion, startedAt: instance.instance.health.startedAt, at: time)
    }

    /// The answer of instance `id` running `version`, started at `startedAt`, probed at `time`.
    func answer(id: Int, version: Int, startedAt: Millis, at time: Millis) -> ProbeReply {
        let behaviour = model.behaviour(ofVersion: version)
        if id >= boots.count { boots.append(contentsOf: repeatElement(nil, count: id + 1 - boots.count)) }
        let healthyAt: Millis?
        if let kept = boots[id], kept.startedAt == startedAt {
            healthyAt = kept.healthyAt
        } else {
            let silent = Self.uniform(seed, id, startedAt, 0) < behaviour.neverHealthy
            healthyAt = silent ? nil : startedAt + behaviour.boot.draw(Self.uniform(seed, id, startedAt, 1), Self.uniform(seed, id, startedAt, 2))
            boots[id] = (startedAt, healthyAt)
        }
        guard let healthyAt, time >= healthyAt else { return Self.reply(behaviour.before) }
        if let episodes = behaviour.episodes, episodes.every > 0 {
            let since = time - healthyAt, window = since / episodes.every
            let room = max(0, episodes.every - episodes.lasting)
            let start = window * episodes.every + Millis(Double(room) * Self.uniform(seed, id, startedAt, 3 &+ UInt64(window)))
            if since >= start && since < start + episodes.lasting { return .named(.unhealthy) }
        }
        return .named(.healthy)
    }

    static func reply(_ before: HealthModel.Before) -> ProbeReply {
        switch before {
        case .refused: return .noAnswer
        case .unhealthy: return .named(.unhealthy)
        case .timeout: return .timeout
        }
    }

    /// A uniform draw in [0, 1) from the seed, the instance, its start and a stream number:
    /// SplitMix64's finaliser over their mix, the top 53 bits.
    static func uniform(_ seed: UInt64, _ id: Int, _ startedAt: Millis, _ stream: UInt64) -> Double {
        var z = seed &+ 0x9E37_79B9_7F4A_7C15 &* (UInt64(truncatingIfNeeded: id) &+ 1)
        z ^= UInt64(truncatingIfNeeded: startedAt) &* 0xBF58_476D_1CE4_E5B9
        z = z &+ stream &* 0x94D0_49BB_1331_11EB
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        z ^= z >> 31
        return Double(z >> 11) / Double(1 << 53)
    }
}
