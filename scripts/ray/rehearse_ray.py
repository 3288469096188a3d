#!/usr/bin/env python3
"""Run rehearse's adaptive questions on a Ray cluster, byte-identical to one process.

    python scripts/ray/rehearse_ray.py [driver options] gate    SCENARIO --seeds A..B [sweep options]
    python scripts/ray/rehearse_ray.py [driver options] tune    SCENARIO --seeds A..B --vary ... [tune options]
    python scripts/ray/rehearse_ray.py [driver options] compare SCENARIO --seeds A..B --set ... [compare options]

Every piece of work is a Ray Core task that runs the rehearse CLI (retried when the process
dies, never when rehearse refuses the input with exit 2); its JSON comes back through Ray's
object store and the driver combines it with `rehearse merge` or `rehearse tune --tell`:

- gate: the sequential gate (`sweep --until-decided`) in rounds of whole 100-seed looks, each
  round's seeds sharded over the tasks; after each round `merge --until-decided` judges at the
  same seed counts as one process and the driver stops at the first round whose merge decides
  (or at the last seed). `--schedule` sizes the rounds (see gate_rounds).
- tune: `tune --state --ask` names a round's work, each item runs as
  `compare SCENARIO --set OVERRIDE… --seeds S --shard I/N --json`, `--tell` records it, and
  `--result` prints the search.
- compare: `compare --shard I/N --json` for every I, merged by `merge`.

The cluster is the one at --address (default: RAY_ADDRESS, else a local one started for the
run). As a KubeRay RayJob entrypoint the same command runs unchanged (RAY_ADDRESS is set).
The driver prints what one process prints (pass --json for JSON) and exits with its status.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile

import ray

LOOK_EVERY = 100  # the gate's looks: every 100 seeds, as rehearse's Tune.lookEvery


class RehearseDied(Exception):
    """rehearse ended without a status of its own (a signal, a lost node): worth a retry."""


class RehearseRefused(Exception):
    """rehearse refused the work (exit 2): the same input would be refused again."""


@ray.remote(max_retries=3, retry_exceptions=[RehearseDied])
def run_rehearse(binary, args, cwd):
    """Runs `binary args` in `cwd`; its standard output as bytes, through the object store."""
    done = subprocess.run([binary] + args, cwd=cwd, capture_output=True)
    if done.returncode in (0, 1):
        return done.stdout
    message = f"rehearse {' '.join(args)}: exit {done.returncode}: {done.stderr.decode(errors='replace').strip()}"
    if done.returncode == 2:
        raise RehearseRefused(message)
    raise RehearseDied(message)


def local(binary, args, check=True):
    """Runs rehearse here (merge, tune --ask/--tell/--result); (status, stdout bytes)."""
    done = subprocess.run([binary] + args, capture_output=True)
    if check and done.returncode not in (0, 1):
        sys.stderr.write(done.stderr.decode(errors="replace"))
        sys.exit(done.returncode or 2)
    return done.returncode, done.stdout


def option(args, name):
    """The value of `--name V` or `--name=V` in args, or None."""
    for i, arg in enumerate(args):
        if arg == name and i + 1 < len(args):
            return args[i + 1]
        if arg.startswith(name + "="):
            return arg[len(name) + 1:]
    return None


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


def seed_range(args):
    text = option(args, "--seeds") or "0..99"
    first, _, last = text.partition("..")
    return int(first), int(last or first)


def gather(refs, folder, stem):
    """The tasks' outputs written to files in folder, in the order of refs."""
    paths = []
    for i, output in enumerate(ray.get(refs)):
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


def gate(binary, args, folder, tasks, schedule, stats):
    first, last = seed_range(args)
    work = without(args, ["--seeds", "--jobs", "--shard", "--runs", "--report", "--output"], ["--json", "--until-decided"])
    shown = ["--json"] if "--json" in args else []
    parts, runs, rounds = [], 0, 0
    for a, b, shards in gate_rounds(first, last, tasks, schedule):
        refs = [run_rehearse.remote(binary, ["sweep"] + work + ["--seeds", f"{a}..{b}", "--shard", f"{i}/{shards}", "--until-decided",
                                                                 "--json", "--jobs", "1"], os.getcwd()) for i in range(1, shards + 1)]
        parts += gather(refs, folder, f"gate-{a}")
        runs, rounds = runs + b - a + 1, rounds + 1
        _, judged = local(binary, ["merge", "--until-decided", "--json"] + parts)
        verdicts = [r["verdict"] for r in json.loads(judged)["requirements"]]
        if "undecided" not in verdicts or b >= last:
            break
    if stats:
        sys.stderr.write(f"gate_schedule={schedule} gate_rounds={rounds} gate_runs={runs} gate_tasks={tasks}\n")
    return local(binary, ["merge", "--until-decided"] + shown + parts)


def tune(binary, args, folder, parts):
    state = os.path.join(folder, "tune-state.json")
    asking = without(args, ["--jobs", "--report", "--state", "--parts", "--shard"], ["--json", "--ask", "--result"])
    scenario_args = without(asking, ["--vary", "--minimize", "--maximize", "--seeds"])
    round_number = 0
    while True:
        _, asked = local(binary, ["tune"] + asking + ["--state", state, "--ask", "--parts", str(parts)])
        work = json.loads(asked)
        if work["done"]:
            shown = ["--json"] if "--json" in args else []
            return local(binary, ["tune"] + asking + ["--state", state, "--result"] + shown, check=False)
        refs = []
        for item in work["work"]:
            sets = [a for o in item["overrides"] for a in ("--set", o)]
            refs.append(run_rehearse.remote(binary, ["compare"] + scenario_args + sets + ["--seeds", item["seeds"], "--shard", item["shard"],
                                                                                          "--json", "--jobs", "1"], os.getcwd()))
        told = gather(refs, folder, f"tune-{round_number:04d}")
        local(binary, ["tune"] + asking + ["--state", state, "--tell"] + told)
        round_number += 1


def compare(binary, args, folder, shards):
    work = without(args, ["--jobs", "--report", "--shard", "--output"], ["--json"])
    refs = [run_rehearse.remote(binary, ["compare"] + work + ["--shard", f"{i}/{shards}", "--json", "--jobs", "1"], os.getcwd())
            for i in range(1, shards + 1)]
    paths = gather(refs, folder, "compare")
    shown = ["--json"] if "--json" in args else []
    return local(binary, ["merge"] + shown + paths, check=False)


def tasks_count(text):
    """--tasks: a whole number from 1 to 100,000 (0: the cluster's CPUs)."""
    try:
        value = int(text)
    except ValueError:
        value = -1
    if not 0 <= value <= 100_000:
        raise argparse.ArgumentTypeError(f"'{text}' is not a count of tasks; allowed 1 to 100000 (0: the cluster's CPUs)")
    return value


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--address", default=os.environ.get("RAY_ADDRESS"),
                        help="the Ray cluster (default: RAY_ADDRESS, else a local one for this run)")
    parser.add_argument("--rehearse", default=os.environ.get("REHEARSE", "rehearse"),
                        help="the rehearse binary, the same path on every node (default: REHEARSE, else rehearse on PATH)")
    parser.add_argument("--tasks", type=tasks_count, default=0,
                        help="tasks per wave (gate), shards per candidate's block (tune) or shards (compare); default: the cluster's CPUs")
    parser.add_argument("--schedule", choices=["doubling", "split", "blocks"], default="doubling",
                        help="gate: looks a round: 1, 2, 4, … up to one per task (doubling), one (split) or one per task (blocks)")
    parser.add_argument("--stats", action="store_true", help="gate: print its rounds and runs to standard error as key=value")
    parser.add_argument("question", choices=["gate", "tune", "compare"])
    parser.add_argument("args", nargs=argparse.REMAINDER, help="the rehearse options, the scenario first")
    given = parser.parse_args()
    binary = given.rehearse if os.sep not in given.rehearse else os.path.abspath(given.rehearse)
    ray.init(address=given.address, log_to_driver=False, logging_level="WARNING")
    tasks = given.tasks or max(1, int(ray.cluster_resources().get("CPU", 1)))
    with tempfile.TemporaryDirectory(prefix="rehearse-ray-") as folder:
        if given.question == "gate":
            status, output = gate(binary, given.args, folder, tasks, given.schedule, given.stats)
        elif given.question == "tune":
            status, output = tune(binary, given.args, folder, tasks)
        else:
            status, output = compare(binary, given.args, folder, tasks)
    sys.stdout.buffer.write(output)
    sys.stdout.flush()
    return status


if __name__ == "__main__":
    sys.exit(main())
