import Formats
import UpgradeEngine

/// What a sweep page prints, made by the same functions as the text: the page draws these
/// strings and fractions and computes no figure of its own.
extension SweepReportPage {
    /// `{"runs": 0, "of": 500, "share": 0, "ci95": [0, 0.007634], "percent": "0.0%", "interval": "0.0%–0.8%"}`.
    static func shown(_ share: Share) -> JSON {
        let (lower, upper) = share.interval
        return .ordered([JSONField("runs", .int(share.count)), JSONField("of", .int(share.total)),
                         JSONField("share", .double(SweepJSON.rounded(share.fraction))),
                         JSONField("ci95", .array([.double(SweepJSON.rounded(lower)), .double(SweepJSON.rounded(upper))])),
                         JSONField("percent", .string(SweepText.percent(share.fraction))), JSONField("interval", .string(Figures.interval(share)))])
    }

    /// A figure in seconds as the page prints it: `{"seconds": "4200", "human": "1 h 10 min"}`.
    static func seconds(_ value: Double?) -> JSON {
        .ordered([JSONField("seconds", .string(SweepText.figure(value))),
                  JSONField("human", value.map { .string(Figures.human(seconds: $0)) } ?? .null)])
    }

    /// Every share row of one sweep (final codes with Faulted always, error codes, expectations,
    /// the deadline), each with its name, class and `shown` figures.
    static func shareRows(_ r: SweepReport) -> JSON {
        func row(_ name: String, _ kind: String, _ share: Share) -> JSON {
            guard case .ordered(let fields) = shown(share) else { return .null }
            return .ordered([JSONField("name", .string(name)), JSONField("kind", .string(kind))] + fields)
        }
        var rows = Figures.outcomes(r).map { row($0.code, $0.code, $0.share) }
        rows += r.errorCodes.map { row("error " + $0.code, "error", $0.share) }
        rows += r.held.map { row("held: \($0.key.location) \($0.key.key) = \($0.key.expected)", "held", $0.share) }
        if let deadline = r.deadline, let past = r.pastDeadline {
            rows.append(row("ended within \(Figures.both(deadline))", "deadline", Share(past.total - past.count, of: past.total)))
        }
        return .array(rows)
    }

    /// The figures the page's tables print for one sweep, as the text prints them. Each
    /// percentile table comes with its column heads (`SweepText.percentileHead`): the lowest
    /// healthy row's p10, p5, p1 and min sit under heads that say so, never under p90…max.
    static func figures(_ r: SweepReport) -> JSON {
        let high = SweepText.highPercentiles, low = SweepText.lowPercentiles
        func values(_ d: Distribution, _ percentiles: [Double], human: Bool) -> JSON {
            .array(percentiles.map { p in human ? seconds(d.percentile(p)) : .string(SweepText.figure(d.percentile(p))) })
        }
        return .ordered([
            JSONField("faulted", shown(r.runs.faulted)),
            JSONField("finishP50", seconds(r.timeToFinish.percentile(50))), JSONField("finishP95", seconds(r.timeToFinish.percentile(95))),
            JSONField("lowestP5", .string(SweepText.figure(r.lowestHealthy.percentile(5)))),
            JSONField("withinDeadline", r.pastDeadline.map { .string(SweepText.percent(1 - $0.fraction)) } ?? .null),
            JSONField("deadline", r.deadline.map { .string(Figures.both($0)) } ?? .null),
            JSONField("highHeads", .array(high.map { .string(SweepText.percentileHead($0)) })),
            JSONField("timeToFinish", values(r.timeToFinish, high, human: true)),
            JSONField("unavailable", values(r.unavailable, high, human: false)),
            // A lifecycle hook's batch waits per upgrade, when the scenario has hooks.
            JSONField("hookWait", r.defaultActionFired == nil ? .null : values(r.hookWait, high, human: true)),
            JSONField("hookDefaulted", r.defaultActionFired.map(shown) ?? .null),
            JSONField("lowHeads", .array(low.map { .string(SweepText.percentileHead($0)) })),
            JSONField("lowestHealthy", values(r.lowestHealthy, low, human: false)),
        ])
    }

    /// The requirements as the page's table prints them, with the text's figures.
    static func requirementRows(_ results: [RequirementResult]) -> JSON {
        .array(results.map { r in
            .ordered([JSONField("requirement", .string(r.requirement.description)), JSONField("verdict", .string(r.verdict.rawValue)),
                      JSONField("runs", .int(r.share.count)), JSONField("of", .int(r.share.total)),
                      JSONField("percent", .string(SweepText.percent(r.share.fraction))),
                      JSONField("interval", .array([.double(SweepJSON.rounded(r.lower)), .double(SweepJSON.rounded(r.upper))])),
                      JSONField("intervalText", .string(Figures.range(r.lower, r.upper))),
                      JSONField("level", .string(Requirement.percentText(r.confidence)))])
        })
    }
}
