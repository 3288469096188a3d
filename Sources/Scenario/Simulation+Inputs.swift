import Formats
import UpgradeEngine

extension Simulation {
    /// Takes a run's per-run settings: how custom metrics are judged, the run limits, and whether
    /// probes due at one instant are asked as runs.
    func configure(for inputs: RunInputs) {
        strictWire = inputs.strictWire
        limits = inputs.runLimits
        asksForProbeRuns = inputs.probesInRuns
    }

    /// Puts a typed timeline action at `time` (ms) on the timeline: performed as a script's `at`
    /// callback performing it would be (an engine refusal is an `actionFailed` event). `before`
    /// is told the virtual time first.
    func schedule(_ action: SessionAction, at time: Millis, before: @escaping (Millis) -> Void = { _ in }) {
        schedule(at: time, name: "\(action.scriptName) at \(ISODuration.format(time))") { sim in
            before(sim.now)
            try action.apply(to: sim)
        }
    }
}
