public import AzureWire
import Formats
public import UpgradeEngine

/// The starting scenario `rehearse import` prints for a scale set document: the scale set read
/// from the document (`from`, so the document stays the one source), what was read as comments,
/// a health function that answers Healthy, one model update and an expectation. `run` accepts
/// it as it is; a team then scripts its own health, timing and faults.
public enum StarterScenario {
    /// The scenario's text; `path`, `resource` and `parameters` as the user gave them.
    public static func text(_ imported: ImportedScaleSet, path: String, resource: String?, parameters: String?,
                            instances: (path: String, fleet: [ExistingInstance])? = nil) -> String {
        let d = imported.definition
        let r = d.policy.rolling
        var lines = [
            "-- A starting scenario for \(d.name), read from \(path) (\(imported.format.rawValue), \(imported.resource)).",
            "-- Paths in `from` and `parameters` are relative to this script's folder: keep it beside the document.",
            "--",
            "-- What the document says:",
            "--   \(d.capacity) instances, \(d.orchestration.rawValue) orchestration" + (d.zones.isEmpty ? ", regional" : ", zones \(d.zones.joined(separator: ", "))")
                + (d.faultDomainCount.map { ", \($0) fault domain(s)" } ?? ""),
            "--   upgradePolicy.mode \(d.policy.mode.rawValue); batches of \(r.maxBatchInstancePercent)%, at most \(r.maxUnhealthyInstancePercent)% unhealthy,"
                + " \(r.maxUnhealthyUpgradedInstancePercent)% of upgraded unhealthy, pause \(ISODuration.format(r.pauseTimeBetweenBatches))"
                + (r.maxSurge ? ", MaxSurge" : ""),
        ]
        if let e = d.healthExtension {
            lines.append("--   the Application Health extension: \(e.protocol.rawValue)\(e.port.map { " port \($0)" } ?? "")\(e.requestPath.map { " \($0)" } ?? ""),"
                + " every \(e.intervalInSeconds) s, \(e.numberOfProbes) probe(s), grace \(e.gracePeriod) s, \(e.richStates ? "rich" : "binary") states")
        } else if d.loadBalancerProbe {
            lines.append("--   a load balancer health probe")
        }
        if let (file, fleet) = instances {
            let behind = fleet.filter { !$0.latestModelApplied }.map(\.id)
            let protected = fleet.filter(\.protectFromScaleSetActions).map(\.id)
            lines.append("--   \(file): \(fleet.count) instances (ids \(fleet.map { String($0.id) }.joined(separator: ", ")))"
                + (behind.isEmpty ? "" : "; not on the latest model: \(behind.map(String.init).joined(separator: ", "))")
                + (protected.isEmpty ? "" : "; protected: \(protected.map(String.init).joined(separator: ", "))"))
        }
        for warning in imported.warnings { lines.append("--   note: \(warning.field): \(warning.message)") }
        lines += ["", "scaleset {", "  from = \(quoted(path)),"]
        if let resource { lines.append("  resource = \(quoted(resource)),") }
        if let parameters { lines.append("  parameters = \(quoted(parameters)),") }
        if let (file, _) = instances { lines.append("  instances = \(quoted(file)),") }
        lines += [
            "  -- Fields given here override the document's, e.g. capacity = 30 or",
            "  -- upgradePolicy = { mode = \"Rolling\", rollingUpgradePolicy = { maxBatchInstancePercent = 10 } }.",
            "}",
            "",
        ]
        if d.hasHealthSource {
            lines += [
                "-- Every probe answers Healthy. Script your application here: how long it takes to answer",
                "-- after a restart (now - vm.startedAt), boots that never answer, phases (PhaseOrderingNumber).",
                "health(function(vm, now)",
                "  return { applicationHealthState = \"Healthy\" }",
                "end)",
                "",
            ]
        }
        lines += [
            "-- One model update a minute in: the rolling upgrade the policy describes.",
            "at(\"PT1M\", function() update_model { image = \"next\" } end)",
            "",
            "expect { code = \"Completed\" }",
            "",
        ]
        return lines.joined(separator: "\n")
    }

    /// A Lua string literal.
    static func quoted(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}
