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
    func question(script: RiskQuestion?, deadline: Millis?, expectations: [SweepReport.ExpectationKey]) throws -> RiskQuestion? {
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
        for requirement in question.requirements {
            switch requirement.measure {
            case .expectations where expectations.isEmpty:
                throw InputError(option: "--require", requirement.description, problem: "the script has no expect { } to hold",
                                 allowed: "an expect { } in the script, or another share")
            case .expectation(let key) where !expectations.contains(where: { $0.key == key }):
                throw InputError(option: "--require", requirement.description, problem: "no expect { } of the script has the key \(key.rawValue)",
                                 allowed: "expect.KEY for a key the script's expect { } holds: \(Set(expectations.map(\.key)).sorted().map(\.rawValue).joined(separator: ", "))")
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

extension RiskQuestion {
    /// Whether every requirement held (the gate's exit status 0).
    static func passed(_ results: [RequirementResult]) -> Bool { results.allSatisfy { $0.verdict == .held } }
}
