import Formats
import Foundation
import LuaHost
public import Plugins
import UpgradeEngine

/// The scripting API, described once. `registerAPI` registers exactly these functions (a test
/// holds it to that), and the editor and lint files are generated from this description and
/// from the sandbox's own globals: `scripts/types/*.lua` (LuaLS definitions, with
/// `rehearse.faults` and every shipped bundle's exports), `scripts/.luarc.json` and `.luacheckrc`,
/// whose standard allows exactly what the sandbox provides (so `os.getenv`, `string.dump`, `io`
/// or `warn` are flagged). `rehearse api generate` writes them; a test fails when the checked-in
/// files differ.
public enum ScriptingAPI {
    /// What a function is for, which decides where a script may call it.
    public enum Kind: String, Sendable {
        /// Describes the scenario: top level only.
        case definition
        /// Registers a function the engine calls: top level only.
        case callback
        /// Acts on the running scale set: inside `at` callbacks only.
        case action
        /// Anywhere.
        case utility
    }

    /// One global function of the API.
    public struct Function: Sendable {
        /// Its global name.
        public var name: String
        /// Where a script may call it.
        public var kind: Kind
        /// The description, one line per element.
        public var doc: [String]
        /// (name, LuaLS type); a `?` after the name marks it optional.
        public var params: [(String, String)]
        /// The LuaLS type it returns, if any.
        public var returns: String?
    }

    /// A LuaLS class: (field, type, comment).
    struct LuaClass {
        var name: String
        var fields: [(String, String, String)]
    }

    // MARK: The description

    /// Every global function scripts get beside the sandbox's standard library.
    public static let functions: [Function] = [
        Function(name: "scaleset", kind: .definition, doc: ["Describes the scale set (exactly once per scenario)."],
                 params: [("definition", "rehearse.ScaleSet")]),
        Function(name: "health", kind: .callback,
                 doc: ["Answers every health probe. Return a table, a raw body string, { status = 503, body = \"...\" },",
                       "nil (a refused connection: the result at once) or { timeout = true } (accepted and never replied:",
                       "the result, Unknown over http/https and Unhealthy over tcp, 30 s later; the next probe starts then)."],
                 params: [("fn", "rehearse.HealthFunction")]),
        Function(name: "health_model", kind: .definition,
                 doc: ["Describes the application as a value instead of a health function (no script runs per probe):",
                       "the time from each restart to answering Healthy, the share of boots that never do, the answer",
                       "before then, transient Unhealthy episodes, and per model version what differs (versions.v2)."],
                 params: [("model", "rehearse.HealthModel")]),
        Function(name: "phase", kind: .callback,
                 doc: ["Shorthand for the rollingUpgrade custom metric: called for each instance when a rolling upgrade",
                       "starts. Return the PhaseOrderingNumber, the metric itself ({ PhaseOrderingNumber = 1 },",
                       "{ SkipUpgrade = true }) or nil to keep what the instance's metrics say."],
                 params: [("fn", "fun(vm: rehearse.VM): integer|{ PhaseOrderingNumber: integer?, SkipUpgrade: boolean? }|nil")]),
        Function(name: "fault", kind: .callback, doc: ["Decides the fate of every operation: nil, { fail = true } or { duration = \"PT5M\" }."],
                 params: [("fn", "rehearse.FaultFunction")]),
        Function(name: "deferral", kind: .callback,
                 doc: ["Answers the notice of an automatic OS upgrade (needs automaticOSUpgradePolicy with",
                       "enableAutomaticOSUpgrade and osRollingUpgradeDeferral): true defers it until approve_os_upgrade,",
                       "a duration (\"PT10M\" or seconds) approves it by itself after that long, false or nil lets it go ahead."],
                 params: [("fn", "fun(vm: rehearse.VM, now: number): boolean|string|number|nil")]),
        Function(name: "on_hook", kind: .callback,
                 doc: ["Answers each lifecycle hook event as it is raised (needs scaleset.lifecycleHooksProfile and automatic",
                       "OS upgrades): \"approve\" or \"reject\" decides every target; a table decides some (reject first, then",
                       "approve: \"*\" or ids), moves waitUntil (wait_until: a duration after time_created, at most",
                       "max_wait_until) or arrives later (after = \"PT12M\"); nil waits (answer_hook, or the default action at wait_until)."],
                 params: [("fn", "fun(event: rehearse.HookEvent, now: number): \"approve\"|\"reject\"|rehearse.HookAnswer|nil")]),
        Function(name: "at", kind: .definition, doc: ["Runs fn at a virtual time (ISO 8601 duration or seconds); also inside another at callback."],
                 params: [("time", "string|number"), ("fn", "fun()")]),
        Function(name: "expect", kind: .definition, doc: ["Checks the final status and the run."],
                 params: [("expectations", "rehearse.Expectations")]),
        Function(name: "risk", kind: .definition,
                 doc: ["Requirements on shares of runs that sweep, compare, test and tune judge, e.g.",
                       "{ require = { \"Faulted <= 1%\", \"deadline >= 95%\" }, deadline = \"PT60M\", confidence = 0.95 }."],
                 params: [("requirements", "{require: string[], deadline?: string, confidence?: number}")]),
        Function(name: "update_model", kind: .action,
                 doc: ["Updates the scale set model; no argument (or no change) is a generic update, which restarts a rolling upgrade.",
                       "healthExtension = { ... } adds or changes the Application Health extension in the new model (in place),",
                       "healthExtension = false removes it: an instance reports health only while its model has it."],
                 params: [("changes?", "table<string, string|number|boolean|rehearse.HealthExtension>")]),
        Function(name: "update_policy", kind: .action,
                 doc: ["Changes the upgrade policy: fields of ARM's upgradePolicy (mode, rollingUpgradePolicy,",
                       "automaticOSUpgradePolicy) merged into the policy in effect as Azure's PATCH merges them, checked as the definition's (every problem",
                       "at once). A running rolling upgrade keeps its policy; the next one uses the new one."],
                 params: [("policy", "rehearse.UpgradePolicyChange")]),
        Function(name: "reimage", kind: .action,
                 doc: ["Reimages the given instances, or every instance with \"*\": each restarts on the model it runs",
                       "(Initializing again); refused for protected instances."],
                 params: [("ids", "integer[]|\"*\"")]),
        Function(name: "cancel", kind: .action, doc: ["Cancels the running rolling upgrade (an error when none runs)."], params: []),
        Function(name: "manual_upgrade", kind: .action, doc: ["Upgrades the given instances at once, or every instance with \"*\"."],
                 params: [("ids", "integer[]|\"*\"")]),
        Function(name: "start_os_upgrade", kind: .action, doc: ["An OS image upgrade on demand: a rolling upgrade in any mode."],
                 params: [("opts?", "{image?: string}")]),
        Function(name: "release_image", kind: .action,
                 doc: ["A new platform image version is released: with automatic OS upgrades on and a model on the",
                       "latest image version, an automatic OS image upgrade starts."],
                 params: [("opts", "{version: string}")]),
        Function(name: "approve_os_upgrade", kind: .action,
                 doc: ["Approves deferred OS upgrades (ApproveRollingUpgrade) of the given instances, or every one with \"*\"."],
                 params: [("ids", "integer[]|\"*\"")]),
        Function(name: "start_extension_upgrade", kind: .action, doc: ["An extension upgrade (in place): a rolling upgrade in any mode."],
                 params: [("opts?", "{version?: string}")]),
        Function(name: "scale", kind: .action, doc: ["Scales to n instances."], params: [("n", "integer")]),
        Function(name: "delete_instances", kind: .action,
                 doc: ["Deletes the given instances (az vmss delete-instances): the capacity drops by their count."],
                 params: [("ids", "integer[]")]),
        Function(name: "protect", kind: .action,
                 doc: ["Sets an instance's protection policy, as a VM PUT of protectionPolicy does (a flag left out is false)."],
                 params: [("policy", "{id: integer, protectFromScaleIn?: boolean, protectFromScaleSetActions?: boolean}")]),
        Function(name: "restart_instances", kind: .action,
                 doc: ["Restarts the given running instances, or every one with \"*\" (az vmss restart): each boots again on the",
                       "model it runs, Initializing at once; refused for protected instances named."],
                 params: [("ids", "integer[]|\"*\"")]),
        Function(name: "stop_instances", kind: .action,
                 doc: ["Powers off the given instances, or every one with \"*\" (az vmss stop), or deallocates them with",
                       "{ deallocate = true } (az vmss deallocate): out of service, health Unknown, passed over by upgrades until started."],
                 params: [("ids", "integer[]|\"*\""), ("opts?", "{deallocate?: boolean}")]),
        Function(name: "start_instances", kind: .action,
                 doc: ["Starts the given stopped or deallocated instances, or every one with \"*\" (az vmss start): each boots."],
                 params: [("ids", "integer[]|\"*\"")]),
        Function(name: "answer_hook", kind: .action,
                 doc: ["Answers the Active lifecycle hook event (az vmss lifecycle-hook-event approve/reject/update):",
                       "\"approve\", \"reject\" or { approve = \"*\"|ids, reject = \"*\"|ids, wait_until = \"PT1H\", event = name }."],
                 params: [("answer", "\"approve\"|\"reject\"|rehearse.HookAnswer")]),
        Function(name: "set_lifecycle_hooks", kind: .action,
                 doc: ["Replaces the scale set's lifecycle hooks (a PATCH of lifecycleHooksProfile; az vmss lifecycle-hook add/update/remove);",
                       "{} removes every hook. The next event uses them; a running OS upgrade keeps its batch hook."],
                 params: [("hooks", "rehearse.LifecycleHook[]")]),
        Function(name: "fleet", kind: .utility,
                 doc: ["The running scale set now (inside an at(...) callback or a behaviour): now (s), capacity, serving,",
                       "share (serving / capacity), code (the latest rolling upgrade's), gate (false when the scenario's",
                       "gates must not act: sweep --no-gate and a shadow gate's other run)."],
                 params: [], returns: "{now: number, capacity: integer, serving: integer, share: number, code?: string, gate: boolean}"),
        Function(name: "param", kind: .utility,
                 doc: ["A scenario parameter: the value given as --param name=value (run, plan, sweep, compare),",
                       "else the default. The value has the default's type: integer, number, boolean, string,",
                       "or an ISO 8601 duration string; a value of another type is refused before the run."],
                 params: [("name", "string"), ("default", "integer|number|boolean|string")], returns: "integer|number|boolean|string"),
        Function(name: "duration", kind: .utility, doc: ["Seconds in an ISO 8601 duration (\"PT1M30S\" -> 90)."],
                 params: [("value", "string|number")], returns: "number"),
    ]

    /// `require "rehearse.faults"`.
    public static let faults: [Function] = [
        Function(name: "seconds", kind: .utility, doc: ["Seconds in a duration or number; errors name `what`."],
                 params: [("value", "string|number"), ("what", "string")], returns: "number"),
        Function(name: "boot_failures", kind: .utility,
                 doc: ["Operations that fail with a probability (seeded by --seed): { probability = 0.1, operations = { \"upgrade\" } }."],
                 params: [("opts", "{probability: number, operations?: string[]}")], returns: "rehearse.FaultFunction"),
        Function(name: "slow_upgrades", kind: .utility, doc: ["Upgrades that take longer: { duration = \"PT10M\", ids = { 1, 2 } } (all when no ids)."],
                 params: [("opts", "{duration: string|number, ids?: integer[]}")], returns: "rehearse.FaultFunction"),
        Function(name: "zone_outage", kind: .utility, doc: ["A zone that stops answering between two times: { zone = \"2\", from = \"PT5M\", to = \"PT15M\" }."],
                 params: [("opts", "{zone: string, from?: string|number, to?: string|number}")], returns: "rehearse.HealthWrapper"),
        Function(name: "flapping", kind: .utility, doc: ["Health that flips between Healthy and Unhealthy every period seconds: { period = 10, ids = { 3 } }."],
                 params: [("opts", "{period: number, ids?: integer[]}")], returns: "rehearse.HealthWrapper"),
        Function(name: "never_answer", kind: .utility, doc: ["Probes that never answer: { ids = { 4 } } or { version = 2 }."],
                 params: [("opts", "{ids?: integer[], version?: integer}")], returns: "rehearse.HealthWrapper"),
        Function(name: "combine", kind: .utility, doc: ["Chains fault functions: the first that answers non-nil decides."],
                 params: [("...", "rehearse.FaultFunction")], returns: "rehearse.FaultFunction"),
    ]

    /// `expect`'s keys as a LuaLS class, from `Expectation.keys`.
    static var expectations: LuaClass {
        LuaClass(name: "rehearse.Expectations", fields: Expectation.keys.keys.sorted().map { key in
            let type = ["code", "errorCode"].contains(key) ? "string" : ["skipped", "protected"].contains(key) ? "integer[]"
                : key == "finishedWithin" ? "string|number" : "integer"
            return (key + "?", type, Expectation.keys[key]!)
        })
    }

    // MARK: Generation

    static let generatedNotice = "Generated by `rehearse api generate` from Sources/Scenario/ScriptingAPI.swift and the sandbox: do not edit."

    /// Every generated file, by path relative to the repository (or project) root. `bundles` adds a
    /// definition file per bundle, from its manifest's exports.
    public static func generatedFiles(bundles: [PluginManifest]) throws -> [String: String] {
        var files: [String: String] = [:]
        files["scripts/types/rehearse.lua"] = definitions()
        files["scripts/types/rehearse/faults.lua"] = module("rehearse.faults", "rehearse.Faults", faults.map { ($0.name, signature($0), $0.doc) })
        for manifest in bundles.sorted(by: { $0.name < $1.name }) {
            let exports = manifest.exports.keys.sorted().map { ($0, "any", [manifest.exports[$0]!]) }
            files["scripts/types/\(manifest.name).lua"] = module(manifest.name, "bundle.\(manifest.name)", exports,
                                                                 header: "\(manifest.label): \(manifest.description)")
        }
        let globals = functions.map(\.name)
        files["scripts/.luarc.json"] = JSON.object([
            "runtime.version": .string("Lua 5.4"), "runtime.path": .array([.string("?.lua"), .string("?/init.lua")]),
            "workspace.library": .array([.string("types")]), "diagnostics.globals": .array(globals.map(JSON.string)),
        ]).serialized() + "\n"
        files[".luacheckrc"] = try luacheckrc()
        return files
    }

    static func signature(_ f: Function) -> String {
        "fun(" + f.params.map { "\($0.0): \($0.1)" }.joined(separator: ", ") + ")" + (f.returns.map { ": \($0)" } ?? "")
    }

    static func definitions() -> String {
        var out = ["---@meta rehearse", "-- LuaLS definitions for rehearse scenario scripts and plugin bundles.", "-- \(generatedNotice)", ""]
        for c in classes + [expectations] {
            out.append("---@class \(c.name)")
            for (name, type, comment) in c.fields { out.append("---@field \(name) \(type)" + (comment.isEmpty ? "" : "  \(comment)")) }
            out.append("")
        }
        for (name, type) in aliases { out.append("---@alias \(name) \(type)") }
        out.append("")
        for f in functions {
            for line in f.doc { out.append("---" + line) }
            out.append("---(\(f.kind.rawValue))")
            for (name, type) in f.params { out.append("---@param \(name) \(type)") }
            if let returns = f.returns { out.append("---@return \(returns)") }
            let names = f.params.map { $0.0.hasSuffix("?") ? String($0.0.dropLast()) : $0.0 }
            out.append("function \(f.name)(\(names.joined(separator: ", "))) end")
            out.append("")
        }
        return out.joined(separator: "\n")
    }

    static func module(_ name: String, _ className: String, _ fields: [(String, String, [String])], header: String? = nil) -> String {
        var out = ["---@meta \(name)", "-- \(header ?? "require \"\(name)\"")", "-- \(generatedNotice)", "", "---@class \(className)"]
        for (field, type, doc) in fields { out.append("---@field \(field) \(type)  \(doc.joined(separator: " "))") }
        out += ["local M = {}", "return M", ""]
        return out.joined(separator: "\n")
    }

    /// The sandbox's globals: each name, with the fields of the ones that are tables.
    static func sandboxGlobals() throws -> [(name: String, fields: [String]?)] {
        let state = try LuaState()
        try state.openSandbox(LuaSandboxOptions(print: { _ in }))
        let listing = try state.run("""
            local out = {}
            for name, value in pairs(_G) do
              if type(value) == "table" and name ~= "_G" then
                local fields = {}
                for field in pairs(value) do fields[#fields + 1] = field end
                table.sort(fields)
                out[#out + 1] = name .. "=" .. table.concat(fields, ",")
              else
                out[#out + 1] = name
              end
            end
            table.sort(out)
            return table.concat(out, " ")
            """, chunkName: "=api")
        return (listing.first?.stringValue ?? "").split(separator: " ").map { entry in
            let parts = entry.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            return (String(parts[0]), parts.count == 2 ? parts[1].split(separator: ",").map(String.init) : nil)
        }
    }

    /// A luacheck standard of exactly the sandbox's globals and the scenario API, nothing else.
    static func luacheckrc() throws -> String {
        var lines = ["-- luacheck configuration for rehearse scenario scripts, plugin bundles and built-in modules.",
                     "-- \(generatedNotice)",
                     "-- The standard is exactly what the sandbox provides: anything else (io, os.getenv, string.dump,",
                     "-- warn, …) is an undefined variable or field.",
                     "stds.rehearse = {", "  read_globals = {"]
        for global in try sandboxGlobals() {
            if let fields = global.fields {
                lines.append("    \(global.name) = { fields = { " + fields.map { "\"\($0)\"" }.joined(separator: ", ") + " } },")
            } else {
                lines.append("    \"\(global.name)\",")
            }
        }
        lines.append("    -- the scenario API")
        for f in functions { lines.append("    \"\(f.name)\",") }
        lines += ["  },", "}", "std = \"rehearse\"", "exclude_files = { \"scripts/types\" }", "max_line_length = 120",
                  "-- Callbacks receive (vm, now) whether they use them or not.", "unused_args = false", ""]
        return lines.joined(separator: "\n")
    }

    /// Writes every generated file under `root`; returns the paths written.
    public static func write(root: String, bundles: [PluginManifest]) throws -> [String] {
        let files = try generatedFiles(bundles: bundles)
        for (path, text) in files.sorted(by: { $0.key < $1.key }) {
            let full = root + "/" + path
            try FileManager.default.createDirectory(atPath: (full as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            try OutputFile.write(text, to: full, role: "the generated file")
        }
        return files.keys.sorted()
    }
}
