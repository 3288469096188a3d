import Foundation
import XCTest

/// The repository root, found from this file's path.
let repositoryRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path

/// What one run of the binary printed and returned.
struct CLIOutput {
    var status: Int32
    var stdout: String
    var stderr: String
}

/// The built `rehearse`, next to the test bundle.
var rehearseBinary: String {
    var dir = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
    if dir.lastPathComponent.hasSuffix(".xctest") { dir = dir.deletingLastPathComponent() }
    return dir.appendingPathComponent("rehearse").path
}

/// Runs `rehearse` with `arguments` from the repository root, without a plugin path from the
/// environment, and collects its output.
func runRehearse(_ arguments: [String], in folder: String = repositoryRoot) throws -> CLIOutput {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: rehearseBinary)
    process.arguments = arguments
    process.currentDirectoryURL = URL(fileURLWithPath: folder)
    var environment = ProcessInfo.processInfo.environment
    environment["REHEARSE_PLUGIN_PATH"] = nil
    process.environment = environment
    // Standard error goes to a file: reading two pipes one after the other can deadlock when the
    // second fills up (a sanitizer's report, say).
    let errorPath = FileManager.default.temporaryDirectory.appendingPathComponent("rehearse-stderr-\(UUID().uuidString)").path
    _ = FileManager.default.createFile(atPath: errorPath, contents: nil)
    defer { try? FileManager.default.removeItem(atPath: errorPath) }
    let out = Pipe()
    process.standardOutput = out
    process.standardError = FileHandle(forWritingAtPath: errorPath)
    try process.run()
    let stdout = out.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    let stderr = FileManager.default.contents(atPath: errorPath) ?? Data()
    return CLIOutput(status: process.terminationStatus, stdout: String(decoding: stdout, as: UTF8.self),
                     stderr: String(decoding: stderr, as: UTF8.self))
}

/// The machine's python3, for the fixture servers (the tests skip without one).
func python3() throws -> String {
    guard let python = ["/usr/bin/python3", "/usr/local/bin/python3"].first(where: FileManager.default.isExecutableFile)
        ?? ProcessInfo.processInfo.environment["PATH"]?.split(separator: ":").map({ "\($0)/python3" }).first(where: FileManager.default.isExecutableFile)
    else { throw XCTSkip("python3 is not on this machine: no local HTTP server for this test") }
    return python
}

/// Starts a Python fixture server from Fixtures/ with `arguments`; it prints its port first.
func startFixtureServer(_ script: String, _ arguments: [String]) throws -> (Process, Int) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: try python3())
    process.arguments = [repositoryRoot + "/Tests/RehearseCLITests/Fixtures/" + script] + arguments
    let out = Pipe()
    process.standardOutput = out
    try process.run()
    let port = Int(firstLine(out).trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
    XCTAssertGreaterThan(port, 0, "\(script) printed no port")
    return (process, port)
}

/// Runs `command` with bash from the repository root (for pipes and redirections) and returns
/// its exit status.
func runShell(_ command: String) throws -> Int32 {
    let shell = Process()
    shell.executableURL = URL(fileURLWithPath: "/bin/bash")
    shell.arguments = ["-c", command]
    shell.currentDirectoryURL = URL(fileURLWithPath: repositoryRoot)
    try shell.run()
    shell.waitUntilExit()
    return shell.terminationStatus
}

/// A new empty folder under the temporary directory, named `prefix-UUID`.
func temporaryFolder(_ prefix: String) throws -> String {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("\(prefix)-\(UUID().uuidString)").path
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    return folder
}

/// The hostile tests' scenarios: a two-instance scale set with a health extension, then the body.
let hostileScaleSet = """
    scaleset { name = "web", capacity = 2, upgradePolicy = { mode = "Rolling" },
               healthExtension = { protocol = "http", port = 80, requestPath = "/" } }

    """

/// A new empty folder under the temporary directory.
func newTemporaryFolder() throws -> String { try temporaryFolder("rehearse-hostile") }

/// `scaleSet` then `body`, written to `x.lua` in a new folder; its path.
func writeHostileScenario(_ body: String, scaleSet: String = hostileScaleSet) throws -> String {
    let path = try newTemporaryFolder() + "/x.lua"
    try (scaleSet + body).write(toFile: path, atomically: true, encoding: .utf8)
    return path
}

/// What a started process writes to `pipe` up to its first newline (all of it, if it ends sooner).
func firstLine(_ pipe: Pipe) -> String {
    var line = Data()
    while !line.contains(UInt8(ascii: "\n")) {
        let chunk = pipe.fileHandleForReading.availableData
        guard !chunk.isEmpty else { break }
        line += chunk
    }
    return String(decoding: line, as: UTF8.self)
}

/// Starts `rehearse serve` with `arguments` from the repository root; returns the process and
/// the port its first line printed (0 when it printed none).
func startServe(_ arguments: [String]) throws -> (Process, Int) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: rehearseBinary)
    process.arguments = ["serve"] + arguments
    process.currentDirectoryURL = URL(fileURLWithPath: repositoryRoot)
    let out = Pipe()
    process.standardOutput = out
    try process.run()
    let text = firstLine(out)
    // "rehearse serve: http://127.0.0.1:PORT (…)"
    let port = text.split(separator: ":").dropFirst(3).first.flatMap { Int($0.prefix { $0.isNumber }) } ?? 0
    return (process, port)
}

/// Sends `request` (printf's escapes) to 127.0.0.1:`port` through bash's /dev/tcp and returns
/// all it answers within `seconds`.
func rawHTTP(port: Int, _ request: String, seconds: Int = 10) throws -> String {
    let client = Process()
    client.executableURL = URL(fileURLWithPath: "/bin/bash")
    client.arguments = ["-c", "exec 3<>/dev/tcp/127.0.0.1/\(port); printf '\(request)' >&3; timeout \(seconds) cat <&3"]
    let out = Pipe()
    client.standardOutput = out
    try client.run()
    let reply = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    client.waitUntilExit()
    return reply
}

/// SHA-256 of a file, hex, through the machine's sha256sum.
func sha256sum(_ path: String) throws -> String {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/sha256sum")
    process.arguments = [path]
    let out = Pipe()
    process.standardOutput = out
    try process.run()
    process.waitUntilExit()
    return String(String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self).prefix(64))
}
