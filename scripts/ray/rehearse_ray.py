#!/usr/bin/env python3
"""Run rehearse's adaptive questions on a Ray cluster, byte-identical to one process.

    python scripts/ray/rehearse_ray.py [driver options] gate    SCENARIO --seeds A..B [sweep options]
    python scripts/ray/rehearse_ray.py [driver options] tune    SCENARIO --seeds A..B --vary ... [tune options]
    python scripts/ray/rehearse_ray.py [driver options] compare SCENARIO --seeds A..B --set ... [compare options]

First rehearse itself checks the question here, before any Ray work: the same command as the
tasks', for the first seed only. Input it refuses ends the driver as it ends one process: its
message on standard error, exit 2. Then every piece of work is a Ray Core task that runs the
rehearse CLI (retried when the process dies, never when rehearse refuses the input); its JSON
comes back through Ray's object store and `rehearse merge` or `rehearse tune --tell` combines
it. The driver judges nothing itself:

- gate: the sequential gate (`sweep --until-decided`) in rounds of whole 100-seed looks, each
  round's seeds sharded over the tasks; after each round `merge --until-decided` judges at the
  same seed counts as one process and the driver stops at the first round whose merge decides
  (or at the last seed). `--schedule` sizes the rounds (see gate_rounds).
- tune: `tune --state --ask` names a round's work, each item runs as
  `compare SCENARIO --set OVERRIDE… --seeds S --shard I/N --json`, `--tell` records it, and
  `--result` prints the search.
- compare: `compare --shard I/N --json` for every I, merged by `merge`.

The cluster is the one at --address (default: RAY_ADDRESS, else a local one started for the
run, on 127.0.0.1 only). Ray runs with a HOME and a RAY_TMPDIR of the driver's own, removed at
the end: no ~/.ray/auth_token is read or left behind. A local cluster gets a fresh token; to
join a cluster with token authentication pass its token as RAY_AUTH_MODE=token with
RAY_AUTH_TOKEN or RAY_AUTH_TOKEN_PATH (as KubeRay does). Exit statuses are one process's: 0
passed, 1 a requirement failed, 2 bad input; a failure of Ray or of the driver is one line on
standard error and exit 2.
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

from ray_session import DriverFailure, Refused, first_line, own_ray

LOOK_EVERY = 100  # the gate's looks: every 100 seeds, as rehearse's Tune.lookEvery
NAME = "rehearse_ray.py"
# Options of one process the driver sets for every task itself: refused, never dropped.
SET_BY_DRIVER = {
    "--jobs": "--tasks N (each task runs --jobs 1)",
    "--shard": "the whole question (the driver shards it)",
    "--runs": "the merged report (no run lines)",
    "--report": "the merged report (no HTML page)",
    "--state": "the whole question (the driver keeps the search's state)",
    "--tell": "the whole question (the driver keeps the search's state)",
    "--parts": "--tasks N",
}
DRIVER_FLAGS = {"--ask": "the whole question (the driver asks)", "--result": "the whole question (the driver prints the result)"}


class RehearseDied(Exception):
    """rehearse ended without a status of its own (a signal, a lost node): worth a retry."""


def run_rehearse(binary, args, cwd):
    """A task: `binary args` in cwd; (status, stdout, stderr) for rehearse's statuses 0, 1, 2."""
    done = subprocess.run([binary] + args, cwd=cwd, capture_output=True)
    if done.returncode in (0, 1, 2):
        return done.returncode, done.stdout, done.stderr
    # A task runs on any node, where only this function travels: no helper of another module here.
    said = done.stderr.decode(errors="replace").strip().splitlines() or ["(no message)"]
    raise RehearseDied(f"rehearse {' '.join(args[:2])} … ended with status {done.returncode}: {said[0]}")


def checked(done):
    """(status, stdout) of a finished rehearse: exit 2 is Refused, a status not rehearse's fails."""
    status, stdout, stderr = done
    if status == 2:
        raise Refused(stderr)
    if status not in (0, 1):
        raise DriverFailure(f"rehearse ended with status {status}: {first_line(stderr.decode(errors='replace'))}")
    return status, stdout


def here(binary, args):
    """Runs rehearse here: (status, stdout, stderr); exit 2 is Refused, a status not rehearse's fails."""
    try:
        done = subprocess.run([binary] + args, capture_output=True)
    except OSError as error:
        raise DriverFailure(f"the rehearse binary {binary}: {error.strerror} (set it with --rehearse or REHEARSE)") from None
    return checked((done.returncode, done.stdout, done.stderr)) + (done.stderr,)


def local(binary, args):
    """Runs rehearse here (merge, tune --ask/--tell/--result, a look again); (status, stdout)."""
    return here(binary, args)[:2]


def option(args, name):
    """The value of the last `--name V` or `--name=V` in args (the one rehearse takes), or None."""
    found = None
    for i, arg in enumerate(args):
        if arg == name and i + 1 < len(args):
            found = args[i + 1]
        elif arg.startswith(name + "="):
            found = arg[len(name) + 1:]
    return found


def without(args, names, flags=()):
    """args less the options in names (each with its value) and the flags."""
    kept, skip = [], False
    for arg in args:
        if skip:
            skip = False
        elif arg in names:
            skip = True
        elif arg in flags or any(arg.startswith(n + "=") for n in names):
            continue
        else:
            kept.append(arg)
    return kept


def refuse_driver_options(args):
    """Options the driver sets itself, given anyway: refused (exit 2), never silently dropped."""
    for arg in args:
        name = arg.split("=", 1)[0]
        allowed = SET_BY_DRIVER.get(name) or DRIVER_FLAGS.get(arg)
        if allowed:
            raise DriverFailure(f"{name}: the driver sets it for every task; allowed instead: {allowed}")
    if option(args, "--output") == "table":
        raise DriverFailure("--output table: the driver prints the merged report; allowed --output text or --output json")


def shown(args):
    """The output options of the question (--json, --output V) for the printed result."""
    out = ["--json"] if "--json" in args else []
    return out + (["--output", option(args, "--output")] if option(args, "--output") else [])


def seed_range(args):
    """--seeds as rehearse reads it (A..B or one seed; default 0..99); None when it is not one."""
    text = option(args, "--seeds") or "0..99"
    first, dots, last = text.partition("..")
    try:
        return int(first), int(last if dots else first)
    except ValueError:
        return None


def check_question(binary, question, args):
    """rehearse checks the whole question here, for its first seed only (as --shard 1/K of K
    seeds): what it refuses, one process refuses with the same message, before Ray starts; the
    scenario's warnings it prints are one process's."""
    seeds = seed_range(args)
    count = max(1, min(1_000_000, seeds[1] - seeds[0] + 1)) if seeds else 1
    command = {"gate": ["sweep"] + without(args, [], ["--until-decided"]) + ["--until-decided"], "tune": ["tune"] + args,
               "compare": ["compare"] + args}[question]
    warnings = here(binary, command + ["--shard", f"1/{count}", "--json", "--jobs", "1"])[2]
    sys.stderr.buffer.write(warnings)
    sys.stderr.flush()
    if seeds is None or seeds[0] > seeds[1]:
        raise DriverFailure(f"--seeds {option(args, '--seeds')}: rehearse took it but the driver cannot split it; allowed A..B")
    return warnings


def failing_seed(done):
    """The seed a refusal names (`rehearse: error: seed N: …`, rehearse's lowest failing seed in
    that task), else None."""
    match = re.search(rb"^rehearse: error: seed (\d+): ", done[2], re.MULTILINE)
    return int(match.group(1)) if match else None


def refusal(results):
    """Of the tasks' results, the refusal to report: the one naming the lowest failing seed (one
    process names its lowest), else the first refused; None when none refused."""
    refused = [done for done in results if done[0] == 2]
    named = [done for done in refused if failing_seed(done) is not None]
    return min(named, key=failing_seed) if named else (refused[0] if refused else None)


def gather(ray, refs, folder, stem):
    """The tasks' outputs written to files in folder, in the order of refs; a refusal is Refused."""
    paths, results = [], ray.get(refs)
    if refusal(results):
        checked(refusal(results))
    for i, done in enumerate(results):
        _, output = checked(done)
        path = os.path.join(folder, f"{stem}-{i:05d}.json")
        with open(path, "wb") as f:
            f.write(output)
        paths.append(path)
    return paths


def gate_rounds(first, last, tasks, schedule):
    """The sequential gate's rounds: (A, B, shards) for each, covering first..last in order.

    A round covers whole looks (LOOK_EVERY seeds each) and is cut into shards, one task each.
    - split: one look a round, cut over the tasks: the runs one process makes, most rounds;
    - blocks: one look per task a round: fewest rounds, up to tasks - 1 looks past the verdict;
    - doubling (the default): 1, 2, 4, … looks a round, then one look per task: the runs past
      the verdict stay under the runs before it, the rounds near those of blocks.
    """
    start, looks = first, 1 if schedule != "blocks" else tasks
    while start <= last:
        end = min(last, start + looks * LOOK_EVERY - 1)
        yield start, end, max(1, min(tasks, end - start + 1))
        start = end + 1
        if schedule == "doubling":
            looks = min(tasks, looks * 2)


def decided(merged):
    """Whether `merge --until-decided --json` decided every requirement (none `undecided`)."""
    try:
        return all(r["verdict"] != "undecided" for r in json.loads(merged)["requirements"])
    except (ValueError, KeyError, TypeError) as error:
        raise DriverFailure(f"rehearse merge --until-decided --json printed no requirements' verdicts ({error})") from None


def gate(ray, task, binary, args, folder, tasks, schedule, stats):
    first, last = seed_range(args)
    work = without(args, ["--seeds", "--output"], ["--json", "--until-decided"])
    parts, runs, rounds = [], 0, 0
    for a, b, shards in gate_rounds(first, last, tasks, schedule):
        refs = [task.remote(binary, ["sweep"] + work + ["--seeds", f"{a}..{b}", "--shard", f"{i}/{shards}", "--until-decided",
                                                        "--json", "--jobs", "1"], os.getcwd()) for i in range(1, shards + 1)]
        runs, rounds = runs + b - a + 1, rounds + 1
        try:
            parts += gather(ray, refs, folder, f"gate-{a}")
        except Refused:
            replay_looks(binary, work, parts, folder, a, b)
            break
        _, judged = local(binary, ["merge", "--until-decided", "--json"] + parts)
        if decided(judged) or b >= last:
            break
    stats.append(f"gate_schedule={schedule} gate_rounds={rounds} gate_runs={runs} gate_tasks={tasks}")
    return local(binary, ["merge", "--until-decided"] + shown(args) + parts)


def replay_looks(binary, work, parts, folder, a, b):
    """A round of the gate in which rehearse refused a seed (a script error): its looks again, here,
    one at a time as one process runs them. A look that fails is one process's refusal (rehearse
    names its lowest failing seed, whatever the jobs); a look whose merge decides ends the gate
    before the seed that failed, as one process stops there. Either way parts ends where one
    process would."""
    for start in range(a, b + 1, LOOK_EVERY):
        _, output = local(binary, ["sweep"] + work + ["--seeds", f"{start}..{min(b, start + LOOK_EVERY - 1)}", "--shard", "1/1",
                                                      "--until-decided", "--json"])
        parts.append(os.path.join(folder, f"gate-{start}-look.json"))
        with open(parts[-1], "wb") as f:
            f.write(output)
        if decided(local(binary, ["merge", "--until-decided", "--json"] + parts)[1]):
            return
    raise DriverFailure(f"seeds {a}..{b}: a task refused a seed that rehearse, run here look by look, did not refuse")


def tune(ray, task, binary, args, folder, parts):
    state = os.path.join(folder, "tune-state.json")
    asking = without(args, [], ["--json"])
    scenario_args = without(asking, ["--vary", "--minimize", "--maximize", "--seeds"])
    round_number = 0
    while True:
        _, asked = local(binary, ["tune"] + asking + ["--state", state, "--ask", "--parts", str(parts)])
        work = json.loads(asked)
        if work["done"]:
            return local(binary, ["tune"] + asking + ["--state", state, "--result"] + shown(args))
        refs = []
        for item in work["work"]:
            sets = [a for o in item["overrides"] for a in ("--set", o)]
            refs.append(task.remote(binary, ["compare"] + scenario_args + sets + ["--seeds", item["seeds"], "--shard", item["shard"],
                                                                                  "--json", "--jobs", "1"], os.getcwd()))
        told = gather(ray, refs, folder, f"tune-{round_number:04d}")
        local(binary, ["tune"] + asking + ["--state", state, "--tell"] + told)
        round_number += 1


def compare(ray, task, binary, args, folder, shards):
    work = without(args, ["--output"], ["--json"])
    refs = [task.remote(binary, ["compare"] + work + ["--shard", f"{i}/{shards}", "--json", "--jobs", "1"], os.getcwd())
            for i in range(1, shards + 1)]
    return local(binary, ["merge"] + shown(args) + gather(ray, refs, folder, "compare"))


def tasks_count(text):
    """--tasks: a whole number from 1 to 100,000 (0: the cluster's CPUs)."""
    try:
        value = int(text)
    except ValueError:
        value = -1
    if not 0 <= value <= 100_000:
        raise argparse.ArgumentTypeError(f"'{text}' is not a count of tasks; allowed 1 to 100000 (0: the cluster's CPUs)")
    return value


def parser():
    parser = argparse.ArgumentParser(prog=NAME, description=__doc__.split("\n\n")[0])
    parser.add_argument("--address", default=os.environ.get("RAY_ADDRESS") or None,
                        help="the Ray cluster, HOST:PORT (default: RAY_ADDRESS, else a local one on 127.0.0.1 for this run)")
    parser.add_argument("--rehearse", default=os.environ.get("REHEARSE", "rehearse"),
                        help="the rehearse binary, the same path on every node (default: REHEARSE, else rehearse on PATH)")
    parser.add_argument("--tasks", type=tasks_count, default=0,
                        help="tasks per wave (gate), shards per candidate's block (tune) or shards (compare); default: the cluster's CPUs")
    parser.add_argument("--schedule", choices=["doubling", "split", "blocks"], default="doubling",
                        help="gate: looks a round: 1, 2, 4, … up to one per task (doubling), one (split) or one per task (blocks)")
    parser.add_argument("--stats", action="store_true", help="gate: print its rounds and runs to standard error as key=value")
    parser.add_argument("question", choices=["gate", "tune", "compare"])
    parser.add_argument("args", nargs=argparse.REMAINDER, help="the rehearse options, the scenario first")
    return parser


def run(given):
    """The question's (status, stdout) and the --stats lines; raises Refused or DriverFailure."""
    found = given.rehearse if os.sep in given.rehearse else shutil.which(given.rehearse)
    if not found:
        raise DriverFailure(f"the rehearse binary {given.rehearse}: not found on PATH (set it with --rehearse or REHEARSE)")
    binary = os.path.abspath(found)
    if given.address in ("auto", "local"):
        raise DriverFailure(f"--address {given.address}: the driver runs Ray with a temp dir of its own, where no cluster is "
                            "found; allowed: HOST:PORT of the cluster's GCS, or none for a local one")
    refuse_driver_options(given.args)
    warned = check_question(binary, given.question, given.args)
    try:
        return on_ray(given, binary)
    except Refused as refusal:  # the scenario's warnings, printed by the check, once as one process prints them
        if warned and refusal.stderr.startswith(warned):
            refusal.stderr = refusal.stderr[len(warned):]
        raise


def on_ray(given, binary):
    """The question on Ray, checked: (status, stdout, --stats lines)."""
    stats = []
    with tempfile.TemporaryDirectory(prefix="rehearse-ray-", ignore_cleanup_errors=True) as folder, own_ray(given.address, folder) as ray:
        task = ray.remote(max_retries=3, retry_exceptions=[RehearseDied])(run_rehearse)
        tasks = given.tasks or max(1, int(ray.cluster_resources().get("CPU", 1)))
        parts = os.path.join(folder, "parts")
        os.mkdir(parts)
        if given.question == "gate":
            status, output = gate(ray, task, binary, given.args, parts, tasks, given.schedule, stats)
        elif given.question == "tune":
            status, output = tune(ray, task, binary, given.args, parts, tasks)
        else:
            status, output = compare(ray, task, binary, given.args, parts, tasks)
    return status, output, stats if given.stats else []


def main(argv=None):
    given = parser().parse_args(argv)
    try:
        status, output, stats = run(given)
    except Refused as refusal:
        sys.stderr.buffer.write(refusal.stderr)
        sys.stderr.flush()
        return 2
    except DriverFailure as failure:
        print(f"{NAME}: {failure}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"{NAME}: interrupted", file=sys.stderr)
        return 130
    except Exception as error:  # the driver's own fault: still one line, never a traceback
        print(f"{NAME}: {type(error).__name__}: {first_line(error)}", file=sys.stderr)
        return 2
    for line in stats:
        print(line, file=sys.stderr)
    sys.stdout.buffer.write(output)
    sys.stdout.flush()
    return status


if __name__ == "__main__":
    sys.exit(main())
