import Formats
import Foundation
import Synchronization

/// A progress line on standard error while a sweep runs (runs done, runs per second, time
/// left), redrawn at most ten times a second; nothing at all when standard error is not a
/// terminal, so logs and CI output stay clean.
final class ProgressBar: Sendable {
    private let total: Int
    private let started = Date()
    private let lastDrawn = Mutex<Double>(-1)
    private let enabled: Bool

    init(total: Int) {
        self.total = total
        enabled = isatty(STDERR_FILENO) == 1 && total > 1
    }

    /// `done` runs have finished (called from any thread).
    func update(_ done: Int) {
        guard enabled else { return }
        let elapsed = Date().timeIntervalSince(started)
        let draw = lastDrawn.withLock { last -> Bool in
            guard done == total || elapsed - last >= 0.1 else { return false }
            last = elapsed
            return true
        }
        guard draw else { return }
        let rate = elapsed > 0 ? Double(done) / elapsed : 0
        let left = rate > 0 ? Double(total - done) / rate : 0
        let width = 30, filled = total == 0 ? width : done * width / total
        let bar = String(repeating: "#", count: filled) + String(repeating: "-", count: width - filled)
        let line = "\r[\(bar)] \(done)/\(total) runs, " + String(format: "%.1f runs/s, %.0f s left ", rate, left)
        StandardStream.error.write(line)
    }

    /// Clears the line once the sweep is done.
    func finish() {
        guard enabled else { return }
        StandardStream.error.write("\r" + String(repeating: " ", count: 78) + "\r")
    }
}
