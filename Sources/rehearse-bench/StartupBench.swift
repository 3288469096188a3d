import ArgumentParser
import Foundation

/// `rehearse-bench startup`: how long `rehearse validate` of a two-line scenario takes from
/// spawn to exit, beside the time to spawn a process that does nothing.
struct StartupCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "startup",
        abstract: "Start-up of `rehearse validate` on a tiny scenario: the median of --runs spawns (ms), beside /bin/true's.",
        discussion: """
            Build the binary to measure first, e.g. the release build with the Swift runtime linked \
            statically: swift build -c release --product rehearse --static-swift-stdlib \
            --scratch-path .build-static, then --binary .build-static/release/rehearse.
            """
    )

    @Option(help: "The rehearse binary to start.") var binary = ".build/release/rehearse"
    @Option(help: "Timed spawns of each; medians are printed.") var runs = 30

    func run() throws {
        let scenario = FileManager.default.temporaryDirectory.appendingPathComponent("rehearse-bench-startup-\(getpid()).lua").path
        try "scaleset { name = \"tiny\", capacity = 2 }\n".write(toFile: scenario, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: scenario) }
        guard FileManager.default.isExecutableFile(atPath: binary) else {
            throw ValidationError("--binary \(binary) is not an executable file; build it first (see --help)")
        }
        let rehearse = try spawnTimes(binary, ["validate", scenario])
        let floor = try spawnTimes("/bin/true", [])
        print("runs=\(runs)")
        report("startup_ms", median(rehearse), decimals: 2)
        report("process_floor_ms", median(floor), decimals: 2)
        report("startup_vs_floor", median(rehearse) / median(floor), decimals: 2)
    }

    /// Milliseconds from spawn to exit of `path arguments`, `runs` times after 3 untimed starts,
    /// with posix_spawn (Foundation's Process adds tens of milliseconds of its own per start).
    func spawnTimes(_ path: String, _ arguments: [String]) throws -> [Double] {
        var times: [Double] = []
        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        for run in 0..<(runs + 3) {
            var pid: pid_t = 0
            let start = nowNanoseconds()
            let spawned = posix_spawn(&pid, path, &actions, nil, argv, environ)
            guard spawned == 0 else { throw ValidationError("cannot start \(path): \(String(cString: strerror(spawned)))") }
            var status: Int32 = 0
            waitpid(pid, &status, 0)
            let elapsed = Double(nowNanoseconds() - start) / 1e6
            guard status == 0 else { throw ValidationError("\(path) \(arguments.joined(separator: " ")) exited with status \(status)") }
            if run >= 3 { times.append(elapsed) }
        }
        return times
    }
}
