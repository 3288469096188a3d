"""The Ray driver's gate rounds: whole looks, in order, covering the seeds once."""
import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "scripts", "ray"))
import rehearse_ray  # noqa: E402


def rounds(first, last, tasks, schedule):
    return list(rehearse_ray.gate_rounds(first, last, tasks, schedule))


class GateRounds(unittest.TestCase):
    def assert_covers(self, got, first, last):
        """Each round starts where the last ended and every round but the last ends on a look."""
        self.assertEqual(got[0][0], first)
        self.assertEqual(got[-1][1], last)
        for (a, b, _), (c, _, _) in zip(got, got[1:]):
            self.assertEqual(c, b + 1)
            self.assertEqual((b - first + 1) % rehearse_ray.LOOK_EVERY, 0)

    def test_doubling_on_16_tasks_sends_1_2_4_8_16_looks_then_16(self):
        got = rounds(0, 43_799, 16, "doubling")
        sizes = [b - a + 1 for a, b, _ in got]
        self.assertEqual(sizes[:6], [100, 200, 400, 800, 1600, 1600])
        # 3,100 seeds in the first five rounds, then 1,600 a round: 31 rounds for 43,800 seeds.
        self.assertEqual(len(got), 31)
        self.assertEqual(sum(sizes), 43_800)
        self.assertTrue(all(shards == 16 for _, _, shards in got))
        self.assert_covers(got, 0, 43_799)

    def test_split_is_one_look_a_round_and_blocks_one_look_per_task(self):
        self.assertEqual(rounds(0, 399, 16, "split"), [(0, 99, 16), (100, 199, 16), (200, 299, 16), (300, 399, 16)])
        self.assertEqual(rounds(0, 43_799, 16, "blocks")[0], (0, 1599, 16))
        self.assertEqual(len(rounds(0, 43_799, 16, "blocks")), 28)

    def test_a_short_range_has_no_more_shards_than_seeds(self):
        self.assertEqual(rounds(5, 7, 16, "doubling"), [(5, 7, 3)])
        got = rounds(1000, 1149, 2, "doubling")
        self.assertEqual(got, [(1000, 1099, 2), (1100, 1149, 2)])
        self.assert_covers(got, 1000, 1149)

    def test_tasks_must_be_a_count(self):
        for text in ["-1", "x", "100001"]:
            with self.assertRaises(Exception):
                rehearse_ray.tasks_count(text)
        self.assertEqual(rehearse_ray.tasks_count("0"), 0)


if __name__ == "__main__":
    unittest.main()
