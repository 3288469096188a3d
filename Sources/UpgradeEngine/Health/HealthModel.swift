public import Formats
import RealModule

/// An instance's application described as a value rather than a per-probe function: how long
/// after each (re)start it answers Healthy, the share of boots that never do, what it answers
/// before then, and transient Unhealthy episodes once healthy; per model version where it
/// differs (v2 boots slower). Randomness is drawn per restart and per episode from the run's
/// seed, the instance and its start (never per probe), so an answer does not depend on how
/// often or in which order instances are probed.
public struct HealthModel: Equatable, Sendable {
    /// A time from a (re)start, drawn per restart.
    public enum Delay: Equatable, Sendable {
        /// Always this long (ms).
        case fixed(Millis)
        /// Uniform between the two (ms, inclusive of the first).
        case uniform(Millis, Millis)
        /// Log-normal with this median and 95th percentile (ms).
        case logNormal(median: Millis, p95: Millis)
        /// One of these, each as likely (ms), as observed.
        case empirical([Millis])

        /// The delay for a uniform draw `u` in [0, 1) and a second one `v` (the log-normal's).
        func draw(_ u: Double, _ v: Double) -> Millis {
            switch self {
            case .fixed(let ms): return ms
            case .uniform(let low, let high): return low + Millis(Double(high - low) * u)
            case .logNormal(let median, let p95):
                let mu = Double.log(Double(median)), sigma = (Double.log(Double(p95)) - mu) / 1.6448536269514722
                // Box-Muller: one standard normal from two uniforms.
                let z = (-2 * Double.log(1 - u)).squareRoot() * Double.cos(2 * Double.pi * v)
                return Millis(min(Double.exp(mu + sigma * z), Double(ISODuration.longest)))
            case .empirical(let values): return values[min(values.count - 1, Int(u * Double(values.count)))]
            }
        }
    }

    /// What the application answers before it is healthy (and forever, for a boot that never is).
    public enum Before: String, Equatable, Sendable, CaseIterable {
        /// Nothing listens: the probe is refused at once.
        case refused
        /// It answers Unhealthy.
        case unhealthy = "Unhealthy"
        /// It accepts and never replies: the extension's 30 s timeout.
        case timeout
    }

    /// Transient Unhealthy episodes once healthy: in every window of `every` after the instance
    /// became healthy, one episode of `lasting` at a point drawn per window.
    public struct Episodes: Equatable, Sendable {
        /// The window, in ms (one episode per window).
        public var every: Millis
        /// How long each lasts, in ms (shorter than `every`).
        public var lasting: Millis

        /// Episodes of `lasting` ms, one in every `every` ms.
        public init(every: Millis, lasting: Millis) {
            self.every = every
            self.lasting = lasting
        }
    }

    /// How one model version's application behaves.
    public struct Behaviour: Equatable, Sendable {
        /// The time from a (re)start to answering Healthy.
        public var boot: Delay
        /// The share of boots (0...1) that never answer Healthy.
        public var neverHealthy: Double
        /// The answer before Healthy.
        public var before: Before
        /// Transient episodes once healthy, if any.
        public var episodes: Episodes?

        /// A behaviour: `boot`, `neverHealthy` of boots silent, answering `before` until healthy.
        public init(boot: Delay, neverHealthy: Double = 0, before: Before = .refused, episodes: Episodes? = nil) {
            self.boot = boot
            self.neverHealthy = neverHealthy
            self.before = before
            self.episodes = episodes
        }
    }

    /// Every model version's behaviour unless `byVersion` names it.
    public var base: Behaviour
    /// Behaviours by model version (1 is the first model, 2 the first update, …).
    public var byVersion: [Int: Behaviour]

    /// A model of `base`, with `byVersion` where versions differ.
    public init(base: Behaviour, byVersion: [Int: Behaviour] = [:]) {
        self.base = base
        self.byVersion = byVersion
    }

    /// The behaviour of model version `version`.
    public func behaviour(ofVersion version: Int) -> Behaviour { byVersion[version] ?? base }
}
