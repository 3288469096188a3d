import AzureWire
import Formats
import UpgradeEngine
import XCTest

final class PolicyTests: XCTestCase {
    func testParsesSeedExampleWithMaxSurgeAsString() throws {
        // Seed 001's ARM example, with "MaxSurge": "false" as a string and capitalised.
        let policy = try UpgradePolicy.parse(json: """
            {"properties": {"upgradePolicy": {"mode": "rolling", "rollingUpgradePolicy": {
              "maxBatchInstancePercent": 20, "maxUnhealthyInstancePercent": 20,
              "maxUnhealthyUpgradedInstancePercent": 20, "pauseTimeBetweenBatches": "PT2S", "MaxSurge": "false"}}}}
            """)
        XCTAssertEqual(policy.mode, .rolling)
        XCTAssertEqual(policy.rolling.pauseTimeBetweenBatches, 2_000)
        XCTAssertFalse(policy.rolling.maxSurge)
        XCTAssertTrue(try UpgradePolicy.parse(json: #"{"rollingUpgradePolicy": {"MaxSurge": "true"}}"#).rolling.maxSurge)
    }

    func testDefaultsMatchTheSpec() throws {
        let rolling = try UpgradePolicy.parse(json: #"{"mode": "Manual"}"#).rolling
        XCTAssertEqual(rolling, RollingUpgradePolicy())
        XCTAssertEqual([rolling.maxBatchInstancePercent, rolling.maxUnhealthyInstancePercent, rolling.maxUnhealthyUpgradedInstancePercent], [20, 20, 20])
        XCTAssertEqual(rolling.pauseTimeBetweenBatches, 0)
    }

    func testEveryProblemIsReportedAtOnce() {
        XCTAssertThrowsError(try UpgradePolicy.parse(json: """
            {"mode": "Sometimes", "rollingUpgradePolicy": {"maxBatchInstancePercent": 3, "maxUnhealthyInstancePercent": "20",
             "maxUnhealthyUpgradedInstancePercent": 101, "pauseTimeBetweenBatches": "P1Y", "maxSurge": 1, "colour": "blue"}}
            """)) { error in
            XCTAssertEqual((error as! ValidationFailure).problems.map(\.description), [
                "upgradePolicy.mode: \"Sometimes\" is not a mode; allowed Automatic, Manual, Rolling",
                "upgradePolicy.rollingUpgradePolicy.colour: unknown field; allowed maxBatchInstancePercent, maxUnhealthyInstancePercent, maxUnhealthyUpgradedInstancePercent, pauseTimeBetweenBatches, prioritizeUnhealthyInstances, enableCrossZoneUpgrade, maxSurge, rollbackFailedInstancesOnPolicyBreach",
                "upgradePolicy.rollingUpgradePolicy.maxBatchInstancePercent: 3 is out of range; allowed 5–100 (percent)",
                "upgradePolicy.rollingUpgradePolicy.maxUnhealthyInstancePercent: \"20\" is a string; allowed a whole number 5–100 (percent)",
                "upgradePolicy.rollingUpgradePolicy.maxUnhealthyUpgradedInstancePercent: 101 is out of range; allowed 0–100 (percent)",
                "upgradePolicy.rollingUpgradePolicy.pauseTimeBetweenBatches: 'P1Y' is not an ISO 8601 duration: years, months and weeks are not allowed (their length varies); use days, hours, minutes, seconds; allowed PnDTnHnMnS, e.g. PT2S or PT1M30S",
                "upgradePolicy.rollingUpgradePolicy.maxSurge: 1 is not a boolean; allowed true or false (or the strings \"true\", \"false\")",
            ])
        }
    }

    func testMalformedJSONIsAProblemNotACrash() {
        for text in ["", "{", "[]", "null", String(repeating: "{\"a\":", count: 5000)] {
            XCTAssertThrowsError(try UpgradePolicy.parse(json: text), text.prefix(20).description)
        }
    }

    /// Each designator at most once and in the order D, H, M, S.
    func testDurationDesignatorsOutOfOrderOrRepeatedAreRefused() {
        for text in ["PT1S1M", "PT1M1M", "PT1S1H", "P1DT1M1H", "PT2S2S"] {
            guard case .failure = ISODuration.parse(text) else { return XCTFail("\(text) accepted") }
        }
        XCTAssertEqual(try ISODuration.parse("P1DT1H1M1.5S").get(), 90_061_500)
    }

    func testDurations() {
        XCTAssertEqual(try ISODuration.parse("PT2S").get(), 2_000)
        XCTAssertEqual(try ISODuration.parse("PT1M30S").get(), 90_000)
        XCTAssertEqual(try ISODuration.parse("P1DT2H").get(), 93_600_000)
        XCTAssertEqual(try ISODuration.parse("PT0.5S").get(), 500)
        XCTAssertEqual(try ISODuration.parse("PT1.5M").get(), 90_000)
        for bad in ["PT", "P1Y", "2S", "P", "PT1.5M2S", "PT-1S", "PTS", "P1H"] {
            XCTAssertThrowsError(try ISODuration.parse(bad).get(), bad)
        }
        XCTAssertEqual(ISODuration.format(0), "PT0S")
        XCTAssertEqual(ISODuration.format(90_000), "PT1M30S")
        XCTAssertEqual(ISODuration.format(500), "PT0.5S")
        XCTAssertEqual(ISODuration.format(93_600_000), "P1DT2H")
    }

    func testTimestampsFromTheScenarioEpoch() {
        XCTAssertEqual(Timestamp.format(0), "2024-01-01T00:00:00.0000000+00:00")
        XCTAssertEqual(Timestamp.format(61_250), "2024-01-01T00:01:01.2500000+00:00")
        XCTAssertEqual(Timestamp.format(60 * 86_400_000), "2024-03-01T00:00:00.0000000+00:00")
    }

    /// Real `az vmss show` output and ARM templates carry nulls: null means the field is absent.
    func testNullMeansAbsentInPolicyAndExtension() throws {
        let policy = try UpgradePolicy.parse(json: #"{"mode": "Rolling", "rollingUpgradePolicy": {"maxBatchInstancePercent": null, "pauseTimeBetweenBatches": null, "maxSurge": null}}"#)
        XCTAssertEqual(policy.rolling, RollingUpgradePolicy())
        let (settings, _) = try HealthExtensionSettings.parse(.object(["protocol": .string("http"), "port": .int(80), "requestPath": .string("/"),
                                                                       "numberOfProbes": .null, "gracePeriod": .null]))
        XCTAssertEqual(settings.numberOfProbes, 1)
        XCTAssertEqual(settings.gracePeriod, 5)
    }

    /// "Only one source of health monitoring can be used"; rollback on policy breach is Uniform only.
    func testOneHealthSourceAndRollbackUniformOnly() {
        var both = ScaleSetDefinition(name: "web", capacity: 4)
        both.policy.mode = .rolling
        both.healthExtension = HealthExtensionSettings(protocol: .http, port: 80, requestPath: "/")
        both.loadBalancerProbe = true
        XCTAssertEqual(both.validate().map(\.field), ["loadBalancerProbe"])
        var flexible = ScaleSetDefinition(name: "web", capacity: 4)
        flexible.orchestration = .flexible
        flexible.policy.mode = .rolling
        flexible.healthExtension = HealthExtensionSettings(protocol: .http, port: 80, requestPath: "/")
        flexible.policy.rolling.rollbackFailedInstancesOnPolicyBreach = true
        XCTAssertEqual(flexible.validate().map(\.field), ["upgradePolicy.rollingUpgradePolicy.rollbackFailedInstancesOnPolicyBreach"])
        flexible.orchestration = .uniform
        XCTAssertEqual(flexible.validate(), [])
    }
}

final class JSONPositionTests: XCTestCase {
    func testMalformedJSONNamesItsLineAndColumn() {
        let text = "{\n  \"mode\": \"Rolling\",\n  \"rollingUpgradePolicy\": { \"maxSurge\": tru }\n}\n"
        XCTAssertThrowsError(try JSON.parse(text)) { error in
            let json = error as! JSONError
            XCTAssertEqual(json.line, 3)
            XCTAssertTrue((41...45).contains(json.column ?? 0), "column \(json.column ?? 0)")
        }
        XCTAssertThrowsError(try JSON.parse("{\"a\": [1, 2")) { error in
            XCTAssertEqual((error as! JSONError).line, 1)
            XCTAssertEqual((error as! JSONError).column, 12)
        }
        XCTAssertThrowsError(try JSON.parse("[[[[1]]]]", maxDepth: 3)) { error in
            XCTAssertNil((error as! JSONError).line)
        }
    }
}
