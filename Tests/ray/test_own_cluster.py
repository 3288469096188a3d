"""A real Ray on 127.0.0.1: the driver's own local cluster listens on loopback only and leaves the
user's HOME alone; a stale ~/.ray/auth_token changes no byte of a result; a script error is met
where one process meets it; local_cluster.py stops its own cluster and leaves another one running. Each run is compared with one rehearse process.
(Before: Ray listened on every interface, the driver wrote ~/.ray/auth_token, a token left there
made the next `ray start --head` demand it from nodes that never read it, and .ci/ray's
`ray stop --force` ended every Ray cluster of the machine.)"""
import os
import shutil
import subprocess
import sys
import time
import unittest

from ray_support import CLUSTER, HOOKS, driver, has_ray, one_process, processes_under, rehearse_binary, short_folder

STALE = b"0123456789abcdef" * 4  # a token an earlier cluster left: this run's clusters never had it
HOOK_GATE = [HOOKS, "--seeds", "0..999", "--require", "defaultAction <= 5%", "--require", "hookRejected <= 20%", "--json"]
COMPARE = ["scripts/risk-gate.lua", "--set", "param.failureRate=0.05,0.1", "--seeds", "0..99", "--json"]


def cluster_module():
    import local_cluster
    return local_cluster


@unittest.skipUnless(rehearse_binary() and has_ray(), "needs the rehearse binary (REHEARSE) and ray")
class OwnCluster(unittest.TestCase):
    def setUp(self):
        self.folder = short_folder()
        self.home = os.path.join(self.folder, "user")
        os.makedirs(self.home)

    def tearDown(self):
        for root, keeper, log in getattr(self, "keepers", []):
            cluster_module().stop(root)
            keeper.wait(timeout=30)
            log.close()
        shutil.rmtree(self.folder, ignore_errors=True)

    def plant_stale_token(self):
        os.makedirs(os.path.join(self.home, ".ray"))
        with open(os.path.join(self.home, ".ray", "auth_token"), "wb") as f:
            f.write(STALE)

    def home_files(self):
        return sorted(os.path.relpath(os.path.join(d, f), self.home) for d, _, files in os.walk(self.home) for f in files)

    def test_a_local_run_listens_on_loopback_only_and_a_stale_token_in_home_changes_no_byte(self):
        local_cluster = cluster_module()
        self.plant_stale_token()
        run = driver(["gate"] + HOOK_GATE, env={"HOME": self.home, "TMPDIR": self.folder, "RAY_ADDRESS": ""}, background=True)
        sockets = set()
        while run.poll() is None:
            sockets.update(local_cluster.listening(processes_under(self.folder) + [run.pid]))
            time.sleep(0.3)
        stdout, stderr = run.communicate()
        # The sequential gate on hook measures (a part carries them): one process fails it, so does Ray.
        one = one_process("sweep", HOOK_GATE + ["--until-decided"])
        self.assertEqual(one[0], 1)
        self.assertEqual((run.returncode, stdout, stderr), one)
        names = {name for _, _, _, name in sockets}
        self.assertTrue({"gcs_server", "raylet"} <= names, names)
        self.assertEqual([s for s in sockets if s[0] not in local_cluster.LOOPBACK_HEX], [])
        # The stale token is neither used (the run worked) nor replaced, and nothing else lands in HOME.
        with open(os.path.join(self.home, ".ray", "auth_token"), "rb") as f:
            self.assertEqual(f.read(), STALE)
        self.assertEqual(self.home_files(), [os.path.join(".ray", "auth_token")])
        self.assertEqual(processes_under(self.folder), [])
        self.assertEqual([f for f in os.listdir(self.folder) if f != "user"], [])

    def test_a_script_error_past_the_deciding_look_is_not_reached_and_one_inside_it_is_one_process_refusal(self):
        late = "Tests/ray/fixtures/late-error.lua"
        self.assertEqual(one_process("sweep", [late, "--seeds", "0..399"])[2].splitlines()[-1][:26], b"rehearse: error: seed 333:")
        env = {"HOME": self.home, "RAY_ADDRESS": ""}
        # One process decides at its first look (seeds 0..99) and never runs seed 333; the driver's
        # one round of 4 looks (0..399) meets it, runs its looks again here and stops where one process does.
        gate = [late, "--seeds", "0..999", "--require", "Faulted <= 50%", "--json"]
        one = one_process("sweep", gate + ["--until-decided"])
        self.assertEqual(one[0], 0)
        self.assertEqual(driver(["--schedule", "blocks", "--tasks", "4", "gate"] + gate, env=env), one)
        # From seed 300 on, the first look holds seed 333: exit 2 and rehearse's message, the warning once.
        gate[2] = "300..999"
        one = one_process("sweep", gate + ["--until-decided"])
        self.assertEqual(one[0], 2)
        self.assertEqual(driver(["gate"] + gate, env=env), one)

    def test_a_rehearse_that_dies_in_every_task_is_one_line_exit_2(self):
        # rehearse answers the driver's own check (--shard 1/100) but is killed by SIGKILL in every task:
        # Ray retries each task 3 times, then the driver ends with one line and exit 2, no traceback.
        wrapper = os.path.join(self.folder, "rehearse")
        with open(wrapper, "w") as f:
            f.write(f'#!/bin/sh\ncase " $* " in *" 1/100 "*) exec "{rehearse_binary()}" "$@";; esac\nkill -9 $$\n')
        os.chmod(wrapper, 0o755)
        status, stdout, stderr = driver(["--rehearse", wrapper, "compare"] + COMPARE[:-1], env={"HOME": self.home, "RAY_ADDRESS": ""})
        lines = stderr.decode().splitlines()
        self.assertEqual((status, stdout, len(lines)), (2, b"", 1), stderr)
        self.assertTrue(lines[0].startswith("rehearse_ray.py: the run on the Ray cluster started here: RehearseDied: "), lines[0])
        self.assertIn("ended with status -9", lines[0])
        log = lines[0].rsplit("Ray's log: ", 1)[1].rstrip(")")
        self.assertTrue(os.path.isfile(log), log)
        os.remove(log)
        self.assertEqual(self.home_files(), [])  # its local cluster's token stayed in the driver's own HOME

    def start(self, name, nodes):
        root, log = os.path.join(self.folder, name), open(os.path.join(self.folder, name + ".log"), "wb")
        keeper = subprocess.Popen([sys.executable, CLUSTER, "start", root, "--nodes", str(nodes)], env=dict(os.environ, HOME=self.home),
                                  stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=log)
        self.keepers = getattr(self, "keepers", []) + [(root, keeper, log)]
        return root

    def address(self, root):
        deadline = time.monotonic() + 120
        while not os.path.exists(os.path.join(root, "address")):
            self.assertLess(time.monotonic(), deadline, f"{root}: no cluster after 120 s")
            time.sleep(0.3)
        with open(os.path.join(root, "address")) as f:
            return f.read().strip()

    def test_stop_ends_its_own_cluster_and_a_join_with_a_stale_home_token_gives_one_process_bytes(self):
        local_cluster = cluster_module()
        self.plant_stale_token()
        mine, other = self.start("mine", 1), self.start("other", 2)
        self.address(mine)
        address = self.address(other)
        self.assertTrue(address.startswith("127.0.0.1:"), address)
        mine_pids, other_pids = local_cluster.processes(mine), local_cluster.processes(other)
        self.assertTrue(mine_pids and other_pids)
        self.assertFalse(set(mine_pids) & set(other_pids))
        self.assertEqual(local_cluster.exposed(mine_pids + other_pids), [])

        stopped = subprocess.run([sys.executable, CLUSTER, "stop", mine], capture_output=True)
        self.assertEqual(stopped.returncode, 0, stopped.stderr)
        self.assertEqual(local_cluster.processes(mine), [])
        self.assertEqual(local_cluster.processes(other), other_pids)

        # The other cluster still answers: joined with its own token; the stale one in HOME is never read.
        join = {"HOME": self.home, "TMPDIR": self.folder, "RAY_ADDRESS": address, "RAY_AUTH_MODE": "token",
                "RAY_AUTH_TOKEN_PATH": os.path.join(other, "token")}
        status, stdout, stderr = driver(["--tasks", "2", "compare"] + COMPARE, env=join)
        self.assertEqual((status, stdout, stderr), one_process("compare", COMPARE))
        self.assertEqual(self.home_files(), [os.path.join(".ray", "auth_token")])
        self.assertEqual(local_cluster.stop(other), [])


if __name__ == "__main__":
    unittest.main()
