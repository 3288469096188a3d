import Formats
import Scenario
import UpgradeEngine
import XCTest

/// A health source may name any state; the extension's verdict only knows Healthy and Unhealthy,
/// so a named Initializing is judged as the text "Initializing" would be.
final class NamedStateTests: XCTestCase {
    /// The events of seed 001's fleet whose apps answer `booting` until 90 s after a restart.
    func events(booting: ProbeReply) throws -> [Event] {
        let behaviours = SwiftBehaviours { _ in
            Behaviours(health: ClosureHealthSource { vm, now in now - vm.health.startedAt >= 90_000 ? .named(.healthy) : booting })
        }
        let definition = ScenarioDefinition(path: "named", scaleSet: DefinitionValueTests.tenAtTwenty, behaviour: .swift(behaviours),
                                            timeline: [.init(time: 120_000, action: .perform(.updateModel(["image": "v2"])))])
        return try Rehearsal.run(definition, RunInputs(seed: 1)).events
    }

    func testANamedInitializingIsJudgedAsTheTextInitializing() throws {
        let named = try events(booting: .named(.initializing))
        let text = try events(booting: .structured(state: "Initializing", metrics: .deferred))
        XCTAssertEqual(named.count, text.count)
        XCTAssertTrue(named == text, "a named Initializing gives other events than the text")
        // No committed change from Initializing to Initializing: each instance's health changes
        // only to a different state.
        for event in named {
            if case .healthChanged(let from, let to, _) = event.payload { XCTAssertNotEqual(from, to, "\(event)") }
        }
    }
}
