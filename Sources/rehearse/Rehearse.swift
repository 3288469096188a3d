import ArgumentParser
import Formats
import Foundation
import LuaHost
import Scenario
import UpgradeEngine

/// The version `rehearse --version` prints.
let rehearseVersion = "0.6.0"

/// `rehearse`: rehearse Azure-style rolling upgrades of scale sets described in Lua scenarios.
@main
struct Rehearse: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rehearse",
        abstract: "Rehearse Azure VM scale set rolling upgrades on a virtual clock.",
        discussion: """
            Exit status: 0 when the run went as expected (every expect{} held), 1 when an expectation \
            failed, 2 for a bad scenario, a policy error or a script error.
            """,
        version: rehearseVersion,
        subcommands: [RunCommand.self, PlanCommand.self, ExplainCommand.self, DiffCommand.self, SweepCommand.self, CompareCommand.self, TuneCommand.self, MergeCommand.self, ImportCommand.self, TestCommand.self, ValidateCommand.self, PluginsCommand.self, ProbeCommand.self, APICommand.self, ServeCommand.self]
    )

    /// Runs the command line. A bad option or argument is bad input like any other: exit 2 with
    /// the parser's message (what is wrong and the usage), not the parser's own 64. Commands
    /// throw typed errors; this is the one place they are rendered (`Diagnostics.render`).
    /// `serve` is the one asynchronous command; the others run synchronously.
    static func main() async {
        // A closed pipe (`--events - | head -c 10`) is a write error reported with exit 2, not a
        // death by SIGPIPE.
        signal(SIGPIPE, SIG_IGN)
        ProcessMemory.keepFreedMemory()
        do {
            var command = try parseAsRoot()
            if var asynchronous = command as? any AsyncParsableCommand {
                try await asynchronous.run()
            } else {
                try command.run()
            }
            flushStandardOutput()
        } catch {
            // The parser's own ends (help, version) and its errors keep its rendering; every
            // other error a command ends with is rendered here, once.
            if error is CleanExit || error is ExitCode { exit(withError: error) }
            if exitCode(for: error) == .validationFailure {
                printError(fullMessage(for: error))
                Foundation.exit(2)
            }
            if exitCode(for: error) == .success { exit(withError: error) }
            let status = Diagnostics.render(error)
            flushStandardOutput(after: status)
            Foundation.exit(status)
        }
    }

    /// Writes out what is still buffered for standard output; when that fails (a full device, a
    /// pipe closed early), what was printed is lost, and the command says so and exits 2 rather
    /// than 0 or 1 (a command already ending with 2 said what went wrong).
    static func flushStandardOutput(after status: Int32 = 0) {
        // Every output stream (standard output is the one this process prints to): a write
        // that failed before leaves its error for the next write of the buffer's rest.
        guard fflush(nil) != 0 else { return }
        if status != 2 {
            let reason = String(cString: strerror(errno))
            Diagnostics.write([Diagnostic("standard output could not be written (\(reason)); what the command printed there is lost")])
        }
        Foundation.exit(2)
    }
}
