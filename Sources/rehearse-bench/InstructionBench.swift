import ArgumentParser
import Foundation

/// `rehearse-bench ir`: the scenario bench's work counted in instructions under callgrind, which
/// gives the same figure on a busy machine as on a quiet one.
struct InstructionCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ir",
        abstract: "Instructions per probe of the scenario bench and of its floor, counted by callgrind (needs valgrind and strip).",
        discussion: """
            Runs `valgrind --tool=callgrind` on a copy of this binary without debug information \
            (valgrind 3.19 cannot read the DWARF 5 Swift writes), doing `scenario --only rehearse` \
            and `scenario --only floor` once and --runs times each: the difference over the extra \
            runs is one run's instructions, with start-up and loading cancelled out. Each run's Lua \
            state seeds its string hashes from the time and addresses, which moves a run's count by \
            a few percent; more runs average that out. Prints ir_per_probe, floor_ir_per_probe and \
            ir_ratio. With --cache, also runs cachegrind's cache simulation (a 32 KiB first-level \
            data cache) on the scenario with last-level caches of 2 MiB and 8 MiB (a core's share of \
            a shared L3 at 16 and at 4 busy cores): ll_misses_per_run_2mib and _8mib count one run's \
            last-level data misses the same way, the memory traffic that sharing the L3 costs. \
            Then sweep_ll_misses_per_run_1mib and _2mib count the same for a run as `sweep` makes \
            it (no event kept): 1 MiB is half of a 2 MiB second-level cache when two hardware \
            threads share a core.
            """
    )

    @Option(help: "valgrind to run.") var valgrind = "valgrind"
    @Option(help: "Runs of the second count (at least 2).") var runs = 4
    @Flag(help: "Also count last-level data cache misses per run with 2 MiB and 8 MiB caches, and a sweep's run with 1 MiB and 2 MiB (cachegrind).") var cache = false

    func run() throws {
        let copy = FileManager.default.temporaryDirectory.appendingPathComponent("rehearse-bench-ir-\(getpid())").path
        defer { try? FileManager.default.removeItem(atPath: copy) }
        let binary = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
        _ = try execute("strip", ["--strip-debug", "-o", copy, binary])
        var counts: [String: Int] = [:]
        var calls = 0
        for side in ["rehearse", "floor"] {
            for runs in [1, max(2, runs)] {
                let (output, errors) = try execute(valgrind, ["--tool=callgrind", "--callgrind-out-file=/dev/null", copy,
                                                              "scenario", "--only", side, "--runs", "\(runs)"])
                guard let collected = Self.number(after: "Collected : ", in: errors), let n = Self.number(after: "calls=", in: output) else {
                    throw ValidationError("no instruction count from valgrind:\n\(errors)")
                }
                counts["\(side)\(runs == 1 ? 1 : 2)"] = collected
                calls = n
            }
        }
        let extra = Double(max(2, runs) - 1) * Double(calls)
        let perProbe = Double(counts["rehearse2"]! - counts["rehearse1"]!) / extra
        let floorPerProbe = Double(counts["floor2"]! - counts["floor1"]!) / extra
        print("calls=\(calls)")
        report("ir_per_probe", perProbe, decimals: 0)
        report("floor_ir_per_probe", floorPerProbe, decimals: 0)
        report("ir_ratio", perProbe / floorPerProbe, decimals: 3)
        guard cache else { return }
        for (side, prefix, sizes) in [("rehearse", "", [2 << 10, 8 << 10]), ("sweep", "sweep_", [1 << 10, 2 << 10])] {
            for kibibytes in sizes {
                var misses: [Int] = []
                for runs in [1, max(2, runs)] {
                    let (_, errors) = try execute(valgrind, ["--tool=cachegrind", "--cache-sim=yes", "--D1=32768,8,64", "--LL=\(kibibytes << 10),16,64",
                                                             "--cachegrind-out-file=/dev/null", copy, "scenario", "--only", side, "--runs", "\(runs)"])
                    guard let count = Self.number(after: "LLd misses:", in: errors) else { throw ValidationError("no cache figures from valgrind:\n\(errors)") }
                    misses.append(count)
                }
                report("\(prefix)ll_misses_per_run_\(kibibytes >> 10)mib", Double(misses[1] - misses[0]) / Double(max(2, runs) - 1), decimals: 0)
            }
        }
    }

    /// The integer after `marker` in `text` (digits and thousands commas).
    static func number(after marker: String, in text: String) -> Int? {
        guard let range = text.range(of: marker, options: .backwards) else { return nil }
        let digits = text[range.upperBound...].drop { $0 == " " }.prefix { $0.isNumber || $0 == "," }.filter(\.isNumber)
        return Int(digits)
    }

    /// Runs `tool` (searched on PATH) and returns its standard output and error; a failure is an error.
    func execute(_ tool: String, _ arguments: [String]) throws -> (String, String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [tool] + arguments
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let errors = err.fileHandleForReading.readDataToEndOfFile()
        let output = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw ValidationError("\(tool) failed (\(process.terminationStatus)): \(String(decoding: errors, as: UTF8.self))")
        }
        return (String(decoding: output, as: UTF8.self), String(decoding: errors, as: UTF8.self))
    }
}
