import AzureWire
import Foundation
import Scenario
import UpgradeEngine
import XCTest

/// The risk gate on real runs: scripts/risk-gate.lua with the upgraded-unhealthy threshold at 10%
/// faults when 3 or more of 20 upgrades fail, P(Bin(20, 0.05) ≥ 3) = 7.55%.
final class RiskGateScenarioTests: XCTestCase {
    func definition() throws -> ScenarioDefinition {
        try ScenarioDefinition(luaScript: repositoryRoot + "/scripts/risk-gate.lua", options: options())
    }

    let atTen = [PolicyOverride(path: "rollingUpgradePolicy.maxUnhealthyUpgradedInstancePercent", value: "10")]

    func testTheScriptsRiskBlockIsRead() throws {
        let risk = try XCTUnwrap(try definition().risk)
        XCTAssertEqual(risk.requirements, [Requirement(.code(.faulted), .atMost, 0.02)])
        XCTAssertEqual(risk.confidence, 0.95)
        XCTAssertNil(risk.deadline)
    }

    func testAStrictRequirementFailsAndALooseOneHoldsSoonerTheSameWhateverTheJobs() throws {
        let definition = try definition()
        let seeds = SeedRange(0, 9_999)
        var decided: [(Requirement.Verdict, Int)] = []
        for (text, jobs) in [("Faulted <= 5%", 1), ("Faulted <= 5%", 2), ("Faulted <= 15%", 1), ("Faulted <= 15%", 2)] {
            let question = RiskQuestion(requirements: [try Requirement.parse(text).get()])
            let (runs, results) = try Sweep.runUntilDecided(definition, seeds: seeds, overrides: atTen, question: question, jobs: jobs)
            XCTAssertEqual(results.count, 1)
            XCTAssertEqual(runs.count, results[0].share.total)
            XCTAssertEqual(runs.count % Sweep.lookEvery, 0, "decisions are taken at fixed seed counts")
            XCTAssertEqual(runs.map(\.seed), Array(0..<UInt64(runs.count)))
            decided.append((results[0].verdict, runs.count))
        }
        XCTAssertEqual(decided[0].0, .failed)
        XCTAssertEqual(decided[2].0, .held)
        // The same seeds give the same verdict after the same runs, whatever the jobs.
        XCTAssertEqual(decided[0].1, decided[1].1)
        XCTAssertEqual(decided[2].1, decided[3].1)
        XCTAssertLessThan(decided[0].1, 10_000)
        XCTAssertLessThan(decided[2].1, 10_000)
    }

    func testTheObservedShareAgreesWithTheClosedForm() throws {
        // 1,000 runs at 10%: the 95% interval holds 7.55%.
        let digests = try Sweep.run(try definition(), seeds: Array(0..<1_000), overrides: atTen, jobs: 2)
        let faulted = Share(digests.count { $0.code == .faulted }, of: digests.count)
        XCTAssertLessThan(faulted.interval.lower, 0.0755)
        XCTAssertGreaterThan(faulted.interval.upper, 0.0755)
        XCTAssertTrue(digests.filter { $0.code == .faulted }.allSatisfy { $0.errorCode == .unhealthyUpgraded })
    }
}
