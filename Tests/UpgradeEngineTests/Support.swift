import Formats
import UpgradeEngine
import XCTest

/// A scale set named "web" with the health extension (http, 5 s, 1 probe) in Rolling mode.
func scaleSet(_ capacity: Int = 10, zones: [String] = [], mode: UpgradeMode = .rolling,
              _ configure: (inout ScaleSetDefinition) -> Void = { _ in }) -> ScaleSetDefinition {
    var d = ScaleSetDefinition(name: "web", capacity: capacity)
    d.zones = zones
    d.policy.mode = mode
    d.healthExtension = HealthExtensionSettings(protocol: .http, port: 8000, requestPath: "/health")
    configure(&d)
    return d
}

/// The wire body of seed 000/002: customMetrics as a string holding JSON.
func wireBody(_ state: String = "Healthy", phase: Int? = nil, skip: String? = nil) -> String {
    var rolling: [String] = []
    if let skip { rolling.append("\\\"SkipUpgrade\\\": \(skip)") }
    if let phase { rolling.append("\\\"PhaseOrderingNumber\\\": \(phase)") }
    let metrics = rolling.isEmpty ? "" : ", \"customMetrics\": \"{ \\\"rollingUpgrade\\\": { \(rolling.joined(separator: ", ")) } }\""
    return "{\"applicationHealthState\": \"\(state)\"\(metrics)}"
}

/// A finished run and every event it emitted.
struct Outcome {
    var summary: RunSummary
    var events: [Event]
    var simulation: Simulation

    var status: RollingUpgradeStatus { summary.status! }
    func batches() -> [[Int]] {
        events.compactMap { event in
            if case .batchStarted(let ids, _) = event.payload { return ids }
            return nil
        }
    }
    func batchPhases() -> [Int?] { events.filter { $0.kind == .batchStarted }.map(\.phase) }
    func count(_ kind: Event.Kind) -> Int { events.count { $0.kind == kind } }
}

/// Runs `definition` with `health`, updating the model to image v2 at 60 s unless `actions` say otherwise.
func simulate(_ definition: ScaleSetDefinition, health: @escaping (Instance, Millis) -> ProbeReply = { _, _ in .http(status: 200, body: wireBody()) },
              phases: ((Instance) -> Int?)? = nil, faults: ((OperationKind, Instance, Millis) -> OperationOutcome?)? = nil,
              deferrals: ((Instance, Millis) -> OSUpgradeDeferral)? = nil,
              actions: [(Millis, (Simulation) throws -> Void)]? = nil, file: StaticString = #filePath, line: UInt = #line) throws -> Outcome {
    let sim = try Simulation(definition, health: ClosureHealthSource(health), phases: phases.map(ClosurePhaseSource.init),
                             faults: faults.map(ClosureFaultInjector.init), deferrals: deferrals.map(ClosureDeferralSource.init))
    var events: [Event] = []
    sim.onEvent = { events.append($0) }
    for (time, body) in actions ?? [(60_000, { try $0.updateModel(["image": "v2"]) })] {
        sim.schedule(at: time, name: "action", body)
    }
    let summary = try sim.run()
    return Outcome(summary: summary, events: events, simulation: sim)
}
