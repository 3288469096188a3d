import Formats
import LuaHost
import UpgradeEngine

/// Reads a script's `health_model { … }` into a `HealthModel`, every problem at once, each named
/// by its field (`health_model.boot.p95`):
///
/// ```lua
/// health_model {
///   boot = { median = "PT3M", p95 = "PT6M" },  -- or "PT2M", { min = "PT2M", max = "PT6M" }, { "PT2M", "PT4M", … }
///   neverHealthy = 0.08,                        -- share of boots that never answer Healthy
///   before = "refused",                         -- until then: "refused", "Unhealthy" or "timeout"
///   episodes = { every = "PT2H", lasting = "PT3M" },
///   versions = { v2 = { boot = { median = "PT5M", p95 = "PT9M" } } },  -- model version 2's fields that differ
/// }
/// ```
enum HealthModelReader {
    /// The fields of a behaviour (and, at the top, `versions`).
    static let behaviourFields = ["boot", "neverHealthy", "before", "episodes"]

    /// The model `value` describes, or the problems.
    static func read(_ value: LuaValue) -> Result<HealthModel, ValidationFailure> {
        var problems: [Problem] = []
        guard case .table(let fields) = value else {
            return .failure(ValidationFailure([Problem(field: "health_model", "expected a table such as { boot = { median = \"PT3M\", p95 = \"PT6M\" } }")]))
        }
        for key in fields.keys.sorted() where !(behaviourFields + ["versions"]).contains(key) {
            problems.append(Problem(field: "health_model.\(key)", "unknown field; allowed \((behaviourFields + ["versions"]).joined(separator: ", "))"))
        }
        guard fields["boot"] != nil else {
            return .failure(ValidationFailure(problems + [Problem(field: "health_model.boot", "is required: the time from a restart to answering Healthy")]))
        }
        let base = behaviour(fields, over: nil, at: "health_model", problems: &problems)
        var byVersion: [Int: HealthModel.Behaviour] = [:]
        if let versions = fields["versions"] {
            if case .table(let entries) = versions {
                for key in entries.keys.sorted() {
                    let digits = key.hasPrefix("v") ? String(key.dropFirst()) : key
                    guard let version = Int(digits), version >= 1, version <= 100_000, case .table(let given)? = entries[key] else {
                        problems.append(Problem(field: "health_model.versions.\(key)", "expected v1, v2, … (a model version) naming a table of the fields that differ"))
                        continue
                    }
                    for unknown in given.keys.sorted() where !behaviourFields.contains(unknown) {
                        problems.append(Problem(field: "health_model.versions.\(key).\(unknown)", "unknown field; allowed \(behaviourFields.joined(separator: ", "))"))
                    }
                    byVersion[version] = behaviour(given, over: base, at: "health_model.versions.\(key)", problems: &problems)
                }
            } else if versions != .array([]) {
                problems.append(Problem(field: "health_model.versions", "expected a table such as { v2 = { boot = \"PT5M\" } }"))
            }
        }
        guard problems.isEmpty else { return .failure(ValidationFailure(problems)) }
        return .success(HealthModel(base: base, byVersion: byVersion))
    }

    /// A behaviour from `fields`, each missing one taken from `base` (the defaults when nil).
    static func behaviour(_ fields: [String: LuaValue], over base: HealthModel.Behaviour?, at path: String,
                          problems: inout [Problem]) -> HealthModel.Behaviour {
        var b = base ?? HealthModel.Behaviour(boot: .fixed(0))
        if let boot = fields["boot"] { b.boot = delay(boot, at: "\(path).boot", problems: &problems) ?? b.boot }
        if let never = fields["neverHealthy"] {
            if let share = never.doubleValue, share.isFinite, (0...1).contains(share) { b.neverHealthy = share } else {
                problems.append(Problem(field: "\(path).neverHealthy", "expected a share from 0 to 1, such as 0.05"))
            }
        }
        if let before = fields["before"] {
            if let text = before.stringValue, let read = HealthModel.Before.allCases.first(where: { $0.rawValue.lowercased() == text.lowercased() }) {
                b.before = read
            } else {
                problems.append(Problem(field: "\(path).before", "expected one of \(HealthModel.Before.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: ", "))"))
            }
        }
        if let episodes = fields["episodes"] {
            if case .table(let e) = episodes, let every = e["every"].flatMap(millis), let lasting = e["lasting"].flatMap(millis), e.count == 2,
               every > 0, lasting < every {
                b.episodes = HealthModel.Episodes(every: every, lasting: lasting)
            } else {
                problems.append(Problem(field: "\(path).episodes", "expected { every = \"PT2H\", lasting = \"PT3M\" } with lasting shorter than every"))
            }
        }
        return b
    }

    /// A duration field in ms, nil when it is none.
    static func millis(_ value: LuaValue) -> Millis? {
        if case .success(let ms) = DefinitionReader.duration(value) { return ms }
        return nil
    }

    /// A delay: a duration (fixed), { min, max } (uniform), { median, p95 } (log-normal) or a
    /// list of durations (empirical, at most 100,000).
    static func delay(_ value: LuaValue, at path: String, problems: inout [Problem]) -> HealthModel.Delay? {
        let forms = "a duration (\"PT2M\"), { min = \"PT2M\", max = \"PT6M\" }, { median = \"PT3M\", p95 = \"PT6M\" } or a list of observed durations"
        switch value {
        case .string, .integer, .double:
            guard let ms = millis(value) else { break }
            return .fixed(ms)
        case .table(let t) where Set(t.keys) == ["min", "max"]:
            guard let low = t["min"].flatMap(millis), let high = t["max"].flatMap(millis), low <= high else { break }
            return .uniform(low, high)
        case .table(let t) where Set(t.keys) == ["median", "p95"]:
            guard let median = t["median"].flatMap(millis), let p95 = t["p95"].flatMap(millis), median > 0, p95 >= median else {
                problems.append(Problem(field: path, "expected a median above zero and a p95 no shorter than it"))
                return nil
            }
            return .logNormal(median: median, p95: p95)
        case .array(let items) where !items.isEmpty && items.count <= 100_000:
            let values = items.compactMap(millis)
            guard values.count == items.count else { break }
            return .empirical(values)
        default: break
        }
        problems.append(Problem(field: path, "expected \(forms)"))
        return nil
    }
}
