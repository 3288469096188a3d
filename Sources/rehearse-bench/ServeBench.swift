import ArgumentParser
import Foundation

/// `rehearse-bench serve`: the load figure of `rehearse serve` (issue 39): wrk's requests per
/// second and latency percentiles for get-latest polls of a served scale set, over HTTPS in speed
/// mode while its upgrade runs.
struct ServeBenchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Load on `rehearse serve`: wrk polls rollingUpgrades/latest over HTTPS; requests_per_s, p50_ms, p99_ms, errors.",
        discussion: """
            Starts --binary's serve on --scenario (HTTPS, any free port, --speed, its clock started \
            --elapsed seconds ago so the upgrade, at PT1M in slow-boots.lua, is under way), waits for its URL, \
            runs wrk -t THREADS -c CONNECTIONS -d DURATION --latency against the scale set's \
            rollingUpgrades/latest with an Authorization header, then stops the server. Needs wrk \
            (Debian: apt-get install -y wrk); without it, exits 2. Build the release binary first: \
            swift build -c release --product rehearse --product rehearse-bench.
            """
    )

    @Option(help: "The rehearse binary to start.") var binary = ".build/release/rehearse"
    @Option(help: "The scenario served (its upgrade should run for the whole load).") var scenario = "scripts/slow-boots.lua"
    @Option(help: "The served scale set's name (the scenario's).") var name = "shop"
    @Option(help: "Virtual seconds per real second.") var speed = 1.0
    @Option(help: "Real seconds the served clock has run when the load starts (serve's --start-at that long ago).") var elapsed = 120.0
    @Option(help: "wrk's threads.") var threads = 2
    @Option(help: "wrk's open connections.") var connections = 50
    @Option(help: "wrk's duration (its form: 10s, 1m).") var duration = "10s"

    func run() throws {
        guard let wrk = Self.onPath("wrk") else {
            FileHandle.standardError.write(Data("rehearse-bench serve: wrk is not installed (Debian: apt-get install -y wrk); no figure measured\n".utf8))
            throw ExitCode(2)
        }
        guard FileManager.default.isExecutableFile(atPath: binary) else {
            throw ValidationError("--binary \(binary) is not an executable file; build it first (see --help)")
        }
        let server = Process()
        server.executableURL = URL(fileURLWithPath: binary)
        // The clock started --elapsed real seconds ago: the upgrade is under way from the first poll.
        let start = Date(timeIntervalSinceNow: -elapsed)
        let stamp = ISO8601DateFormatter().string(from: start)
        server.arguments = ["serve", scenario, "--port", "0", "--speed", String(speed), "--start-at", stamp]
        let out = Pipe()
        server.standardOutput = out
        server.standardError = FileHandle.nullDevice
        try server.run()
        defer {
            if server.isRunning { server.terminate() }
            server.waitUntilExit()
        }
        guard let base = Self.servedURL(out.fileHandleForReading) else {
            throw ValidationError("\(binary) serve \(scenario) printed no URL (run it by hand to see why)")
        }
        // The rest of its output (the report written when it stops) is read and dropped.
        let rest = out.fileHandleForReading
        DispatchQueue.global().async { _ = rest.readDataToEndOfFile() }
        let url = base + "/subscriptions/00000000-0000-4000-8000-00000000bbbb/resourceGroups/rehearse/providers/Microsoft.Compute/virtualMachineScaleSets/"
            + name + "/rollingUpgrades/latest?api-version=2024-07-01"
        let load = Process()
        load.executableURL = URL(fileURLWithPath: wrk)
        load.arguments = ["-t\(threads)", "-c\(connections)", "-d\(duration)", "--latency", "-H", "Authorization: Bearer rehearse-bench", url]
        let output = Pipe()
        load.standardOutput = output
        load.standardError = output
        let cpuBefore = Self.cpuSeconds(of: server.processIdentifier)
        try load.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        load.waitUntilExit()
        let cpuAfter = Self.cpuSeconds(of: server.processIdentifier)
        guard load.terminationStatus == 0, let figures = WrkFigures(text) else {
            throw ValidationError("wrk exited with status \(load.terminationStatus):\n\(text)")
        }
        print("connections=\(connections)")
        print("threads=\(threads)")
        print("cores=\(ProcessInfo.processInfo.activeProcessorCount)")
        report("requests_per_s", figures.requestsPerSecond)
        report("p50_ms", figures.p50, decimals: 3)
        report("p99_ms", figures.p99, decimals: 3)
        print("errors=\(figures.errors)")
        // The server's own CPU per request: what a core of this machine spends on one poll,
        // whoever else (wrk here) shares the cores.
        if let cpuBefore, let cpuAfter, figures.requests > 0 {
            report("server_cpu_us_per_request", (cpuAfter - cpuBefore) * 1e6 / Double(figures.requests))
        }
    }

    /// User plus system CPU seconds `pid` has used (Linux's /proc/PID/stat); nil elsewhere.
    static func cpuSeconds(of pid: Int32) -> Double? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = text.lastIndex(of: ")") else { return nil }
        // After the command's name: state is field 3, utime and stime fields 14 and 15.
        let fields = text[text.index(after: close)...].split(separator: " ")
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
        let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
        return ticks > 0 ? (user + system) / ticks : nil
    }

    /// The first executable `command` on PATH.
    static func onPath(_ command: String) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        return path.split(separator: ":").map { "\($0)/\(command)" }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// URL of serve's "rehearse serve: URL (…)" line; nil when the output ends first.
    static func servedURL(_ handle: FileHandle) -> String? {
        var buffer = ""
        while true {
            let data = handle.availableData
            if data.isEmpty { return nil }
            buffer += String(decoding: data, as: UTF8.self)
            for line in buffer.split(separator: "\n") where line.hasPrefix("rehearse serve: ") {
                return line.dropFirst("rehearse serve: ".count).split(separator: " ").first.map(String.init)
            }
        }
    }
}

/// The figures of wrk's `--latency` report.
struct WrkFigures: Equatable {
    var requestsPerSecond: Double
    /// Requests completed in the whole run ("N requests in 10.00s").
    var requests: Int
    /// Milliseconds.
    var p50: Double, p99: Double
    /// Non-2xx/3xx responses plus socket errors (connect, read, write, timeout).
    var errors: Int

    init?(_ text: String) {
        var rate: Double?, p50: Double?, p99: Double?
        var errors = 0, requests = 0
        for raw in text.split(separator: "\n") {
            let fields = raw.split(separator: " ", omittingEmptySubsequences: true)
            guard let first = fields.first else { continue }
            if fields.count > 2, fields[1] == "requests", fields[2] == "in", let count = Int(first) { requests = count }
            switch first {
            case "Requests/sec:": rate = fields.count > 1 ? Double(fields[1]) : nil
            case "50%": p50 = fields.count > 1 ? Self.milliseconds(fields[1]) : nil
            case "99%": p99 = fields.count > 1 ? Self.milliseconds(fields[1]) : nil
            case "Non-2xx": errors += fields.last.flatMap { Int($0) } ?? 0
            case "Socket":
                // Socket errors: connect 0, read 0, write 0, timeout 0
                errors += fields.compactMap { Int($0.trimmingCharacters(in: CharacterSet(charactersIn: ","))) }.reduce(0, +)
            default: break
            }
        }
        guard let rate, let p50, let p99 else { return nil }
        (requestsPerSecond, self.requests, self.p50, self.p99, self.errors) = (rate, requests, p50, p99, errors)
    }

    /// wrk's "1.23ms", "850.00us" or "1.02s" in milliseconds.
    static func milliseconds(_ text: Substring) -> Double? {
        for (unit, scale) in [("us", 0.001), ("ms", 1.0), ("s", 1000.0)] where text.hasSuffix(unit) {
            return Double(text.dropLast(unit.count)).map { $0 * scale }
        }
        return nil
    }
}
