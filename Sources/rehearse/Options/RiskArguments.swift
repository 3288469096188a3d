import ArgumentParser
import Formats
import Scenario
import UpgradeEngine

/// The risk gate's options, shared by `sweep`, `compare`, `test` and `tune`.
struct RiskArguments: ParsableArguments {
    @Option(name: .customLong("require"),
            help: "A requirement on a share of runs, SHARE <= P% or SHARE >= P% (e.g. \"Faulted <= 1%\", \"deadline >= 95%\"); repeatable, added to the script's risk { }.")
    var require: [String] = []
    @Option(help: "The confidence of every requirement's verdict, above 0.5 and below 1 (default 0.95, or the script's).") var confidence: String?

    /// The question to judge: the script's `risk { }` and the `--require` options, at the given
    /// confidence, against `deadline` (the command line's, else the script's). Nil when there is
    /// no requirement at all. Exit 2 naming the option for anything malformed.
    /// A requirement on an expectation key the scenario does not have is refused here, at load,
    /// naming the keys it has (`candidate`: the combination of `compare` or `tune` that lacks it).
    func question(script: RiskQuestion?, deadline: Millis?, expectations: [SweepReport.ExpectationKey], candidate: String? = nil,
                  shadow: Bool = false) throws -> RiskQuestion? {
        var question = script ?? RiskQuestion(requirements: [])
        for text in require {
            switch Requirement.parse(text) {
            case .success(let requirement): question.requirements.append(requirement)
            case .failure(let error):
                throw InputError(option: "--require", ScriptText.escaped(text), problem: error.problem, allowed: Requirement.allowedForm)
            }
        }
        if let confidence {
            guard let value = Double(confidence), value.isFinite, value > 0.5, value < 1 else {
                throw InputError(option: "--confidence", ScriptText.escaped(confidence), allowed: "a number above 0.5 and below 1, such as 0.95")
            }
            question.confidence = value
        }
        if let deadline { question.deadline = deadline }
        guard !question.requirements.isEmpty else { return nil }
        let (once, repeats) = question.deduplicated()
        for repeated in Set(repeats.map(\.description)).sorted() { warn("--require \(repeated): given more than once; judged once") }
        question = once
        guard question.requirements.count <= RiskQuestion.mostRequirements else {
            throw InputError(option: "--require", problem: "\(question.requirements.count) different requirements (with the script's risk { }); "
                                 + "each is judged over every run", allowed: "at most \(RiskQuestion.mostRequirements) requirements")
        }
        let scenario = candidate.map { "the scenario with \($0)" } ?? "the script"
        for requirement in question.requirements where requirement.measure.needsShadow && !shadow {
            throw InputError(option: "--require", requirement.description, problem: "counts a gate scored against runs without it",
                             allowed: "sweep --shadow-gate")
        }
        for requirement in question.requirements {
            switch requirement.measure {
            case .expectations where expectations.isEmpty, .expectation where expectations.isEmpty:
                throw InputError(option: "--require", requirement.description, problem: "\(scenario) has no expect { } to hold",
                                 allowed: "an expect { } in the script, or another share")
            case .expectation(let key) where !expectations.contains(where: { $0.key == key }):
                throw InputError(option: "--require", requirement.description, problem: "no expect { } of \(scenario) has the key \(key.rawValue)",
                                 allowed: "expect.KEY for a key its expect { } holds: \(Set(expectations.map(\.key)).sorted().map(\.rawValue).joined(separator: ", "))")
            default: continue
            }
        }
        if question.deadline == nil, question.requirements.contains(where: { $0.measure == .deadline }) {
            throw InputError(option: "--require", "deadline", problem: "a deadline requirement needs a deadline",
                             allowed: "--deadline PT60M, or deadline = \"PT60M\" in the script's risk { }")
        }
        return question
    }
}
