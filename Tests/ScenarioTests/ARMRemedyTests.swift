import AzureWire
import Formats
import UpgradeEngine
import XCTest

/// A template parameter with no default and no value: the problem names the parameter's path,
/// the field it was read for, and the input that answers it as data (a parameters file), which
/// the command line spells as its option.
final class ARMRemedyTests: XCTestCase {
    func testAParameterWithoutADefaultCarriesTheParametersFileAsItsRemedy() throws {
        let template = ARMBoundsTests.template(parameters: ["count": .object(["type": .string("int")])], capacity: "[parameters('count')]")
        XCTAssertThrowsError(try ScaleSetImport.read(template)) { error in
            let problems = (error as? ValidationFailure)?.problems ?? []
            XCTAssertEqual(problems.map(\.field), ["parameters.count"])
            XCTAssertEqual(problems.first?.remedy, Remedy(.templateParameters, placeholder: "FILE", scriptForm: "parameters = \"FILE\""))
            XCTAssertFalse(problems.contains { $0.message.contains("--") })
        }
        // Given a value, the same template reads.
        let parameters = JSON.object(["parameters": .object(["count": .object(["value": .int(3)])])])
        XCTAssertEqual(try ScaleSetImport.read(template, parameters: parameters).definition.capacity, 3)
    }
}
