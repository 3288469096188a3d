import AzureWire
import Formats
import UpgradeEngine
import XCTest

final class HealthTests: XCTestCase {
    let rich = HealthExtensionSettings(protocol: .http, port: 8000, requestPath: "/health")

    /// A state the source named (the hot path's reply) is judged exactly as the same state in a
    /// table with its metrics deferred, whatever the protocol and handler version.
    func testANamedStateIsJudgedAsTheSameStructuredAnswer() {
        let settings = [rich, HealthExtensionSettings(protocol: .https, port: 443), HealthExtensionSettings(protocol: .tcp, port: 8000),
                        HealthExtensionSettings(protocol: .http, port: 8000, typeHandlerVersion: "1.0")]
        for s in settings {
            for state in [HealthState.healthy, .unhealthy] {
                let named = s.evaluate(.named(state)), structured = s.evaluate(.structured(state: state.rawValue, metrics: .deferred))
                XCTAssertEqual(named, structured, "\(s.protocol) \(s.typeHandlerVersion) \(state)")
            }
        }
        // Rich states take the state as named; binary states call any answer Healthy and refuse the metrics.
        XCTAssertEqual(rich.evaluate(.named(.unhealthy)).state, .unhealthy)
        XCTAssertTrue(rich.evaluate(.named(.healthy)).metricsDeferred)
        let binary = HealthExtensionSettings(protocol: .http, port: 8000, typeHandlerVersion: "1.0").evaluate(.named(.unhealthy))
        XCTAssertEqual(binary.state, .healthy)
        XCTAssertEqual(binary.diagnostics.map(\.kind), [.metricsRefused])
    }

    func testRichStatesFromStatusAndBody() {
        XCTAssertEqual(rich.evaluate(.http(status: 200, body: #"{"applicationHealthState": "Healthy"}"#)).state, .healthy)
        XCTAssertEqual(rich.evaluate(.http(status: 204, body: #"{"ApplicationHealthState": "Unhealthy"}"#)).state, .unhealthy)
        XCTAssertEqual(rich.evaluate(.http(status: 503, body: #"{"applicationHealthState": "Healthy"}"#)).state, .unknown)
        XCTAssertEqual(rich.evaluate(.noAnswer).state, .unknown)
    }

    func testMalformedBodiesOfEveryKindGiveUnknownNeverACrash() {
        let bodies: [(String, WireDiagnostic.Kind)] = [
            ("", .bodyNotJSON), ("not json", .bodyNotJSON), ("[1, 2]", .bodyNotObject), ("\"Healthy\"", .bodyNotObject),
            ("{}", .stateMissing), (#"{"applicationHealthState": "healthy"}"#, .stateUnknown),
            (#"{"applicationHealthState": 1}"#, .stateUnknown), (#"{"applicationHealthState": null}"#, .stateUnknown),
            (String(repeating: "[", count: 10_000), .bodyNotJSON), (String(repeating: "[", count: 100_000), .bodyTooLarge), (String(repeating: " ", count: 70_000) + "{}", .bodyTooLarge),
            ("{\"applicationHealthState\": \"Healthy\"", .bodyNotJSON), ("\u{FEFF}\u{0}{", .bodyNotJSON),
        ]
        for (body, kind) in bodies {
            let result = rich.evaluate(.http(status: 200, body: body))
            XCTAssertEqual(result.state, .unknown, body.prefix(40).description)
            XCTAssertEqual(result.diagnostics.first?.kind, kind, body.prefix(40).description)
        }
    }

    func testCustomMetricsStringFormWithCaseInsensitiveKeys() {
        let body = #"{"applicationHealthState": "Healthy", "customMetrics": "{\"RollingUpgrade\": {\"phaseOrderingNumber\": 2, \"skipupgrade\": \"false\"}}"}"#
        let result = rich.evaluate(.http(status: 200, body: body))
        XCTAssertEqual(result.state, .healthy)
        XCTAssertEqual(result.metrics, CustomMetrics(phase: 2, skipUpgrade: false))
        XCTAssertEqual(result.diagnostics, [])
    }

    func testCustomMetricsAsObjectWarnsAndStrictWireJudgesLikeAzure() {
        // Seed 002's sample servers send CustomMetrics as an object.
        let body = #"{"ApplicationHealthState": "Healthy", "CustomMetrics": {"RollingUpgrade": {"PhaseOrderingNumber": 0}}}"#
        let lenient = rich.evaluate(.http(status: 200, body: body))
        XCTAssertEqual(lenient.state, .healthy)
        XCTAssertEqual(lenient.metrics?.phase, 0)
        XCTAssertEqual(lenient.diagnostics.map(\.kind), [.metricsAsObject])
        let strict = rich.evaluate(.http(status: 200, body: body), strictWire: true)
        XCTAssertEqual(strict.state, .unknown)
        XCTAssertNil(strict.metrics)
        // A script's table is not wire form: no warning.
        let table = rich.evaluate(.structured(state: "Healthy", metrics: .object(.object(["rollingUpgrade": .object(["PhaseOrderingNumber": .int(1)])]))))
        XCTAssertEqual(table.metrics?.phase, 1)
        XCTAssertEqual(table.diagnostics, [])
    }

    func testBadMetricsLeaveHealthAloneAndGiveNoPhaseNoSkip() {
        let cases: [(String, WireDiagnostic.Kind)] = [
            ("not json", .metricsNotJSON), ("[1]", .metricsNotObject), ("{}", .metricsEmpty), (#"{"other": 1}"#, .metricsNoRollingUpgrade),
            (#"{"rollingUpgrade": {"PhaseOrderingNumber": -1}}"#, .metricsBadPhase), (#"{"rollingUpgrade": {"PhaseOrderingNumber": 1.5}}"#, .metricsBadPhase),
            (#"{"rollingUpgrade": {"SkipUpgrade": "yes"}}"#, .metricsBadSkip),
        ]
        for (metrics, kind) in cases {
            let result = rich.evaluate(.structured(state: "Healthy", metrics: .string(metrics)))
            XCTAssertEqual(result.state, .healthy, metrics)
            XCTAssertNil(result.metrics, metrics)
            XCTAssertEqual(result.diagnostics.map(\.kind), [kind], metrics)
        }
    }

    func testCustomMetricsRefusedWithBinaryStatesOrTcp() {
        let binary = HealthExtensionSettings(protocol: .http, port: 80, requestPath: "/", typeHandlerVersion: "1.0")
        let result = binary.evaluate(.http(status: 200, body: #"{"customMetrics": "{\"rollingUpgrade\": {\"PhaseOrderingNumber\": 1}}"}"#))
        XCTAssertEqual(result.state, .healthy)
        XCTAssertNil(result.metrics)
        XCTAssertEqual(result.diagnostics.map(\.kind), [.metricsRefused])
        XCTAssertEqual(binary.evaluate(.http(status: 500, body: "")).state, .unhealthy)
        let tcp = HealthExtensionSettings(protocol: .tcp, port: 22)
        XCTAssertEqual(tcp.evaluate(.tcp(connected: true)).state, .healthy)
        XCTAssertEqual(tcp.evaluate(.tcp(connected: false)).state, .unhealthy)
        XCTAssertEqual(tcp.evaluate(.structured(state: nil, metrics: .string("{}"))).diagnostics.map(\.kind), [.metricsRefused])
    }

    func testGraceExpiryTurnsInitializingIntoUnknown() {
        // http, 5 s interval, 1 probe, grace 30 s: only Unknown answers, so grace ends it as Unknown.
        var tracker = HealthTracker(settings: HealthExtensionSettings(protocol: .http, requestPath: "/", gracePeriod: 30), startedAt: 0)
        for t in stride(from: 0, to: 30_000, by: 5_000) { XCTAssertNil(tracker.record(.unknown, at: t)) }
        XCTAssertEqual(tracker.state, .initializing)
        XCTAssertEqual(tracker.record(.unknown, at: 30_000), .gracePeriodEnded)
        XCTAssertEqual(tracker.state, .unknown)
        // tcp's grace ends as Unhealthy.
        var tcp = HealthTracker(settings: HealthExtensionSettings(protocol: .tcp, port: 22, gracePeriod: 10), startedAt: 0)
        XCTAssertTrue(tcp.expireGrace(at: 10_000))
        XCTAssertEqual(tcp.state, .unhealthy)
    }

    func testThreeProbesNeededAndFlappingNeverCommits() {
        let settings = HealthExtensionSettings(protocol: .http, requestPath: "/", numberOfProbes: 3, gracePeriod: 600)
        var tracker = HealthTracker(settings: settings, startedAt: 0)
        let flapping: [HealthState] = [.healthy, .unhealthy, .healthy, .unhealthy, .healthy, .healthy]
        for (i, result) in flapping.enumerated() { tracker.record(result, at: i * 5_000) }
        XCTAssertEqual(tracker.state, .initializing)
        XCTAssertEqual(tracker.record(.healthy, at: 30_000), .probes)
        XCTAssertEqual(tracker.state, .healthy)
        // Two Unhealthy then a Healthy: still Healthy; three in a row: Unhealthy.
        tracker.record(.unhealthy, at: 35_000)
        tracker.record(.unhealthy, at: 40_000)
        tracker.record(.healthy, at: 45_000)
        XCTAssertEqual(tracker.state, .healthy)
        for t in [50_000, 55_000] { XCTAssertNil(tracker.record(.unhealthy, at: t)) }
        XCTAssertEqual(tracker.record(.unhealthy, at: 60_000), .probes)
        XCTAssertEqual(tracker.state, .unhealthy)
    }

    func testDuringGraceTheExpiryStateDoesNotCount() {
        var tracker = HealthTracker(settings: HealthExtensionSettings(protocol: .http, requestPath: "/", numberOfProbes: 2, gracePeriod: 60), startedAt: 0)
        tracker.record(.healthy, at: 0)
        tracker.record(.unknown, at: 5_000)   // resets the streak
        tracker.record(.healthy, at: 10_000)
        XCTAssertEqual(tracker.state, .initializing)
        tracker.record(.healthy, at: 15_000)
        XCTAssertEqual(tracker.state, .healthy)
    }

    func testSettingsValidationReportsEveryProblem() {
        let settings = HealthExtensionSettings(protocol: .http, port: 70_000, requestPath: "", intervalInSeconds: 60, numberOfProbes: 5, gracePeriod: 3)
        let problems = settings.validate().problems.map(\.description)
        // An empty requestPath is a warning (SPEC, second edition), not one of the problems.
        XCTAssertEqual(settings.validate().warnings.map(\.field), ["healthExtension.requestPath"])
        XCTAssertEqual(problems, [
            "healthExtension.port: 70000 is out of range; allowed 1–65535",
            "healthExtension.numberOfProbes: intervalInSeconds × numberOfProbes is 300; allowed at most 240 seconds",
            "healthExtension.gracePeriod: 3 is out of range; allowed 5–14400 (seconds)",
        ])
        XCTAssertEqual(HealthExtensionSettings(protocol: .http, requestPath: "/", gracePeriod: 9000).validate().warnings.count, 1)
        XCTAssertThrowsError(try HealthExtensionSettings.parse(.object(["protocol": .string("tcp"), "requestPath": .string("/x")]))) { error in
            XCTAssertEqual("\(error)", """
                2 problems:
                  - healthExtension.requestPath: is not allowed with protocol tcp
                  - healthExtension.port: is required for protocol tcp
                """)
        }
    }

    func testDefaultGracePeriodIsIntervalTimesProbes() {
        XCTAssertEqual(HealthExtensionSettings(protocol: .http, requestPath: "/", intervalInSeconds: 10, numberOfProbes: 3).gracePeriod, 30)
    }

    /// The extension's own test "basic states = m,h,h,u,u,i,i": numberOfProbes 2, interval 5 s,
    /// so a 10 s grace period; grace expiry is checked before a result counts, so the second
    /// Healthy (at 10 s) commits Unknown, not Healthy.
    func testExtensionSequenceMHHUUIIWithTwoProbesEndsUnknown() {
        let settings = HealthExtensionSettings(protocol: .http, port: 8080, requestPath: "health", intervalInSeconds: 5, numberOfProbes: 2)
        XCTAssertEqual(settings.gracePeriod, 10)
        var tracker = HealthTracker(settings: settings, startedAt: 0)
        let results: [HealthState] = [.unknown, .healthy, .healthy, .unhealthy, .unhealthy, .unknown, .unknown]
        var committed: [HealthState] = []
        for (i, result) in results.enumerated() {
            tracker.record(result, at: i * 5_000)
            committed.append(tracker.state)
        }
        XCTAssertEqual(committed, [.initializing, .initializing, .unknown, .unknown, .unhealthy, .unhealthy, .unknown])
    }

    /// Binary states (typeHandlerVersion 1.0): "expected to return a 200 response code".
    func testBinaryStatesAreHealthyOnStatus200Only() {
        let binary = HealthExtensionSettings(protocol: .http, port: 80, requestPath: "/", typeHandlerVersion: "1.0")
        XCTAssertEqual(binary.evaluate(.http(status: 200, body: "")).state, .healthy)
        XCTAssertEqual(binary.evaluate(.http(status: 204, body: "")).state, .unhealthy)
        XCTAssertEqual(binary.evaluate(.http(status: 299, body: "")).state, .unhealthy)
        XCTAssertEqual(binary.evaluate(.http(status: 503, body: "")).state, .unhealthy)
    }

    /// Azure's documentation requires requestPath for http/https; the extension does not
    /// enforce it: a warning, not a refusal.
    func testMissingRequestPathIsAWarningNotAProblem() {
        let (problems, warnings) = HealthExtensionSettings(protocol: .http, port: 80, requestPath: nil).validate()
        XCTAssertEqual(problems, [])
        XCTAssertEqual(warnings.map(\.field), ["healthExtension.requestPath"])
    }

    /// Seed 002's ARM shape: the extensions[] entry with name, properties.publisher, type,
    /// typeHandlerVersion, autoUpgradeMinorVersion and settings.
    func testARMExtensionShapeOfSeed002IsAccepted() throws {
        let arm = try JSON.parse(#"""
            {"name": "HealthExtension", "properties": {"publisher": "Microsoft.ManagedServices", "type": "ApplicationHealthLinux",
             "autoUpgradeMinorVersion": true, "typeHandlerVersion": "1.0",
             "settings": {"protocol": "http", "port": 8080, "requestPath": "/health", "intervalInSeconds": 5, "numberOfProbes": 1}}}
            """#)
        let (settings, _) = try HealthExtensionSettings.parse(arm)
        XCTAssertEqual(settings.protocol, .http)
        XCTAssertEqual(settings.port, 8080)
        XCTAssertEqual(settings.requestPath, "/health")
        XCTAssertEqual(settings.typeHandlerVersion, "1.0")
        XCTAssertFalse(settings.richStates)
        let wrong = try JSON.parse(#"{"name": "x", "properties": {"publisher": "Contoso", "type": "ApplicationHealthLinux", "settings": {"protocol": "tcp", "port": 22}}}"#)
        XCTAssertThrowsError(try HealthExtensionSettings.parse(wrong)) { error in
            XCTAssertEqual((error as! ValidationFailure).problems.map(\.field), ["healthExtension.properties.publisher"])
        }
    }
}

/// A probe reads an instance's id, model version, health, last operation and lifecycle; in a
/// large fleet each instance comes from memory, so those stay within 64 bytes.
final class InstanceLayoutTests: XCTestCase {
    func testWhatAProbeReadsFitsOneCacheLineWorthOfBytes() throws {
        let ends = [MemoryLayout<Instance>.offset(of: \Instance.id)! + MemoryLayout<Int>.size,
                    MemoryLayout<Instance>.offset(of: \Instance.modelVersion)! + MemoryLayout<Int>.size,
                    MemoryLayout<Instance>.offset(of: \Instance.health)! + MemoryLayout<HealthTracker>.size,
                    MemoryLayout<Instance>.offset(of: \Instance.lastOperation)! + MemoryLayout<OperationRecord?>.size,
                    MemoryLayout<Instance>.offset(of: \Instance.lifecycle)! + MemoryLayout<Lifecycle>.size]
        XCTAssertLessThanOrEqual(ends.max()!, 64, "\(ends)")
        XCTAssertEqual(MemoryLayout<HealthTracker>.size, 32)
        XCTAssertEqual(MemoryLayout<OperationRecord?>.size, 11)
    }
}
