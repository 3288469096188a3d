"""The driver ends as one rehearse process ends: a refused question is exit 2 with rehearse's own
message, byte for byte, and no Ray started; a failure of the driver or of Ray is one line, exit 2.
(Before: a Python traceback and exit 1, the status of a failed gate.)"""
import os
import socket
import unittest

from ray_support import driver, has_ray, one_process, rehearse_binary

GATE = ["--require", "Faulted <= 5%"]


@unittest.skipUnless(rehearse_binary() and has_ray(), "needs the rehearse binary (REHEARSE) and ray")
class RefusedQuestions(unittest.TestCase):
    def assert_refused_as_one_process(self, question, args):
        one = one_process({"gate": "sweep"}.get(question, question), args + (["--until-decided"] if question == "gate" else []))
        status, stdout, stderr = driver([question] + args, env={"RAY_ADDRESS": ""})
        self.assertEqual(one[0], 2, one[2])
        self.assertEqual((status, stdout, stderr), (2, b"", one[2]))
        self.assertNotIn(b"Traceback", stderr)

    def test_a_scenario_that_does_not_exist(self):
        self.assert_refused_as_one_process("gate", ["scripts/no-such-scenario.lua", "--seeds", "0..999"] + GATE)

    def test_a_bad_requirement(self):
        self.assert_refused_as_one_process("gate", ["scripts/risk-gate.lua", "--seeds", "0..999", "--require", "Faulted <== 5%"])

    def test_bad_seeds(self):
        for seeds in ["abc", "9..2", "0..1000000", "-1..5"]:
            with self.subTest(seeds=seeds):
                self.assert_refused_as_one_process("gate", ["scripts/risk-gate.lua", "--seeds", seeds] + GATE)

    def test_an_unknown_option_and_a_bad_override(self):
        self.assert_refused_as_one_process("gate", ["scripts/risk-gate.lua", "--bogus"] + GATE)
        self.assert_refused_as_one_process("compare", ["scripts/risk-gate.lua", "--set", "param.failureRate=x"])
        self.assert_refused_as_one_process("tune", ["scripts/risk-gate.lua", "--vary", "nosuch.field=1,2", "--require", "Faulted <= 5%"])

    def test_a_gate_without_a_requirement(self):
        self.assert_refused_as_one_process("gate", ["Tests/ray/fixtures/hook-defaults.lua", "--seeds", "0..99"])


@unittest.skipUnless(rehearse_binary() and has_ray(), "needs the rehearse binary (REHEARSE) and ray")
class DriverFailures(unittest.TestCase):
    def assert_one_line(self, args, expected, env=None):
        status, stdout, stderr = driver(args, env=env)
        self.assertEqual(status, 2, stderr)
        self.assertEqual(stdout, b"")
        lines = stderr.decode().splitlines()
        self.assertEqual(len(lines), 1, stderr)
        self.assertTrue(lines[0].startswith("rehearse_ray.py: "), lines[0])
        self.assertIn(expected, lines[0])

    def test_a_cluster_nobody_listens_at(self):
        with socket.socket() as s:  # a port of 127.0.0.1 that was free a moment ago
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        self.assert_one_line(["gate", "scripts/risk-gate.lua", "--seeds", "0..99"] + GATE, f"127.0.0.1:{port}: cannot connect",
                             env={"RAY_ADDRESS": f"127.0.0.1:{port}"})

    def test_a_missing_binary(self):
        self.assert_one_line(["--rehearse", "/nonexistent/rehearse", "gate", "scripts/risk-gate.lua"] + GATE, "/nonexistent/rehearse")

    def test_options_the_driver_sets_are_refused_not_dropped(self):
        for option in ["--jobs", "--shard", "--runs", "--report"]:
            with self.subTest(option=option):
                self.assert_one_line(["gate", "scripts/risk-gate.lua", option, "4"] + GATE, f"{option}: the driver sets it")
        self.assert_one_line(["compare", "scripts/risk-gate.lua", "--set", "param.failureRate=0.1", "--output", "table"], "--output table")

    def test_the_address_auto_is_refused(self):
        self.assert_one_line(["--address", "auto", "gate", "scripts/risk-gate.lua"] + GATE, "--address auto")


class StatusesFromParts(unittest.TestCase):
    """What decides the driver's exit: rehearse's status through `checked`, merge's verdicts."""

    def test_checked_passes_0_and_1_and_refuses_2(self):
        import rehearse_ray
        self.assertEqual(rehearse_ray.checked((1, b"out", b"")), (1, b"out"))
        with self.assertRaises(rehearse_ray.Refused) as refused:
            rehearse_ray.checked((2, b"", b"rehearse: error: x\n"))
        self.assertEqual(refused.exception.stderr, b"rehearse: error: x\n")
        with self.assertRaises(rehearse_ray.DriverFailure):
            rehearse_ray.checked((-9, b"", b""))

    def test_of_several_refused_tasks_the_lowest_failing_seed_is_reported(self):
        import rehearse_ray
        warning = b"rehearse: warning: s.lua: no health(...) function\n"
        results = [(0, b"{}", b""), (2, b"", warning + b"rehearse: error: seed 340: boom\n"),
                   (2, b"", b"rehearse: error: s.lua: cannot load\n"), (2, b"", warning + b"rehearse: error: seed 333: boom\n")]
        self.assertEqual(rehearse_ray.refusal(results), results[3])
        self.assertEqual(rehearse_ray.refusal(results[:3]), results[1])
        self.assertEqual(rehearse_ray.refusal([results[0], results[2]]), results[2])
        self.assertIsNone(rehearse_ray.refusal([results[0]]))

    def test_the_last_seeds_given_count_as_for_rehearse(self):
        import rehearse_ray
        args = ["s.lua", "--seeds", "0..9", "--seeds=5..7", "--set", "a=1"]
        self.assertEqual(rehearse_ray.option(args, "--seeds"), "5..7")
        self.assertEqual(rehearse_ray.seed_range(args), (5, 7))
        self.assertEqual(rehearse_ray.seed_range(["s.lua", "--seeds", "12"]), (12, 12))
        self.assertEqual(rehearse_ray.seed_range(["s.lua"]), (0, 99))
        self.assertIsNone(rehearse_ray.seed_range(["s.lua", "--seeds", "x..3"]))

    def test_decided_reads_merges_verdicts(self):
        import rehearse_ray
        self.assertTrue(rehearse_ray.decided(b'{"requirements": [{"verdict": "held"}, {"verdict": "failed"}]}'))
        self.assertFalse(rehearse_ray.decided(b'{"requirements": [{"verdict": "held"}, {"verdict": "undecided"}]}'))
        with self.assertRaises(rehearse_ray.DriverFailure):
            rehearse_ray.decided(b"{}")


if __name__ == "__main__":
    os.chdir(os.path.join(os.path.dirname(__file__), "..", ".."))
    unittest.main()
