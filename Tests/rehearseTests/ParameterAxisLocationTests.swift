import ArgumentParser
import Formats
import Foundation
@testable import rehearse
import Scenario
import XCTest

/// `compare --set param.NAME=…` and `tune --vary param.NAME=…` give parameters their values:
/// a value or name the script refuses is located at that option, not at `--param`.
final class ParameterAxisLocationTests: XCTestCase {
    func script() throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("rehearse-axis-\(UUID().uuidString).lua").path
        try """
            local share = param("silentBoots", 0.08)
            scaleset { name = "web", capacity = 4, model = { image = "v1" }, upgradePolicy = { mode = "Manual" } }
            """.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    func locations(_ values: String, option: String) throws -> [Location?] {
        let arguments = try ScenarioArguments.parse([try script()])
        do {
            _ = try PolicyGrid([values], option: option, seedsEach: 1).candidates(arguments, seed: 0)
            XCTFail("the combinations were accepted")
            return []
        } catch let failure as CommandFailure {
            XCTAssertEqual(failure.exitCode, 2)
            return failure.diagnostics.map(\.location)
        }
    }

    func testAnUndeclaredParameterIsLocatedAtTheOptionThatNamedIt() throws {
        XCTAssertEqual(try locations("param.bootFailure=0.1,0.2", option: "--set"), [.option("--set param.bootFailure")])
        XCTAssertEqual(try locations("param.bootFailure=0.1,0.2", option: "--vary"), [.option("--vary param.bootFailure")])
    }

    func testARefusedValueOfALaterCombinationIsLocatedWithItsValue() throws {
        // The first combination loads; the second's value is not a finite number.
        XCTAssertEqual(try locations("param.silentBoots=0.1,nan", option: "--set"), [.option("--set param.silentBoots=nan")])
    }
}
