"""The real `az vmss restart`, `stop`, `deallocate` and `start` against `rehearse serve`
(issue 39): each command's action is checked against the served run's typed events once the
server has stopped, and the power state az reads back from the instance view."""
import json

import pytest

from test_serve import GROUP, serve
from test_serve_az import AZ, az, logged_in


def power_state(env, instance):
    view = json.loads(az(env, "vmss", "get-instance-view", "-g", GROUP, "-n", "web", "--instance-id", str(instance)).stdout)
    return [s["code"] for s in view["statuses"] if s["code"].startswith("PowerState/")]


@pytest.mark.skipif(AZ is None, reason="azure-cli is not installed in this environment")
def test_az_cli_power_commands_each_seen_in_the_served_events(tmp_path):
    with serve(tmp_path, "rolling.lua", "--step") as (url, ca, events):
        env = logged_in(tmp_path, url, ca)
        az(env, "vmss", "restart", "-g", GROUP, "-n", "web", "--instance-ids", "1")
        az(env, "vmss", "stop", "-g", GROUP, "-n", "web", "--instance-ids", "2")
        az(env, "vmss", "deallocate", "-g", GROUP, "-n", "web", "--instance-ids", "3", "4")
        assert power_state(env, 2) == ["PowerState/stopped"]
        assert power_state(env, 3) == ["PowerState/deallocated"]
        assert power_state(env, 1) == ["PowerState/running"]
        az(env, "vmss", "start", "-g", GROUP, "-n", "web", "--instance-ids", "3")
        az(env, "vmss", "start", "-g", GROUP, "-n", "web")
        assert power_state(env, 4) == ["PowerState/running"]
        # Without --instance-ids, az sends {"instanceIds": ["*"]}: every instance.
        az(env, "vmss", "restart", "-g", GROUP, "-n", "web")

        missing = az(env, "vmss", "restart", "-g", GROUP, "-n", "web", "--instance-ids", "9", ok=False)
        assert missing.returncode != 0 and "ResourceNotFound" in missing.stderr and GROUP in missing.stderr
    lines = [json.loads(line) for line in events.read_text().splitlines()]
    power = [(e["kind"], e["ids"], e.get("deallocate"), e.get("restarting", e.get("stopping", e.get("starting"))))
             for e in lines if e["kind"] in ("restart", "stop", "start")]
    # The start of every instance reaches the two still off (2 stopped, 4 deallocated).
    assert power == [("restart", [1], None, 1), ("stop", [2], False, 1), ("stop", [3, 4], True, 2),
                     ("start", [3], None, 1), ("start", "*", None, 2), ("restart", "*", None, 6)]
    restarted = [(e["time"], e["state"], e["reason"]) for e in lines if e["kind"] == "healthChanged" and e.get("instance") == 1]
    assert [state for _, state, _ in restarted][-2:] == ["Initializing", "Healthy"]
