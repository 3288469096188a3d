import Formats
import HTTPTypes
@testable import Serve
import UpgradeEngine
import XCTest

/// What serve answers for each kind of engine refusal: a request whose values are wrong whatever
/// the state is 400 InvalidParameter naming the field; one the scale set refuses as it stands is
/// 409 OperationNotAllowed. The message is the engine's either way.
final class ARMRefusalTests: XCTestCase {
    func testValuesWrongInAnyStateAre400AndStateRefusalsAre409() {
        let problems = [Problem(field: "rollingUpgradePolicy.maxBatchInstancePercent", "1 is out of range; allowed 5–100 (percent)"),
                        Problem(field: "rollingUpgradePolicy.pauseTimeBetweenBatches", "'2S' is not an ISO 8601 duration")]
        let invalid = ARMError.refused(EngineError("update_policy refused", .invalid(problems)))
        XCTAssertEqual(invalid.status, .badRequest)
        XCTAssertEqual(invalid.code, "InvalidParameter")
        XCTAssertEqual(invalid.details.map(\.target), problems.map(\.field))

        let capacity = ARMError.refused(EngineError("capacity 200000 refused", .capacity(200_000, allowed: 0...100_000)))
        XCTAssertEqual(capacity.status, .badRequest)
        XCTAssertEqual(capacity.target, "sku.capacity")
        let window = ARMError.refused(EngineError("waitUntil refused", .waitOutside(until: 10, earliest: 20, latest: 30)))
        XCTAssertEqual(window.status, .badRequest)
        XCTAssertEqual(window.target, "waitUntil")
        let target = ARMError.refused(EngineError("instance 3 refused", .notAHookTarget(3, event: "e1")))
        XCTAssertEqual(target.status, .badRequest)
        XCTAssertEqual(target.target, "targetResources")

        let missing = ARMError.refused(EngineError("reimage refused: instance(s) 999 do not exist", .noSuchInstances([999])))
        XCTAssertEqual(missing.status, .notFound)
        XCTAssertEqual(missing.code, "ResourceNotFound")

        for refusal: EngineError.Refusal in [.protected([3]), .busy([1]), .nothingToCancel, .overQuota(count: 81, quota: 80), .noActiveHookEvent] {
            let answer = ARMError.refused(EngineError("refused", refusal))
            XCTAssertEqual(answer.status, .conflict, "\(refusal)")
            XCTAssertEqual(answer.code, "OperationNotAllowed", "\(refusal)")
            XCTAssertEqual(answer.message, "refused")
        }
    }
}
