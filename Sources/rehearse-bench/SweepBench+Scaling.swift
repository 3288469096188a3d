import Foundation
import Scenario
import UpgradeEngine

/// `rehearse-bench sweep --jobs-list 1,2,4,…`: how a sweep scales up on this machine's cores, and
/// what the distributed sequential gate costs against one process on the same cores.
extension SweepBenchCommand {
    /// Runs per second at each count of jobs, and efficiency: runs per second per thread over
    /// the one-thread figure (1.0 is perfect). `threads_J` says how many threads the sweep really
    /// ran: never more than the cores (`SweepCapacity`), so counts past the cores show the cap.
    /// Each count runs `perThread` seeds per thread, so every measurement lasts about as long and
    /// the last run's tail weighs the same; `rounds` rounds go through the counts in turn and each
    /// figure is the median of its rounds (a shared machine's speed drifts between minutes).
    func scaling(_ definition: ScenarioDefinition, counts: [Int], scenarioPath: String?) throws {
        print("cores=\(ProcessInfo.processInfo.activeProcessorCount)")
        print("runs_per_thread=\(perThread)")
        print("rounds=\(rounds)")
        // What the machine gives J threads of independent work that shares nothing (the C host's
        // Lua loop, each thread its own state): one thread's time over J threads' time, the same
        // calls each. Where this falls with J, so must any program's per-thread rate.
        let calls: Int64 = 2_000_000
        var rates: [Int: [Double]] = [:], machines: [Int: [Double]] = [:]
        for _ in 0..<rounds {
            for jobs in counts {
                let threads = SweepCapacity.threads(jobs: jobs, seeds: perThread * jobs)
                let list = (0..<UInt64(perThread * threads)).map { $0 }
                let start = nowNanoseconds()
                _ = try Sweep.run(definition, seeds: list, jobs: jobs)
                rates[jobs, default: []].append(Double(list.count) / (Double(nowNanoseconds() - start) / 1e9))
                machines[jobs, default: []].append(timedLoop(threads: 1, calls: calls) / timedLoop(threads: threads, calls: calls))
            }
        }
        var perThreadRate: [Int: Double] = [:], machine: [Int: Double] = [:]
        for jobs in counts {
            let threads = SweepCapacity.threads(jobs: jobs, seeds: perThread * jobs)
            let perSecond = median(rates[jobs]!)
            perThreadRate[jobs] = perSecond / Double(threads)
            machine[jobs] = median(machines[jobs]!)
            print("threads_\(jobs)=\(threads)")
            report("runs_per_s_\(jobs)", perSecond, decimals: 2)
            report("machine_efficiency_\(jobs)", machine[jobs]!, decimals: 3)
            if let one = perThreadRate[counts[0]], SweepCapacity.threads(jobs: counts[0], seeds: perThread) == 1 {
                report("efficiency_\(jobs)", perThreadRate[jobs]! / one, decimals: 3)
                report("efficiency_vs_machine_\(jobs)", perThreadRate[jobs]! / one / machine[jobs]!, decimals: 3)
            }
        }
        if let four = perThreadRate[4], let top = counts.max(), top > 4, let last = perThreadRate[top],
           let machineFour = machine[4], let machineTop = machine[top] {
            report("efficiency_\(top)_vs_4", last / four, decimals: 3)
            report("machine_efficiency_\(top)_vs_4", machineTop / machineFour, decimals: 3)
            // The same sweep as separate processes of one job each, which share no allocator,
            // no memory and no lock: where these keep their rate and threads do not, the cause is
            // in the process; where both fall alike, it is the machine.
            if let path = scenarioPath {
                var ratios: [Double] = []
                for _ in 0..<rounds {
                    let fourProcesses = try processes(scenario: path, count: 4) / 4
                    let topProcesses = try processes(scenario: path, count: top) / Double(top)
                    ratios.append(topProcesses / fourProcesses)
                }
                report("processes_efficiency_\(top)_vs_4", median(ratios), decimals: 3)
            }
        }
    }

    /// The sequential gate `Faulted <= 1%` on the scenario at `path` (which never faults, so
    /// it holds after a few hundred runs): once as one process with `jobs` jobs, once as the
    /// distributed gate does it, 100-seed blocks as separate `rehearse sweep --shard 1/1
    /// --until-decided --jobs 1` processes, `jobs` at a time, judged by `rehearse merge
    /// --until-decided` after each wave. Prints both runs and seconds and their ratio; the two
    /// reports must be the same bytes.
    func distributedGate(scenario path: String, jobs: Int, budget: Int) throws {
        let rehearse = rehearseBinaryPath
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
            // One look's seeds per wave, split over `jobs` processes, so the merged parts are
            // judged at the same seed counts as one process judges them.
            let end = min(budget, next + Tune.lookEvery)
            let share = max(1, (end - next + jobs - 1) / jobs)
            while next < end {
                let last = min(end, next + share) - 1
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

    /// Runs per second of `perThread × count` seeds swept as `count` `rehearse sweep --jobs 1`
    /// processes at once, each its share (`--shard I/count`).
    func processes(scenario path: String, count: Int) throws -> Double {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("rehearse-bench-processes-\(getpid())").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let start = nowNanoseconds()
        let running = try (1...count).map { shard in
            try started(rehearseBinaryPath, ["sweep", path, "--seeds", "0..\(perThread * count - 1)", "--shard", "\(shard)/\(count)", "--jobs", "1", "--json"],
                        output: "\(folder)/part-\(shard).json")
        }
        for (process, _, _) in running {
            process.waitUntilExit()
            guard process.terminationStatus == 0 else { throw BenchFailure("a sweep process exited \(process.terminationStatus)") }
        }
        return Double(perThread * count) / (Double(nowNanoseconds() - start) / 1e9)
    }

    /// The rehearse binary the process figures run: --rehearse, or the one beside rehearse-bench.
    var rehearseBinaryPath: String {
        rehearseBinary ?? URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("rehearse").path
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
