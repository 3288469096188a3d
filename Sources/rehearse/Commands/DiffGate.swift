import AzureWire
import Formats
import Foundation
import Reports
import UpgradeEngine

/// `diff --require`'s verdict: the requirements judged on the rehearsal's runs; "not
/// applicable" when the change rolls no instance (nothing to rehearse: the gate passes); "not
/// rehearsed" when the scale set is replaced (every instance goes: the gate fails).
struct DiffGate {
    /// How the requirements were decided.
    enum Basis: String {
        case judged, notApplicable, replaced
    }

    /// The question asked.
    var question: RiskQuestion
    /// Each requirement's verdict on the runs (nil when there were none).
    var judged: [RequirementResult]?
    /// How they were decided.
    var basis: Basis

    init(question: RiskQuestion, judged: [RequirementResult]?, diff: ScaleSetDiff) {
        self.question = question
        self.judged = judged
        basis = judged != nil ? .judged : diff.consequences.contains(.replacement) ? .replaced : .notApplicable
    }

    /// Whether the gate lets the change through.
    var passed: Bool {
        switch basis {
        case .judged: RiskVerdict(judged ?? []).passed
        case .notApplicable: true
        case .replaced: false
        }
    }

    var markdown: [String] {
        var lines = ["", "#### Requirements"]
        switch basis {
        case .judged:
            lines.append("```")
            lines += RiskText.requirements(judged ?? [], confidence: question.confidence).map { $0.replacingOccurrences(of: "```", with: "'''") }
            lines.append("```")
        case .notApplicable:
            lines += question.requirements.map { "- \(MarkdownText.code($0.description)): not applicable (the change rolls no instance)" }
        case .replaced:
            lines += question.requirements.map { "- \(MarkdownText.code($0.description)): not rehearsed (the scale set is replaced: every instance goes)" }
        }
        lines.append(passed ? "Gate: **passed**." : "Gate: **failed**.")
        return lines
    }

    var json: [JSONField] {
        let results: JSON
        if let judged {
            results = .array(judged.map { r in
                .ordered([JSONField("requirement", .string(r.requirement.description)), JSONField("count", .int(r.share.count)),
                          JSONField("total", .int(r.share.total)), JSONField("verdict", .string(r.verdict.rawValue))])
            })
        } else {
            let verdict = basis == .replaced ? "notRehearsed" : "notApplicable"
            results = .array(question.requirements.map { r in
                .ordered([JSONField("requirement", .string(r.description)), JSONField("count", .int(0)), JSONField("total", .int(0)),
                          JSONField("verdict", .string(verdict))])
            })
        }
        return [JSONField("requirements", results), JSONField("passed", .bool(passed)), JSONField("confidence", .double(question.confidence)),
                JSONField("gate", .string(basis.rawValue))]
    }
}

/// The one way text from a document (a field path, a value, a Terraform address, a file name, a
/// refusal naming them) enters `diff`'s Markdown: as an inline code span, where GitHub renders
/// no HTML, comment, image, link or @mention. Backticks cannot close the span (they become '),
/// line breaks and control or bidirectional characters cannot break the line, and in a table a
/// pipe cannot end the cell.
enum MarkdownText {
    /// The longest text kept; longer is cut with "…".
    static let longest = 200

    /// `text` as a code span; nil is "—". `table`: it stands in a table cell.
    static func code(_ text: String?, _ table: Bool = false) -> String {
        guard let text else { return "—" }
        var out = ""
        for scalar in text.unicodeScalars {
            if out.unicodeScalars.count >= longest {
                out += "…"
                break
            }
            switch scalar.value {
            case 0x60: out += "'"
            case 0x7C where table: out += "\\|"
            case 0x00...0x1F, 0x7F...0x9F, 0x2028, 0x2029, 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069: out += " "
            default: out.unicodeScalars.append(scalar)
            }
        }
        // A span of spaces only, or an empty one, would not render as code.
        if out.allSatisfy({ $0 == " " }) { return "`\"\(out)\"`" }
        return "`\(out)`"
    }

    /// rehearse's own sentences (the classifier's reasons and sources): only a pipe is escaped,
    /// since they stand in table cells; they hold no document text.
    static func plain(_ text: String) -> String { text.replacingOccurrences(of: "|", with: "\\|") }
}
