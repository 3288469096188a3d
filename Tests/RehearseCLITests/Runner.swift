import Foundation

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
func runRehearse(_ arguments: [String]) throws -> CLIOutput {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: rehearseBinary)
    process.arguments = arguments
    process.currentDirectoryURL = URL(fileURLWithPath: repositoryRoot)
    var environment = ProcessInfo.processInfo.environment
    environment["REHEARSE_PLUGIN_PATH"] = nil
    process.environment = environment
    // Standard error goes to a file: reading two pipes one after the other can deadlock when the
    // second fills up (a sanitizer's report, say).
    let errorPath = FileManager.default.temporaryDirectory.appendingPathComponent("rehearse-stderr-\(UUID().uuidString)").path
    FileManager.default.createFile(atPath: errorPath, contents: nil)
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
