import Foundation
import XCTest

/// `diff --require` as a pull request gate: it can pass (a change that rolls no instance is "not
/// applicable"; a change with no fault is decided by running seeds until it is), it refuses
/// another scale set (exit 2, said in the comment too), a faulting rehearsal names Azure's error
/// code, and no document text reaches the Markdown except as code.
final class DiffGateCLITests: XCTestCase {
    var folder = ""

    override func setUpWithError() throws {
        folder = NSTemporaryDirectory() + "diff-gate-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        // The zonal az document with a health extension in place of the load balancer's probe.
        let text = try String(contentsOfFile: repositoryRoot + "/Tests/Import/az-vmss-show-zonal.json", encoding: .utf8)
        var document = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        var profile = try XCTUnwrap(document["virtualMachineProfile"] as? [String: Any])
        var network = try XCTUnwrap(profile["networkProfile"] as? [String: Any])
        network["healthProbe"] = nil
        profile["networkProfile"] = network
        profile["extensionProfile"] = ["extensions": [["name": "health", "publisher": "Microsoft.ManagedServices", "typePropertiesType": "ApplicationHealthLinux",
                                                       "typeHandlerVersion": "2.0", "settings": ["protocol": "http", "port": 8000, "requestPath": "/health"]]]]
        document["virtualMachineProfile"] = profile
        try write(document, "before.json")
        var storage = try XCTUnwrap(profile["storageProfile"] as? [String: Any])
        var image = try XCTUnwrap(storage["imageReference"] as? [String: Any])
        image["version"] = "22.04.202411010"
        storage["imageReference"] = image
        profile["storageProfile"] = storage
        document["virtualMachineProfile"] = profile
        try write(document, "after.json")
        document["name"] = "billing"
        try write(document, "other.json")
        // A team whose instance 0, 3 and 6 turn Unhealthy from 90 s: every rehearsal faults.
        try """
            scaleset { name = "web", capacity = 3, upgradePolicy = { mode = "Rolling" },
              healthExtension = { protocol = "http", port = 8000, requestPath = "/health" } }
            health(function(vm, now)
              if now > 90 and vm.id % 3 == 0 then return { applicationHealthState = "Unhealthy" } end
              return { applicationHealthState = "Healthy" }
            end)
            """.write(toFile: "\(folder)/faulting.lua", atomically: true, encoding: .utf8)
    }

    override func tearDownWithError() throws { try? FileManager.default.removeItem(atPath: folder) }

    func write(_ object: [String: Any], _ name: String) throws {
        try JSONSerialization.data(withJSONObject: object).write(to: URL(fileURLWithPath: "\(folder)/\(name)"))
    }

    func json(_ out: CLIOutput) throws -> [String: Any] {
        try XCTUnwrap(JSONSerialization.jsonObject(with: Data(out.stdout.utf8)) as? [String: Any], out.stderr)
    }

    func testNoChangeIsNotApplicableAndPasses() throws {
        let out = try runRehearse(["diff", "\(folder)/before.json", "\(folder)/before.json", "--require", "Faulted <= 1%", "--json"])
        XCTAssertEqual(out.status, 0, out.stderr)
        let object = try json(out)
        XCTAssertEqual(object["gate"] as? String, "notApplicable")
        XCTAssertEqual((object["requirements"] as? [[String: Any]])?.first?["verdict"] as? String, "notApplicable")
        XCTAssertEqual(object["consequences"] as? [String], ["none"])
    }

    func testAChangeWithoutFaultsIsDecidedAndPasses() throws {
        // 0 faults: Faulted <= 1% is held only after enough runs (the sequential gate's 400 here), not at 200.
        let out = try runRehearse(["diff", "\(folder)/before.json", "\(folder)/after.json", "--require", "Faulted <= 1%", "--require", "deadline >= 95%", "--json", "--jobs", "2"])
        XCTAssertEqual(out.status, 0, out.stderr)
        let object = try json(out)
        XCTAssertEqual(object["passed"] as? Bool, true)
        let verdicts = (object["requirements"] as? [[String: Any]])?.compactMap { $0["verdict"] as? String }
        XCTAssertEqual(verdicts, ["held", "held"])
        let runs = try XCTUnwrap((object["rehearsal"] as? [String: Any])?["runs"] as? Int)
        XCTAssertGreaterThan(runs, 200)
        XCTAssertEqual(object["consequences"] as? [String], ["rollingUpgradeNow"])
    }

    func testAFaultingRehearsalNamesItsErrorCodeAndFails() throws {
        let out = try runRehearse(["diff", "\(folder)/before.json", "\(folder)/after.json", "--scenario", "\(folder)/faulting.lua", "--require", "Faulted <= 1%", "--json", "--jobs", "2"])
        XCTAssertEqual(out.status, 1, out.stderr)
        let rehearsal = try XCTUnwrap(try json(out)["rehearsal"] as? [String: Any])
        let faults = try XCTUnwrap(rehearsal["faults"] as? [[String: Any]])
        XCTAssertEqual(faults.first?["errorCode"] as? String, "MaxUnhealthyUpgradedInstancePercentExceededInRollingUpgrade")
        XCTAssertEqual(faults.first?["runs"] as? Int, rehearsal["runs"] as? Int)
        // 20% of 9 rounded down: one upgraded instance may fail.
        XCTAssertTrue((faults.first?["why"] as? String)?.contains("allows 1 of 9") == true)
    }

    func testAnotherScaleSetIsRefusedInTheCommentToo() throws {
        let out = try runRehearse(["diff", "\(folder)/before.json", "\(folder)/other.json", "--require", "Faulted <= 1%"])
        XCTAssertEqual(out.status, 2)
        XCTAssertTrue(out.stderr.contains("name shop-web → billing"), out.stderr)
        XCTAssertTrue(out.stdout.contains("refused"), out.stdout)
        XCTAssertTrue(out.stdout.contains("name shop-web → billing"), out.stdout)
    }

    func testDocumentTextReachesTheCommentOnlyAsCode() throws {
        // A plan whose address and values carry HTML, a comment, an image, a link and a mention.
        let text = try String(contentsOfFile: repositoryRoot + "/Tests/Import/terraform-change-rolling-image.json", encoding: .utf8)
        let hostile = "x<!-- <img src=x onerror=alert(1)> [pwn](https://evil.example) @octocat | `tick`"
        var plan = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        var changes = try XCTUnwrap(plan["resource_changes"] as? [[String: Any]])
        changes[0]["address"] = "azurerm_linux_virtual_machine_scale_set.\(hostile)"
        var change = try XCTUnwrap(changes[0]["change"] as? [String: Any])
        var after = try XCTUnwrap(change["after"] as? [String: Any])
        after["tags"] = ["note": hostile]
        change["after"] = after
        changes[0]["change"] = change
        plan["resource_changes"] = changes
        try write(plan, "plan.json")
        let out = try runRehearse(["diff", "\(folder)/plan.json", "--seeds", "0..1", "--jobs", "1"])
        XCTAssertEqual(out.status, 0, out.stderr)
        // Outside code spans there is no markup at all.
        var outside = "", inCode = false
        for c in out.stdout {
            if c == "`" { inCode.toggle() } else if !inCode { outside.append(c) }
        }
        for markup in ["<!--", "<img", "](", "@octocat"] { XCTAssertFalse(outside.contains(markup), "\(markup) outside code in \(out.stdout)") }
        XCTAssertTrue(out.stdout.contains("'tick'"))
        // Zones named with markup, one removed: the replacement's reason and the policy's
        // warnings (which name a zone) carry none of it outside code either.
        let before = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: "\(folder)/before.json"))) as? [String: Any])
        var zoned = before
        zoned["zones"] = ["<img src=x>", "@octocat", "[a](https://evil.example)"]
        try write(zoned, "zoned.json")
        zoned["zones"] = ["<img src=x>", "@octocat"]
        try write(zoned, "fewer.json")
        for pair in [("zoned.json", "fewer.json"), ("zoned.json", "after.json")] {
            var after = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: "\(folder)/\(pair.1)"))) as? [String: Any])
            after["zones"] = pair.1 == "after.json" ? zoned["zones"] : after["zones"]
            try write(after, "pair-after.json")
            let zones = try runRehearse(["diff", "\(folder)/\(pair.0)", "\(folder)/pair-after.json", "--seeds", "0..1", "--jobs", "1"])
            XCTAssertEqual(zones.status, 0, zones.stderr)
            var plain = "", code = false
            for c in zones.stdout {
                if c == "`" { code.toggle() } else if !code { plain.append(c) }
            }
            for markup in ["<img", "](", "@octocat"] { XCTAssertFalse(plain.contains(markup), "\(markup) outside code in \(zones.stdout)") }
        }
    }
}
