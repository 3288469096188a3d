import Formats
import Foundation
public import UpgradeEngine
import XMLCoder

/// `rehearse test --junit`: JUnit XML as CI systems read it. One `testsuite` per scenario file,
/// one `testcase` per expectation key (its failure names the key, what was expected, what the
/// run showed and the `expect` line); a scenario that could not run is one `testcase` with an
/// `error`.
public enum JUnit {
    /// One scenario's outcome.
    public struct Scenario: Sendable {
        /// The file, as given.
        public var path: String
        /// Each expectation key's result; empty when the run did not finish.
        public var results: [ExpectationResult]
        /// Why it could not run, when it could not.
        public var error: String?
        /// Wall-clock seconds it took.
        public var seconds: Double
        /// Each requirement of its risk question, judged over a sequential sweep; empty without one.
        public var requirements: [RequirementResult]

        /// The outcome of the scenario at `path`.
        public init(path: String, results: [ExpectationResult], error: String?, seconds: Double, requirements: [RequirementResult] = []) {
            self.path = path
            self.results = results
            self.error = error
            self.seconds = seconds
            self.requirements = requirements
        }

        /// Whether an expectation failed or a requirement was not held.
        public var failed: Bool { results.contains { !$0.held } || !RiskVerdict(requirements).passed }
    }

    struct Suites: Encodable, DynamicNodeEncoding {
        let name = "rehearse"
        let tests: Int
        let failures: Int
        let errors: Int
        let testsuite: [Suite]

        static func nodeEncoding(for key: any CodingKey) -> XMLEncoder.NodeEncoding { key.stringValue == "testsuite" ? .element : .attribute }
    }

    struct Suite: Encodable, DynamicNodeEncoding {
        let name: String
        let tests: Int
        let failures: Int
        let errors: Int
        let time: String
        let testcase: [Case]

        static func nodeEncoding(for key: any CodingKey) -> XMLEncoder.NodeEncoding { key.stringValue == "testcase" ? .element : .attribute }
    }

    struct Case: Encodable, DynamicNodeEncoding {
        let classname: String
        let name: String
        let time: String
        let failure: Problem?
        let error: Problem?

        static func nodeEncoding(for key: any CodingKey) -> XMLEncoder.NodeEncoding {
            ["failure", "error"].contains(key.stringValue) ? .element : .attribute
        }
    }

    struct Problem: Encodable, DynamicNodeEncoding {
        let message: String
        let type: String
        let value: String

        enum CodingKeys: String, CodingKey {
            case message, type
            case value = ""
        }

        static func nodeEncoding(for key: any CodingKey) -> XMLEncoder.NodeEncoding { key.stringValue.isEmpty ? .element : .attribute }
    }

    /// The characters XML 1.0 cannot hold (controls other than tab, newline and carriage return;
    /// U+FFFE and U+FFFF), each replaced in every string of the document by the visible escape a
    /// terminal shows (`\u{1B}`), after `&` became `&amp;`. In attributes, tab, newline and
    /// carriage return are written as character references, so that a parser keeps them.
    static let forbidden: [(String, String)] = (Array(0x00...0x08) + [0x0B, 0x0C] + Array(0x0E...0x1F) + [0xFFFE, 0xFFFF]).map { (v: UInt32) in
        let hex = String(v, radix: 16, uppercase: true)
        return (String(Character(Unicode.Scalar(v)!)), "\\u{" + String(repeating: "0", count: max(0, 2 - hex.count)) + hex + "}")
    }

    /// The XML document for `scenarios`: well-formed whatever the paths, values and messages hold.
    public static func xml(_ scenarios: [Scenario]) throws -> String {
        let suites = scenarios.map { scenario -> Suite in
            let time = String(format: "%.3f", scenario.seconds)
            if let error = scenario.error {
                return Suite(name: scenario.path, tests: 1, failures: 0, errors: 1, time: time, testcase: [
                    Case(classname: scenario.path, name: "run", time: time, failure: nil,
                         error: Problem(message: error, type: "scenario error", value: error)),
                ])
            }
            let expectationCases = scenario.results.map { result in
                let line: String
                if case .call(_, let at)? = result.place { line = String(at.line) } else { line = result.location }
                let message = ExpectationText.failure(result)
                return Case(classname: scenario.path, name: "expect at line \(line): \(result.key.rawValue) = \(ExpectationText.expected(result.expected))", time: "0",
                            failure: result.held ? nil : Problem(message: message, type: "expectation", value: "\(message) (expect at \(result.location))"),
                            error: nil)
            }
            let risk = scenario.requirements.map { r in
                let message = RiskText.summary(r)
                return Case(classname: scenario.path, name: "require \(r.requirement)", time: "0",
                            failure: r.verdict == .held ? nil : Problem(message: message, type: "requirement", value: message), error: nil)
            }
            let cases = expectationCases + risk
            return Suite(name: scenario.path, tests: cases.count, failures: cases.count { $0.failure != nil }, errors: 0, time: time, testcase: cases)
        }
        let root = Suites(tests: suites.map(\.tests).reduce(0, +), failures: suites.map(\.failures).reduce(0, +),
                          errors: suites.map(\.errors).reduce(0, +), testsuite: suites)
        let encoder = XMLEncoder()
        encoder.outputFormatting = [.prettyPrinted]
        encoder.charactersEscapedInElements += forbidden + [("\r", "&#13;")]
        encoder.charactersEscapedInAttributes += forbidden + [("\t", "&#9;"), ("\n", "&#10;"), ("\r", "&#13;")]
        let data = try encoder.encode(root, withRootKey: "testsuites", header: XMLHeader(version: 1.0, encoding: "UTF-8"))
        return String(decoding: data, as: UTF8.self)
    }
}
