import Foundation
import XCTest

/// `rehearse sweep` gives the same answer with one job or many: the backstops count each
/// thread's CPU time, and a run that meets a limit fails in its place instead of ending the
/// process.
final class HostileBudgetCLITests: XCTestCase {
    func scenario(_ body: String) throws -> String {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("rehearse-budget-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let path = dir + "/x.lua"
        try ("""
            scaleset { name = "web", capacity = 2, upgradePolicy = { mode = "Rolling" },
                       healthExtension = { protocol = "http", port = 80, requestPath = "/" } }

            """ + body).write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// A third of the seeds hang in a backtracking pattern, a third raise an error (seed 0 errs,
    /// seed 2 hangs): the sweep names seed 0, the same with --jobs 1 and --jobs 8 (with 8, the
    /// watchdog of seed 2's thread ended the process after 5 s, naming seed 2).
    func testHangingAndFailingSeedsNameTheSameSeedWhateverTheJobs() throws {
        let path = repositoryRoot + "/Tests/Budget/hang-or-fail.lua"
        let one = try runRehearse(["sweep", path, "--seeds", "0..15", "--jobs", "1"])
        let eight = try runRehearse(["sweep", path, "--seeds", "0..15", "--jobs", "8"])
        XCTAssertEqual(one.status, 2, one.stderr)
        XCTAssertEqual(eight.status, one.status)
        XCTAssertEqual(eight.stderr, one.stderr)
        XCTAssertTrue(one.stderr.hasPrefix("rehearse: error: seed 0: "), one.stderr)
    }

    /// Eight runs of about 0.15 s of CPU with --max-script-seconds 1: the same report, exit 0,
    /// with 1, 2 and 64 jobs on a machine of two cores (on the wall clock, many threads made
    /// each run's scripts look slower than the limit).
    func testCPUBoundRunsGiveTheSameReportWhateverTheJobs() throws {
        let path = try scenario("""
            health(function(vm)
              local x = 0
              for i = 1, 1000000 do x = x + i end
              return { applicationHealthState = "Healthy" }
            end)
            at("PT1M", function() end)
            """)
        let one = try runRehearse(["sweep", path, "--seeds", "0..7", "--jobs", "1", "--json", "--max-script-seconds", "1"])
        XCTAssertEqual(one.status, 0, one.stderr)
        for jobs in ["2", "64"] {
            let other = try runRehearse(["sweep", path, "--seeds", "0..7", "--jobs", jobs, "--json", "--max-script-seconds", "1"])
            XCTAssertEqual(other.status, 0, other.stderr)
            XCTAssertEqual(other.stdout, one.stdout, "jobs \(jobs)")
        }
    }
}
