import Foundation
import Plugins
import Scenario
import UpgradeEngine
import XCTest

/// SemVer 2.0.0 to the letter, the resolver's choices and conflicts, and `plugins check`.
final class BundleVersionTests: XCTestCase {
    func v(_ text: String) -> SemVer { SemVer(text)! }
    func r(_ text: String) throws -> SemVerRange { try SemVerRange(text) }

    func testPrecedenceIsSemVer2Section11() {
        // semver.org's own chain.
        let chain = ["1.0.0-alpha", "1.0.0-alpha.1", "1.0.0-alpha.beta", "1.0.0-beta", "1.0.0-beta.2", "1.0.0-beta.11", "1.0.0-rc.1", "1.0.0"]
        for (a, b) in zip(chain, chain.dropFirst()) { XCTAssertLessThan(v(a), v(b), "\(a) < \(b)") }
        XCTAssertEqual(v("1.0.0+build.1"), v("1.0.0+build.2"))
        XCTAssertLessThan(v("1.9.0"), v("1.10.0"))
        XCTAssertEqual(v("1.0.0-rc.1+exp.sha.5114f85").build, ["exp", "sha", "5114f85"])
        for bad in ["1.0", "01.0.0", "1.0.0-", "1.0.0-01", "1.0.0-a..b", "1.0.0+", "v1.0.0", "1.0.0-ä"] { XCTAssertNil(SemVer(bad), bad) }
    }

    func testCaretTildeXRangesHyphensAndAlternatives() throws {
        let cases: [(String, [String], [String])] = [
            ("^1.2.3", ["1.2.3", "1.9.0"], ["1.2.2", "2.0.0", "2.0.0-0"]),
            ("^0.2.3", ["0.2.3", "0.2.9"], ["0.3.0", "0.2.2"]),
            ("^0.0.3", ["0.0.3"], ["0.0.4"]),
            ("^1.1", ["1.1.0", "1.5.2"], ["1.0.9", "2.0.0"]),
            ("~1.2.3", ["1.2.3", "1.2.9"], ["1.3.0"]),
            ("~1", ["1.0.0", "1.9.9"], ["2.0.0"]),
            ("1.2.x", ["1.2.0", "1.2.7"], ["1.3.0"]),
            ("*", ["0.0.1", "9.9.9"], ["1.0.0-beta"]),
            ("1.2 - 2.3.4", ["1.2.0", "2.3.4"], ["2.3.5", "1.1.9"]),
            ("1.2.3 - 2.3", ["2.3.9"], ["2.4.0"]),
            ("<1.0.0 || >=2.0.0 <3", ["0.9.0", "2.5.0"], ["1.5.0", "3.0.0"]),
            (">= 1.0.0 < 2.0.0", ["1.0.0"], ["2.0.0"]),
            // A pre-release matches only where a comparator names one of the same version.
            ("^1.2.3-beta.2", ["1.2.3-beta.3", "1.2.3", "1.3.0"], ["1.2.3-beta.1", "1.2.4-alpha"]),
            (">1.0.0", ["1.0.1"], ["1.0.1-rc.1", "1.0.0"]),
        ]
        for (range, inside, outside) in cases {
            let parsed = try r(range)
            for version in inside { XCTAssertTrue(parsed.contains(v(version)), "\(version) in \(range)") }
            for version in outside { XCTAssertFalse(parsed.contains(v(version)), "\(version) not in \(range)") }
        }
        for bad in ["", "around 1", "^x.1", "1.x.3", ">=1.0.0-"] { XCTAssertThrowsError(try r(bad), bad) }
    }

    /// A folder per bundle version: `(name, version, api, dependencies, entry source)`.
    func pluginRoot(_ bundles: [(String, String, String, [String: String], String)]) throws -> String {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("bundles-\(UUID().uuidString)").path
        for (name, version, api, dependencies, source) in bundles {
            let folder = root + "/\(name)-\(version)"
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            let deps = dependencies.map { "\"\($0.key)\": \"\($0.value)\"" }.sorted().joined(separator: ", ")
            let manifest = #"{"name": "\#(name)", "version": "\#(version)", "api": "\#(api)", "description": "test", "dependencies": {\#(deps)}, "exports": {"answer": "what it answers"}}"#
            try manifest.write(toFile: folder + "/rehearse-plugin.json", atomically: true, encoding: .utf8)
            try source.write(toFile: folder + "/init.lua", atomically: true, encoding: .utf8)
        }
        return root
    }

    func testAnIncompatibleNewerVersionDoesNotShadowACompatibleOne() throws {
        let root = try pluginRoot([("slow", "2.0.0", "^2.0", [:], "return { answer = 2 }"), ("slow", "1.0.0", "^1.0", [:], "return { answer = 1 }")])
        let catalog = PluginCatalog(searchPath: [root])
        XCTAssertEqual(catalog.versions(of: "slow").map(\.manifest.version.description), ["2.0.0", "1.0.0"])
        let chosen = try catalog.resolver(lock: nil).select("slow", by: "test")
        XCTAssertEqual(chosen.manifest.version, SemVer(1, 0, 0))
        XCTAssertEqual(chosen.folder, root + "/slow-1.0.0")
        var o = options()
        o.pluginPath = [root]
        let path = try writeScenario(baseScaleSet + "\nassert(require('slow').answer == 1)")
        XCTAssertEqual(try load(path: path, options: o).run().failedExpectations, [])
    }

    func testDependenciesPickTheNewestVersionEveryConstraintAccepts() throws {
        let root = try pluginRoot([
            ("base", "1.0.0", "^1", [:], "return { answer = '1.0' }"),
            ("base", "1.1.0", "^1", [:], "return { answer = '1.1' }"),
            ("base", "1.2.0", "^2", [:], "return { answer = '1.2' }"),
            ("base", "2.0.0", "^1", [:], "return { answer = '2.0' }"),
            ("app", "1.0.0", "^1", ["base": "^1.1"], "return { answer = require('base').answer }"),
        ])
        let resolver = PluginCatalog(searchPath: [root]).resolver(lock: nil)
        try resolver.select("app", by: "test")
        // 2.0.0 is outside ^1.1, 1.2.0 needs host API 2: 1.1.0.
        XCTAssertEqual(resolver.selected["base"]?.manifest.version, SemVer(1, 1, 0))
        var o = options()
        o.pluginPath = [root]
        let path = try writeScenario(baseScaleSet + "\nassert(require('app').answer == '1.1')")
        XCTAssertEqual(try load(path: path, options: o).run().failedExpectations, [])
    }

    /// 14 bundles of 3 versions each, every one depending on the next, the last one needing a
    /// host API this rehearse lacks: backtracking would try 3^14 combinations and its messages
    /// nested every deeper failure (65 MB of text at 12 bundles). The search now gives up after
    /// a bounded number of tries, with a message of bounded length.
    func testAnUnsatisfiableChainEndsQuicklyWithABoundedMessage() throws {
        var bundles: [(String, String, String, [String: String], String)] = []
        for i in 0..<14 {
            for version in ["1.0.0", "1.1.0", "1.2.0"] {
                bundles.append(("b\(i)", version, i == 13 ? "^9" : "^1", i == 13 ? [:] : ["b\(i + 1)": "^1"], "return {}"))
            }
        }
        let resolver = PluginCatalog(searchPath: [try pluginRoot(bundles)]).resolver(lock: nil)
        let started = Date()
        XCTAssertThrowsError(try resolver.select("b0", by: "the scenario")) { error in
            let message = (error as! PluginProblem).message
            XCTAssertLessThan(message.utf8.count, 20_000)
            XCTAssertEqual((error as? PluginProblem)?.resolution, .gaveUp(tries: 10_000))
        }
        XCTAssertLessThan(Date().timeIntervalSince(started), 15)
        // A short chain fails with the real reason, quoted from the level below.
        let shortRoot = try pluginRoot(Array(bundles.suffix(6)))
        let short = PluginCatalog(searchPath: [shortRoot]).resolver(lock: nil)
        XCTAssertThrowsError(try short.select("b12", by: "the scenario")) { error in
            let message = (error as! PluginProblem).message
            XCTAssertLessThan(message.utf8.count, 5_000)
            // Each b12, newest first, needs a b13; each b13 needs host API ^9, and this host is 1.2.0.
            let versions = ["1.2.0", "1.1.0", "1.0.0"]
            let b13 = PluginResolution.noVersionFits(name: "b13", versions.map {
                .init(label: "b13 \($0)", folder: "\(shortRoot)/b13-\($0)", reasons: [.hostAPI(needs: "^9", provides: "1.2.0")])
            })
            XCTAssertEqual((error as? PluginProblem)?.resolution, .noVersionFits(name: "b12", versions.map {
                .init(label: "b12 \($0)", folder: "\(shortRoot)/b12-\($0)", reasons: [.dependencies(b13)])
            }))
        }
    }

    /// A bundle folder that is a symbolic link leading out of its root is not a bundle: named
    /// as a problem, never used.
    func testABundleFolderThatLinksOutIsRefused() throws {
        let elsewhere = try pluginRoot([("outside", "1.0.0", "^1", [:], "return {}")])
        let root = try pluginRoot([("inside", "1.0.0", "^1", [:], "return {}")])
        try FileManager.default.createSymbolicLink(atPath: root + "/linked", withDestinationPath: elsewhere + "/outside-1.0.0")
        let catalog = PluginCatalog(searchPath: [root])
        XCTAssertEqual(catalog.names, ["inside"])
        XCTAssertEqual(catalog.problems.count, 1)
        XCTAssertTrue(catalog.problems.first?.hasPrefix(root + "/linked: a bundle folder must be a folder inside") == true, "\(catalog.problems)")
    }

    func testAConflictNamesEveryBundleAndConstraint() throws {
        let root = try pluginRoot([
            ("base", "1.0.0", "^1", [:], "return {}"), ("base", "2.0.0", "^1", [:], "return {}"),
            ("left", "1.0.0", "^1", ["base": "^1"], "return {}"), ("right", "1.0.0", "^1", ["base": "^2"], "return {}"),
        ])
        let resolver = PluginCatalog(searchPath: [root]).resolver(lock: nil)
        try resolver.select("left", by: "the scenario")
        XCTAssertThrowsError(try resolver.select("right", by: "the scenario")) { error in
            let message = (error as! PluginProblem).message
            for fragment in ["no version of right fits", "right 1.0.0", "its dependencies cannot be met",
                             "right 1.0.0 needs base ^2, but base 1.0.0 was already chosen", "left 1.0.0 needs base ^1"] {
                XCTAssertTrue(message.contains(fragment), "«\(message)» lacks «\(fragment)»")
            }
        }
    }

    func testCheckLoadsEachEntryModuleAndNamesWhatARunWouldMeet() throws {
        let root = try pluginRoot([
            ("base", "1.0.0", "^1", [:], "return { answer = 1 }"),
            ("missing-module", "1.0.0", "^1", [:], "local x = require 'missing-module.helpers' return { answer = x }"),
            ("undeclared", "1.0.0", "^1", [:], "local b = require 'base' return { answer = b.answer }"),
            ("no-export", "1.0.0", "^1", [:], "return { other = 1 }"),
            ("no-dependency", "1.0.0", "^1", ["ghost": "^1"], "return { answer = 1 }"),
            ("good", "1.0.0", "^1", ["base": "^1"], "return { answer = require('base').answer }"),
        ])
        let findings = PluginCatalog(searchPath: [root]).check()
        let byBundle = Dictionary(grouping: findings, by: { $0.bundle ?? "" }).mapValues { $0.map(\.kind) }
        XCTAssertEqual(byBundle["missing-module 1.0.0"], [.missingModule])
        XCTAssertEqual(byBundle["undeclared 1.0.0"], [.undeclaredRequire])
        XCTAssertEqual(byBundle["no-export 1.0.0"], [.missingExport])
        XCTAssertEqual(byBundle["no-dependency 1.0.0"], [.missingDependency])
        XCTAssertNil(byBundle["good 1.0.0"])
        XCTAssertNil(byBundle["base 1.0.0"])
    }

    func testShippedBundlesDeclareTheirExportsAndPassCheck() {
        let catalog = PluginCatalog(searchPath: [repositoryRoot + "/plugins"])
        XCTAssertEqual(catalog.bundles.map { $0.manifest.exports.keys.sorted() },
                       [["watch"], ["approve"], ["PRIMARY_PHASE", "REPLICA_PHASE", "tier"], ["fault", "health"], ["outage"]])
        XCTAssertEqual(catalog.check(), [])
    }
}
