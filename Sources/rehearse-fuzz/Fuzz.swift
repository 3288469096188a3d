import AzureWire
import Formats
import LuaHost
import UpgradeEngine

/// Fuzz targets for the parsers that read untrusted input. The first byte of an input picks the
/// target, the rest is its input:
/// - 0: Lua values to Swift values. The bytes are a little program of table operations (new
///   table, nest, share, cycle, odd keys, functions) turned into a Lua chunk that always
///   compiles; its result is converted as the host converts every script value.
/// - 1: a health endpoint's answer (an HTTP 200 body, rich states, lenient and strict wire).
/// - 2: an ARM `upgradePolicy` JSON document.
/// - 3: an ARM template whose parameters and variables refer to each other (`ARMFuzz`).
/// - 4: a part of a sharded sweep as `merge` reads it: read, merged with a second copy of
///   itself, and its report's figures computed.
enum Fuzz {
    // `state`, the one Lua state every input runs in, is in Fuzz+Unsafe.swift.

    static func run(_ bytes: [UInt8]) {
        guard let target = bytes.first else { return }
        let input = Array(bytes.dropFirst())
        switch target % 5 {
        case 0: _ = try? state.run(luaProgram(input), chunkName: "fuzz.lua")
        case 1:
            let text = String(decoding: input, as: UTF8.self)
            for strict in [false, true] {
                _ = HealthExtensionSettings().evaluate(.http(status: 200, body: text), strictWire: strict)
            }
        case 2: _ = try? UpgradePolicy.parse(json: String(decoding: input, as: UTF8.self))
        case 3: ARMFuzz.run(input)
        default: mergePart(String(decoding: input, as: UTF8.self))
        }
    }

    /// A merge part: whatever it holds, reading, merging and the report's figures end normally.
    static func mergePart(_ text: String) {
        guard let json = try? JSON.parse(text, maxBytes: 1 << 20), let part = try? SweepPart.read(json) else { return }
        for parts in [[("a.json", part)], [("a.json", part), ("b.json", part)]] {
            guard let report = try? SweepPart.merge(parts) else { continue }
            _ = (report.outcomes, report.errorCodes, report.held, report.pastDeadline, report.failedMostOften(), report.leftBehindMostOften())
            for figure in [report.timeToFinish, report.lowestHealthy, report.unavailable] {
                for p in [0.0, 1, 50, 99, 100] { _ = figure.percentile(p) }
            }
        }
    }

    /// A Lua chunk building tables from `bytes`, two bytes an operation, returning the first table.
    static func luaProgram(_ bytes: [UInt8]) -> String {
        var lines = ["local T = { {} }"]
        let keys = ["'a'", "'b'", "'rollingUpgrade'", "1", "2", "3", "true", "2.5"]
        var i = 0
        while i + 1 < bytes.count {
            let op = bytes[i], arg = Int(bytes[i + 1])
            let a = "T[\(arg % 8) % #T + 1]", b = "T[\(arg / 8 % 8) % #T + 1]"
            let key = keys[Int(op / 8) % keys.count]
            switch op % 8 {
            case 0: lines.append("T[#T + 1] = {}")
            case 1: lines.append("\(a)[\(key)] = \(b)")
            case 2: lines.append("\(a)[#\(a) + 1] = \(b)")
            case 3: lines.append("\(a)[\(key)] = \(arg)")
            case 4: lines.append("\(a)[\(key)] = string.rep('x', \(arg))")
            case 5: lines.append("\(a)[\(key)] = \(arg % 2 == 0)")
            case 6: lines.append("for j = 1, \(arg % 40) do local n = {} n[\(key)] = \(a) T[#T + 1] = n end")
            default: lines.append("\(a)[\(key)] = print")
            }
            i += 2
        }
        lines.append("return T[1]")
        return lines.joined(separator: "\n")
    }
}

#if FUZZING
// The libFuzzer entry points are in Fuzz+Unsafe.swift.
#else
import Foundation

/// Without libFuzzer: replays the files (or folders of files) given as arguments through the
/// targets, the regression run of a corpus.
@main
struct Replay {
    static func main() throws {
        var count = 0
        for argument in CommandLine.arguments.dropFirst() {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: argument, isDirectory: &isDirectory) else {
                FileHandle.standardError.write(Data("rehearse-fuzz: no such file or folder: \(argument)\n".utf8))
                exit(2)
            }
            let files = isDirectory.boolValue
                ? try FileManager.default.contentsOfDirectory(atPath: argument).sorted().map { argument + "/" + $0 } : [argument]
            for file in files {
                Fuzz.run(Array(FileManager.default.contents(atPath: file) ?? Data()))
                count += 1
            }
        }
        print("replayed=\(count)")
    }
}
#endif
