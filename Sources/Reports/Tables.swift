import Foundation
import TextTable
public import UpgradeEngine

/// `--output table`: a command's results as rows and columns, one row per thing, for a person
/// who wants to scan or a shell that wants `column`/`awk`.
public enum Tables {
    /// Every instance at the end of a run: id, name, zone, domains, model version, health, and
    /// why it is not as the newest model would have it (failed, left behind, rolled back, deleted).
    public static func fleet(_ record: RunRecord) -> [String] {
        let failed = Set(record.summary.failed), rollbackFailed = Set(record.summary.rollbackFailed)
        struct Row { let vm: InstanceOutcome; let note: String }
        let rows = record.fleetInstances.map { vm -> Row in
            let note: String
            if !vm.exists {
                note = "deleted"
            } else if rollbackFailed.contains(vm.id) {
                note = "rollback failed"
            } else if failed.contains(vm.id) {
                note = "failed"
            } else {
                note = vm.leftBehind.map { "left behind: \($0.rawValue)" } ?? ""
            }
            return Row(vm: vm, note: note)
        }
        return render(TextTable<Row> {
            [Column(title: "Id", value: $0.vm.id, align: .right), Column(title: "Name", value: $0.vm.name),
             Column(title: "Zone", value: $0.vm.zone ?? "-"), Column(title: "FD", value: $0.vm.faultDomain, align: .right),
             Column(title: "UD", value: $0.vm.updateDomain, align: .right),
             Column(title: "Model", value: $0.vm.exists ? "v\($0.vm.modelVersion)" : "-"),
             Column(title: "Health", value: $0.vm.exists ? $0.vm.health.rawValue : "-"), Column(title: "Note", value: $0.note)]
        }, rows)
    }

    /// One row per instance of a plan, in batch order: batch, phase, id, zone, domains, and
    /// whether it went first as unhealthy; then the skipped and protected ones.
    public static func plan(_ plan: UpgradePlan) -> [String] {
        struct Row { let batch: String; let phase: String; let id: Int; let zone: String; let fd: String; let ud: String; let note: String }
        var rows: [Row] = []
        for (i, batch) in plan.batches.enumerated() {
            for vm in batch.instances {
                rows.append(Row(batch: String(i + 1), phase: batch.phase.map(String.init) ?? "-", id: vm.id, zone: vm.zone ?? "-",
                                fd: String(vm.faultDomain), ud: String(vm.updateDomain), note: vm.unhealthy ? "unhealthy: goes first" : ""))
            }
        }
        for id in plan.skipped { rows.append(Row(batch: "-", phase: "-", id: id, zone: "-", fd: "-", ud: "-", note: "skipped (SkipUpgrade)")) }
        for id in plan.protected { rows.append(Row(batch: "-", phase: "-", id: id, zone: "-", fd: "-", ud: "-", note: "protected")) }
        return render(TextTable<Row> {
            [Column(title: "Batch", value: $0.batch, align: .right), Column(title: "Phase", value: $0.phase, align: .right),
             Column(title: "Id", value: $0.id, align: .right), Column(title: "Zone", value: $0.zone),
             Column(title: "FD", value: $0.fd, align: .right), Column(title: "UD", value: $0.ud, align: .right),
             Column(title: "Note", value: $0.note)]
        }, rows)
    }

    /// One row per scenario of `rehearse test`: its path, result, and expectations held and failed.
    public static func scenarios(_ outcomes: [JUnit.Scenario]) -> [String] {
        render(TextTable<JUnit.Scenario> { o in
            [Column(title: "Scenario", value: o.path),
             Column(title: "Result", value: o.error != nil ? "error" : o.results.contains { !$0.held } ? "failed" : "passed"),
             Column(title: "Held", value: o.results.count { $0.held }, align: .right),
             Column(title: "Failed", value: o.results.count { !$0.held }, align: .right),
             Column(title: "Seconds", value: String(format: "%.2f", o.seconds), align: .right)]
        }, outcomes)
    }

    /// One row per run of a sweep, by seed: outcome, error code, time to finish, lowest healthy,
    /// instance-seconds unavailable, expectations held, failed and left-behind counts.
    public static func runs(_ digests: [RunDigest]) -> [String] {
        render(TextTable<RunDigest> { d in
            [Column(title: "Seed", value: d.seed, align: .right), Column(title: "Outcome", value: d.code?.rawValue ?? "-"),
             Column(title: "Error code", value: d.errorCode?.rawValue ?? "-"),
             Column(title: "Finish (s)", value: d.timeToFinish.map { SweepText.figure($0) } ?? "-", align: .right),
             Column(title: "Lowest", value: d.lowestHealthy.map(String.init) ?? "-", align: .right),
             Column(title: "Unavailable (s)", value: d.unavailable.map { SweepText.figure($0) } ?? "-", align: .right),
             Column(title: "Held", value: "\(d.held.count(where: \.held))/\(d.held.count)", align: .right),
             Column(title: "Failed", value: d.failed.count, align: .right), Column(title: "Left behind", value: d.leftBehind.count, align: .right)]
        }, digests)
    }

    static func render<Row>(_ table: TextTable<Row>, _ rows: [Row]) -> [String] {
        (table.string(for: rows, style: Style.simple) ?? "").split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            .map { String($0.reversed().drop { $0 == " " }.reversed()) }.filter { !$0.isEmpty }
    }
}
