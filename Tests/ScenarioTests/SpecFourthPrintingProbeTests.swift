import AzureWire
import Formats
import Scenario
import UpgradeEngine
import XCTest

/// SPEC's fourth printing (issue 28), continued: a refused probe against an unanswered one
/// (grace is checked when an answer arrives), and seed 002's REST extension body.
final class SpecFourthPrintingProbeTests: XCTestCase {
    // MARK: Refused versus unanswered probes

    /// One Manual instance probed every 5 s whose application answers `before` until 40 s, then
    /// Healthy; its health changes up to 2 min (a Swift definition: the engine's probe timing).
    private func bootTimes(_ before: ProbeReply, protocol proto: ProbeProtocol = .http, grace: Int = 600) throws -> [Event] {
        var scaleSet = ScaleSetDefinition(name: "web", capacity: 1)
        scaleSet.model = ["image": "v1"]
        scaleSet.policy.mode = .manual
        scaleSet.healthExtension = HealthExtensionSettings(protocol: proto, port: 8000, requestPath: proto == .tcp ? nil : "/health",
                                                           intervalInSeconds: 5, gracePeriod: grace)
        let application = SwiftBehaviours { _ in Behaviours(health: ClosureHealthSource { _, now in now < 40_000 ? before : .named(.healthy) }) }
        // A scale to the same capacity at 2 min keeps the run going until then.
        let definition = ScenarioDefinition(path: "boot (Swift)", scaleSet: scaleSet, behaviour: .swift(application),
                                            timeline: [.init(time: 120_000, action: .perform(.scale(to: 1)))])
        return try Rehearsal.run(definition, RunInputs(seed: 0)).events.filter { $0.kind == .healthChanged && $0.instance == 0 }
    }

    func testApplicationAnsweringFrom40sIsHealthyAt40sWhenItRefusesBefore() throws {
        let changes = try bootTimes(.noAnswer)
        XCTAssertEqual(changes.map(\.time), [40_000])
    }

    func testApplicationAnsweringFrom40sIsHealthyAt60sWhenItHangsBefore() throws {
        // Probes at 0 and 30 s get no reply; each result comes 30 s later, the next probe at once.
        let changes = try bootTimes(.timeout)
        XCTAssertEqual(changes.map(\.time), [60_000])
        guard case .healthChanged(.initializing, .healthy, .probes)? = changes.first?.payload else { return XCTFail("\(changes)") }
    }

    func testUnansweredTCPProbeChecksGraceWhenItsResultArrives() throws {
        // Grace ends at 10 s, but the first result only arrives at 30 s: Unhealthy then.
        let changes = try bootTimes(.timeout, protocol: .tcp, grace: 10)
        guard case .healthChanged(.initializing, .unhealthy, .gracePeriodEnded)? = changes.first?.payload else { return XCTFail("\(changes)") }
        XCTAssertEqual(changes.first?.time, 30_000)
    }

    func testTimeoutWithOtherFieldsIsABadResult() throws {
        XCTAssertThrowsError(try runScript("""
            \(baseScaleSet)
            health(function(vm, now) return { timeout = 1 } end)
            at("PT1M", function() end)
            """))
    }

    // MARK: Seed 002's REST body

    func testSeed002RESTExtensionBodyWithLocationIsAccepted() throws {
        let loaded = try load(path: try writeScenario("""
            scaleset {
              name = "web", capacity = 2, upgradePolicy = { mode = "Rolling" },
              healthExtension = {
                name = "myHealthExtension", location = "westeurope",
                properties = {
                  publisher = "Microsoft.ManagedServices", type = "ApplicationHealthWindows",
                  autoUpgradeMinorVersion = true, typeHandlerVersion = "2.0",
                  settings = { protocol = "http", port = 8080, requestPath = "/healthz", intervalInSeconds = 10,
                               numberOfProbes = 2, gracePeriod = 120 },
                },
              },
            }
            """), options: options())
        XCTAssertEqual(loaded.definition.scaleSet.healthExtension,
                       HealthExtensionSettings(protocol: .http, port: 8080, requestPath: "/healthz", intervalInSeconds: 10,
                                               numberOfProbes: 2, gracePeriod: 120))
        XCTAssertEqual(loaded.definition.scaleSet.location, "eastus")
    }
}
