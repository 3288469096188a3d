import Formats
import Foundation
import Mustache
public import UpgradeEngine

/// `sweep --report`, `compare --report` and `tune --report`: one self-contained HTML page.
/// For a sweep: every share with its 95% interval (outcomes, error codes, expectations, the
/// deadline), the requirements and their verdicts, the percentile tables, and histograms with
/// axes. For several policies (a comparison or a search): one chart of P(Faulted) with its
/// interval against the time to finish p95, each point labelled, the requirement's limit drawn,
/// the feasible policies and the Pareto front marked, then each policy's section with its
/// histograms on one shared scale. Every figure, extreme, bin and tick is computed here; the page
/// only draws.
public enum SweepReportPage {
    /// One policy's part of the page.
    public struct Entry: Sendable {
        /// Its sweep.
        public var report: SweepReport
        /// Its requirements, judged (empty without requirements).
        public var requirements: [RequirementResult]
        /// `tune`'s standing, when the page is a search's.
        public var standing: String?
        /// The requirements that decided the standing (`RiskText.decidedBy`), when infeasible or undecided.
        public var decidedBy: [String] = []

        /// An entry of `report`.
        public init(report: SweepReport, requirements: [RequirementResult] = [], standing: String? = nil, decidedBy: [String] = []) {
            self.decidedBy = decidedBy
            self.report = report
            self.requirements = requirements
            self.standing = standing
        }
    }

    /// The page of `reports` (one for a sweep, one per combination for a comparison).
    public static func html(_ reports: [SweepReport], best: Int? = nil) throws -> String {
        try html(entries: reports.map { Entry(report: $0) }, best: best)
    }

    /// The page of `entries`, `best` marked; `title` names the kind of page.
    /// `notes` are sentences the text prints under its table (rows that ran identically).
    public static func html(entries: [Entry], best: Int? = nil, title: String? = nil, notes: [String] = []) throws -> String {
        let json = data(entries, best: best, title: title, notes: notes).serialized(pretty: false).replacingOccurrences(of: "<", with: "\\u003c")
        // The template travels inside the executable (.ci/embed-resources).
        guard let text = EmbeddedTemplates.templates["sweep"] else { throw CocoaError(.fileNoSuchFile) }
        let template = try MustacheTemplate(string: text)
        return template.render(["title": entries.first?.report.scenario ?? "sweep", "data": json])
    }

    /// Everything the page draws.
    static func data(_ entries: [Entry], best: Int?, title: String?, notes: [String] = []) -> JSON {
        // One scale for every policy's histogram of a figure, so two can be compared by eye.
        func shared(_ values: [[Double]]) -> (Double, Double)? {
            let all = values.flatMap { $0 }.filter(\.isFinite)
            guard let lo = all.min(), let hi = all.max() else { return nil }
            return (lo, hi)
        }
        let times = entries.map { $0.report.runs.compactMap(\.timeToFinish) }
        let lowests = entries.map { $0.report.runs.compactMap(\.lowestHealthy).map(Double.init) }
        let timeRange = shared(times), lowestRange = shared(lowests)
        let points = entries.map { Pareto.Point($0.report.runs) }
        let front = entries.count > 1 ? Pareto.front(points) : []
        let faultedLimits = Set(entries.flatMap(\.requirements).compactMap { r -> Double? in
            r.requirement.measure == .code(.faulted) && r.requirement.comparison == .atMost ? r.requirement.limit : nil
        }).sorted()
        var chartX = Axis.ticks(0, max(0.01, (entries.map { $0.report.runs.faulted.interval.upper }
            + faultedLimits).max() ?? 0.01), most: 6)
        chartX.percent = true
        let finite = points.map(\.finishP95).filter(\.isFinite)
        let chartY = Axis.ticks(0, max(1, finite.max() ?? 1), most: 6)
        let runCounts = entries.map(\.report.total)
        return .ordered([
            JSONField("runs", .ordered([JSONField("fewest", .int(runCounts.min() ?? 0)), JSONField("most", .int(runCounts.max() ?? 0)),
                                        JSONField("total", .int(runCounts.reduce(0, +)))])),
            JSONField("title", title.map(JSON.string) ?? .null),
            JSONField("best", best.map(JSON.int) ?? .null),
            JSONField("front", .array(front.map(JSON.int))),
            JSONField("faultedLimits", .array(faultedLimits.map(JSON.double))),
            JSONField("faultedLimitLabels", .array(faultedLimits.map { .string(SweepText.percent($0)) })),
            JSONField("notes", .array(notes.map(JSON.string))),
            JSONField("chart", .ordered([JSONField("x", chartX.json), JSONField("y", chartY.json)])),
            JSONField("entries", .array(entries.indices.map { i in
                let e = entries[i]
                let time = Histogram(times[i], range: timeRange), lowest = Histogram(lowests[i], range: lowestRange)
                return .ordered([
                    JSONField("report", SweepJSON.report(e.report)),
                    JSONField("shares", shareRows(e.report)),
                    JSONField("figures", figures(e.report)),
                    JSONField("requirements", requirementRows(e.requirements)),
                    JSONField("passed", e.requirements.isEmpty ? .null : .bool(e.requirements.allSatisfy { $0.verdict == .held })),
                    JSONField("standing", e.standing.map(JSON.string) ?? .null),
                    JSONField("decidedBy", .array(e.decidedBy.map(JSON.string))),
                    JSONField("point", .ordered([JSONField("faulted", .double(SweepJSON.rounded(points[i].faulted))),
                                                 JSONField("finishP95", points[i].finishP95.isFinite ? .double(points[i].finishP95) : .null)])),
                    JSONField("histograms", .ordered([
                        JSONField("timeToFinish", time.json(axis: timeRange.map { Axis.ticks($0.0, $0.1, most: 6) })),
                        JSONField("lowestHealthy", lowest.json(axis: lowestRange.map { Axis.integers($0.0, $0.1, most: 6) })),
                    ])),
                ])
            })),
        ])
    }
}

/// Round tick values for a numeric axis from `low` to `high`: steps of 1, 2 or 5 times a power
/// of ten, at most `most` ticks, covering the range.
struct Axis: Equatable {
    /// The axis's first and last value (ticks cover them).
    var low: Double
    var high: Double
    /// The tick values, ascending.
    var ticks: [Double]
    /// Whether its labels are percentages (the values are fractions).
    var percent = false

    static func ticks(_ low: Double, _ high: Double, most: Int) -> Axis {
        guard low.isFinite, high.isFinite else { return Axis(low: 0, high: 1, ticks: [0, 1]) }
        let span = max(high - low, abs(high) * 1e-9, 1e-9)
        let raw = span / Double(max(1, most - 1))
        let power = pow(10, (log10(raw)).rounded(.down))
        let step = [1.0, 2, 5, 10].map { $0 * power }.first { $0 >= raw } ?? 10 * power
        let first = (low / step).rounded(.down) * step, last = (high / step).rounded(.up) * step
        var values: [Double] = []
        var value = first
        while value <= last + step / 2 && values.count < 1000 {
            values.append((value / step).rounded() * step)
            value += step
        }
        return Axis(low: first, high: max(last, first + step), ticks: values)
    }

    /// Ticks for a count (runs, instances): whole numbers only, a step of at least 1.
    static func integers(_ low: Double, _ high: Double, most: Int) -> Axis {
        let axis = ticks(low.rounded(.down), high.rounded(.up), most: most)
        guard axis.ticks.count > 1, axis.ticks[1] - axis.ticks[0] < 1 else { return axis }
        let first = low.rounded(.down), last = max(high.rounded(.up), first + 1)
        return Axis(low: first, high: last, ticks: Array(stride(from: first, through: last, by: 1)))
    }

    var json: JSON {
        .ordered([JSONField("low", .double(low)), JSONField("high", .double(high)), JSONField("ticks", .array(ticks.map(JSON.double))),
                  JSONField("labels", .array(ticks.map { .string(percent ? SweepText.percent($0) : SweepText.figure($0)) }))])
    }
}

/// How one figure spread over the runs of a sweep: how many runs fell in each of `bins` equal
/// bins over a range (the figure's own lowest and highest value, or a range shared by several
/// sweeps; the last bin holds the highest value; when every value is the same, the first bin
/// holds them all). Values that are not finite are left out.
struct Histogram: Equatable {
    /// Bins of every histogram.
    static let bins = 20
    /// Runs counted.
    var runs = 0
    /// The range binned; nil when no run had a value.
    var lowest: Double?
    var highest: Double?
    /// Runs per bin, `bins` of them.
    var counts = [Int](repeating: 0, count: Histogram.bins)

    /// The histogram of `values` over `range` (default: their own extremes).
    init(_ values: [Double], range: (Double, Double)? = nil) {
        let finite = values.filter(\.isFinite)
        guard let lo = range?.0 ?? finite.min(), let hi = range?.1 ?? finite.max(), !finite.isEmpty else { return }
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

    /// `{"runs": 200000, "min": 1200, "max": 5400, "most": 31000, "counts": [...], "axis": {...}}`.
    func json(axis: Axis? = nil) -> JSON {
        .ordered([JSONField("runs", .int(runs)), JSONField("min", lowest.map(JSON.double) ?? .null),
                  JSONField("max", highest.map(JSON.double) ?? .null), JSONField("most", .int(counts.max() ?? 0)),
                  JSONField("counts", .array(counts.map(JSON.int))), JSONField("axis", axis?.json ?? .null),
                  JSONField("countTicks", Axis.integers(0, Double(max(1, counts.max() ?? 1)), most: 4).json)])
    }

    /// The histogram alone, for tests.
    var json: JSON { json() }
}

extension Double {
    fileprivate func clamped(_ low: Double, _ high: Double) -> Double { Swift.min(Swift.max(self, low), high) }
}
