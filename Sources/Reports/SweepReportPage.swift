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
        let values: [JSON] = reports.map { r in
            .ordered([
                JSONField("timeToFinish", .array(r.runs.compactMap(\.timeToFinish).map(JSON.double))),
                JSONField("lowestHealthy", .array(r.runs.compactMap(\.lowestHealthy).map(JSON.int))),
            ])
        }
        let data = JSON.ordered([
            JSONField("reports", .array(reports.map(SweepJSON.report))), JSONField("values", .array(values)),
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
