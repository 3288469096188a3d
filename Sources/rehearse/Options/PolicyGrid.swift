import AzureWire
import LuaHost

/// A space of policies: each axis a field (`rollingUpgradePolicy.maxBatchInstancePercent`, or a
/// script parameter `param.NAME`) with its values, given as `PATH=V1,V2,…` or, for whole numbers,
/// `PATH=A..B:STEP`. Combinations are counted before any is made and made one at a time.
struct PolicyGrid {
    /// The most combinations one command runs.
    static let maxCombinations = 10_000
    /// The most values a range may expand to.
    static let maxRangeValues = 1_000

    /// Each axis: its path and values, in the order given.
    var axes: [(path: String, values: [String])] = []

    /// Reads `texts` (each from `option`); exit 2 naming the option for anything malformed,
    /// and when the combinations would be more than `maxCombinations`.
    init(_ texts: [String], option: String) throws {
        for text in texts {
            guard let change = PolicyOverride(parsing: text) else {
                throw fail(InputError(option, ScriptText.escaped(text),
                                      allowed: "PATH=V1,V2,… or PATH=A..B:STEP, such as rollingUpgradePolicy.maxBatchInstancePercent=10,20"))
            }
            axes.append((change.path, try Self.values(change.value, option: option, text: text)))
        }
        guard count != nil else {
            throw fail(InputError(option, problem: "the values make more than \(Self.maxCombinations) combinations",
                                  allowed: "at most \(Self.maxCombinations) combinations in all"))
        }
    }

    /// How many combinations; nil when more than `maxCombinations`.
    var count: Int? {
        var total = 1
        for axis in axes {
            let (product, overflow) = total.multipliedReportingOverflow(by: axis.values.count)
            guard !overflow, product <= Self.maxCombinations else { return nil }
            total = product
        }
        return total
    }

    /// The `index`-th combination (the last axis varies fastest).
    func combination(_ index: Int) -> [PolicyOverride] {
        var rest = index
        var changes: [PolicyOverride] = []
        for axis in axes.reversed() {
            changes.append(PolicyOverride(path: axis.path, value: axis.values[rest % axis.values.count]))
            rest /= axis.values.count
        }
        return changes.reversed()
    }

    /// `V1,V2,…`, or `A..B:STEP` for whole numbers A ≤ B with STEP ≥ 1.
    static func values(_ text: String, option: String, text whole: String) throws -> [String] {
        let range = text.split(separator: ":", omittingEmptySubsequences: false)
        let ends = range[0].split(separator: ".", omittingEmptySubsequences: false)
        if range.count == 2 || (ends.count == 3 && ends[1].isEmpty) {
            guard range.count <= 2, ends.count == 3, ends[1].isEmpty, let a = Int(ends[0]), let b = Int(ends[2]), a <= b,
                  let step = range.count == 2 ? Int(range[1]) : 1, step >= 1 else {
                throw fail(InputError(option, ScriptText.escaped(whole), allowed: "a range A..B:STEP of whole numbers with A ≤ B and STEP ≥ 1"))
            }
            let (span, overflow) = b.subtractingReportingOverflow(a)
            guard !overflow, span / step < maxRangeValues else {
                throw fail(InputError(option, ScriptText.escaped(whole), allowed: "a range of at most \(maxRangeValues) values"))
            }
            return stride(from: a, through: b, by: step).map(String.init)
        }
        return text.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
    }
}
