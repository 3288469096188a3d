import Foundation
import Scenario
import UpgradeEngine

/// `rehearse-bench sweep --jobs-list 1,2,4,…`: how a sweep scales up on this machine's cores, and
/// what the distributed sequential gate costs against one process on the same cores.
extension SweepBenchCommand {
    /// Runs per second at each count of jobs, and efficiency: runs per second per thread over
    /// the one-thread figure (1.0 is perfect). `threads_J` says how many threads the sweep really
    /// ran: never more than the cores (`SweepCapacity`), so counts past the cores show the cap.
    func scaling(_ definition: ScenarioDefinition, counts: [Int]) throws {
        let list = (0..<UInt64(seeds)).map { $0 }
        var perThreadOne: Double?
        var perThread: [Int: Double] = [:]
        for jobs in counts {
            let start = nowNanoseconds()
            _ = try Sweep.run(definition, seeds: list, jobs: jobs)
            let perSecond = Double(seeds) / (Double(nowNanoseconds() - start) / 1e9)
            let threads = SweepCapacity.threads(jobs: jobs, seeds: seeds)
            let each = perSecond / Double(threads)
            perThreadOne = perThreadOne ?? (threads == 1 ? each : nil)
            perThread[jobs] = each
            print("threads_\(jobs)=\(threads)")
            report("runs_per_s_\(jobs)", perSecond, decimals: 2)
            if let one = perThreadOne { report("efficiency_\(jobs)", each / one, decimals: 3) }
        }
        if let four = perThread[4], let top = counts.max(), top > 4, let last = perThread[top] {
            report("efficiency_\(top)_vs_4", last / four, decimals: 3)
        }
    }

    /// The sequential gate `Faulted <= 1%` on the scenario at `path` (which never faults, so
    /// it holds after a few hundred runs): once as one process with `jobs` jobs, once as the
    /// distributed gate does it, 100-seed blocks as separate `rehearse sweep --shard 1/1
    /// --until-decided --jobs 1` processes, `jobs` at a time, judged by `rehearse merge
    /// --until-decided` after each wave. Prints both runs and seconds and their ratio; the two
    /// reports must be the same bytes.
    func distributedGate(scenario path: String, jobs: Int, budget: Int) throws {
        let rehearse = rehearseBinary ?? URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("rehearse").path
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("rehearse-bench-gate-\(getpid())").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let question = [path, "--require", "Faulted <= 1%", "--until-decided", "--json"]
        var start = nowNanoseconds()
        let one = try launch(rehearse, ["sweep"] + question + ["--seeds", "0..\(budget - 1)", "--jobs", String(jobs)])
        let oneSeconds = Double(nowNanoseconds() - start) / 1e9
        start = nowNanoseconds()
        var parts: [String] = [], next = 0, ran = 0
        var merged = ""
        repeat {
            var wave: [(Process, Pipe, String)] = []
            while next < budget && wave.count < jobs {
                let last = min(budget, next + Tune.lookEvery) - 1
                let part = "\(folder)/part-\(next).json"
                wave.append(try started(rehearse, ["sweep"] + question + ["--seeds", "\(next)..\(last)", "--shard", "1/1", "--jobs", "1"], output: part))
                ran += last - next + 1
                next = last + 1
            }
            for (process, _, part) in wave {
                process.waitUntilExit()
                guard process.terminationStatus == 0 else { throw BenchFailure("a gate part failed: \(part)") }
                parts.append(part)
            }
            merged = try launch(rehearse, ["merge", "--until-decided", "--json"] + parts)
        } while next < budget && merged.contains("\"undecided\"")
        let distributedSeconds = Double(nowNanoseconds() - start) / 1e9
        guard merged == one else { throw BenchFailure("the distributed gate's report differs from one process's") }
        let decided = (try JSONSerialization.jsonObject(with: Data(one.utf8)) as? [String: Any])?["runs"] as? Int ?? -1
        print("gate_jobs=\(jobs)")
        print("gate_runs_one=\(decided)")
        print("gate_runs_distributed=\(ran)")
        report("gate_s_one", oneSeconds, decimals: 2)
        report("gate_s_distributed", distributedSeconds, decimals: 2)
        report("gate_overhead", distributedSeconds / oneSeconds, decimals: 3)
    }

    /// Runs `binary` with `arguments` to its end; its standard output (exit 0 or 1).
    func launch(_ binary: String, _ arguments: [String]) throws -> String {
        let (process, pipe, _) = try started(binary, arguments, output: nil)
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus <= 1 else { throw BenchFailure("\(binary) \(arguments.joined(separator: " ")) exited \(process.terminationStatus)") }
        return String(decoding: data, as: UTF8.self)
    }

    /// `binary` started with `arguments`, its standard output into the file `output` (or a pipe).
    func started(_ binary: String, _ arguments: [String], output: String?) throws -> (Process, Pipe, String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = arguments
        let pipe = Pipe()
        if let output {
            _ = FileManager.default.createFile(atPath: output, contents: nil)
            process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: output))
        } else {
            process.standardOutput = pipe
        }
        process.standardError = FileHandle.nullDevice
        try process.run()
        return (process, pipe, output ?? "")
    }
}

/// A benchmark that could not measure what it meant to.
struct BenchFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
