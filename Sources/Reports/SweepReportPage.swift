import Formats
import Foundation
import Mustache
public import UpgradeEngine

/// `sweep --report` and `compare --report`: one self-contained HTML page of a sweep (or of every
/// combination of a comparison, with the best row marked): each outcome's and expectation's share
/// with its 95% interval, and histograms of time to finish and lowest healthy over every run.
public enum SweepReportPage {
    /// The page of `reports` (one for a sweep, one per combination for a comparison).
    public static func html(_ reports: [SweepReport], best: Int? = nil) throws -> String {
        // Extremes and bins are computed here: the page receives 20 counts per figure, never
        // every run's value (spreading 200,000 values into `Math.min` overflows a browser's stack).
        let histograms: [JSON] = reports.map { r in
            .ordered([
                JSONField("timeToFinish", Histogram(r.runs.compactMap(\.timeToFinish)).json),
                JSONField("lowestHealthy", Histogram(r.runs.compactMap(\.lowestHealthy).map(Double.init)).json),
            ])
        }
        let data = JSON.ordered([
            JSONField("reports", .array(reports.map(SweepJSON.report))), JSONField("histograms", .array(histograms)),
            JSONField("best", best.map(JSON.int) ?? .null),
        ])
        let json = data.serialized(pretty: false).replacingOccurrences(of: "<", with: "\\u003c")
        guard let url = Bundle.module.url(forResource: "sweep", withExtension: "mustache", subdirectory: "Templates") else {
            throw CocoaError(.fileNoSuchFile)
        }
        let template = try MustacheTemplate(string: try String(contentsOf: url, encoding: .utf8))
        return template.render(["title": reports.first?.scenario ?? "sweep", "data": json])
    }
}

/// How one figure spread over the runs of a sweep: its lowest and highest value and how many
/// runs fell in each of `bins` equal bins between them (the last bin holds the highest value;
/// when every value is the same, the first bin holds them all). Values that are not finite are
/// left out.
struct Histogram: Equatable {
    /// Bins of every histogram.
    static let bins = 20
    /// Runs counted.
    var runs = 0
    /// The lowest and highest value counted; nil when no run had one.
    var lowest: Double?
    var highest: Double?
    /// Runs per bin, `bins` of them.
    var counts = [Int](repeating: 0, count: Histogram.bins)

    init(_ values: [Double]) {
        let finite = values.filter(\.isFinite)
        guard let lo = finite.min(), let hi = finite.max() else { return }
        runs = finite.count
        lowest = lo
        highest = hi
        let span = hi - lo
        for value in finite {
            // (value - lo) / span is in 0...1 whenever span is finite and positive; a span that
            // overflows (from -1e308 to 1e308) is halved on both sides instead.
            let position = span.isFinite ? (value - lo) / span : (value / 2 - lo / 2) / (hi / 2 - lo / 2)
            let bin = span > 0 && position.isFinite ? Int((position * Double(Self.bins)).rounded(.down).clamped(0, Double(Self.bins - 1))) : 0
            counts[bin] += 1
        }
    }

    /// `{"runs": 200000, "min": 1200, "max": 5400, "most": 31000, "counts": [...]}`.
    var json: JSON {
        .ordered([JSONField("runs", .int(runs)), JSONField("min", lowest.map(JSON.double) ?? .null),
                  JSONField("max", highest.map(JSON.double) ?? .null), JSONField("most", .int(counts.max() ?? 0)),
                  JSONField("counts", .array(counts.map(JSON.int)))])
    }
}

extension Double {
    fileprivate func clamped(_ low: Double, _ high: Double) -> Double { Swift.min(Swift.max(self, low), high) }
}
