"""Lifecycle hook events of a served rollout (SPEC §6b), answered by Azure's own clients: the real
`az vmss lifecycle-hook-event list/approve/reject/update` (azure-cli 2.91 has them) and the Python
SDK's `virtual_machine_scale_set_life_cycle_hook_events` (azure-mgmt-compute 39.0.0 has them).
Each answer is checked in the command's JSON and in the served run's events once it has stopped.

Serve runs in --step mode: an SDK LIST while no event is Active is a poll (the run moves to its next
event), so `next_active` brings the run to the next batch's event."""
import json
import shutil
from datetime import datetime, timedelta

import pytest
from azure.core.exceptions import HttpResponseError
from azure.mgmt.compute.models import (
    ApiEntityReference,
    VMScaleSetLifecycleHookEventProperties,
    VMScaleSetLifecycleHookEventTargetResource,
    VMScaleSetLifecycleHookEventUpdate,
)

from test_serve import GROUP, compute_client, serve
from test_serve_az import az, logged_in

AZ = shutil.which("az")
NAME = "batchjobs"
HOOKS = "hooks.lua"


def next_active(client, tries=2000):
    """The Active event, LISTing (each LIST a step of the run) until there is one; None when the run ends."""
    for _ in range(tries):
        active = [e for e in client.virtual_machine_scale_set_life_cycle_hook_events.list(GROUP, NAME) if e.properties.state == "Active"]
        if active:
            assert len(active) == 1
            return active[0]
        try:
            code = client.virtual_machine_scale_set_rolling_upgrades.get_latest(GROUP, NAME).running_status.code
        except HttpResponseError:
            code = None  # no upgrade yet
        if code == "Completed":
            return None
    return None


def instance(target_id):
    return int(target_id.rsplit("/", 1)[-1])


def props(event_json):
    """An event's properties as az prints them (nested under properties, as the REST body has them)."""
    return event_json["properties"]


def states(event_json):
    return {instance(t["resource"]["id"]): t["actionState"] for t in props(event_json)["targetResources"]}


def served_events(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


def instant(text):
    """An ISO 8601 instant as Azure prints it (seven fractional digits; Python keeps six)."""
    return datetime.fromisoformat(text)


def iso(moment):
    return moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


@pytest.mark.skipif(AZ is None, reason="azure-cli is not installed in this environment")
def test_az_lists_approves_rejects_and_moves_wait_until(tmp_path):
    with serve(tmp_path, HOOKS, "--step") as (url, ca, events):
        env = logged_in(tmp_path, url, ca)
        client = compute_client(url, ca)
        hook = ["vmss", "lifecycle-hook-event"]
        where = ["-g", GROUP, "--vmss-name", NAME]

        # Batch 1: list shows it Active with both targets Waiting; approve (no ids) decides every target.
        first = next_active(client)
        listed = json.loads(az(env, *hook, "list", *where).stdout)
        shown = {e["name"]: e for e in listed}[first.name]
        assert props(shown)["state"] == "Active" and props(shown)["type"] == "UpgradeAutoOSRollingBatchStarting"
        assert set(states(shown).values()) == {"Waiting"} and len(states(shown)) == 2
        approved = json.loads(az(env, *hook, "approve", *where, "-n", first.name).stdout)
        assert props(approved)["state"] == "Completed"
        assert set(states(approved).values()) == {"Approved"}

        # Batch 2: reject one instance by id; the other stays Waiting until approved.
        second = next_active(client)
        ids = sorted(instance(t.resource.id) for t in second.properties.target_resources)
        rejected = json.loads(az(env, *hook, "reject", *where, "-n", second.name, "--instance-ids", str(ids[1])).stdout)
        assert states(rejected) == {ids[0]: "Waiting", ids[1]: "Rejected"}
        assert props(rejected)["state"] == "Active"
        done = json.loads(az(env, *hook, "approve", *where, "-n", second.name, "--instance-ids", str(ids[0])).stdout)
        assert states(done) == {ids[0]: "Approved", ids[1]: "Rejected"} and props(done)["state"] == "Completed"

        # Batch 3: update --wait-until moves the deadline 45 minutes after the event was raised.
        third = next_active(client)
        created = instant(third.properties.time_created)
        until = iso(created + timedelta(minutes=45))
        moved = json.loads(az(env, *hook, "update", *where, "-n", third.name, "--wait-until", until).stdout)
        assert instant(props(moved)["waitUntil"]) == created + timedelta(minutes=45)
        assert props(moved)["state"] == "Active"
        # Past maxWaitUntil (4 hours after creation): refused, the event unchanged.
        late = iso(created + timedelta(hours=4, seconds=1))
        refused = az(env, *hook, "update", *where, "-n", third.name, "--wait-until", late, ok=False)
        assert refused.returncode != 0 and "InvalidParameter" in refused.stderr
        missing = az(env, *hook, "show", *where, "-n", "00000000-0000-4000-8000-000000000099", ok=False)
        assert missing.returncode != 0 and "ResourceNotFound" in missing.stderr

    lines = served_events(events)
    answered = [e for e in lines if e["kind"] == "hookAnswered"]
    assert [e["event"] for e in answered] == [first.name, second.name, second.name, third.name]
    assert [[(d["instance"], d["actionState"]) for d in e["decided"]] for e in answered] == [
        [(i, "Approved") for i in sorted(instance(t.resource.id) for t in first.properties.target_resources)],
        [(ids[1], "Rejected")], [(ids[0], "Approved")], []]
    raised = {e["event"]: e for e in lines if e["kind"] == "hookRaised"}
    # waitUntil in seconds on the run's clock: raised with PT30M, moved to 45 minutes.
    assert answered[3]["waitUntil"] == raised[third.name]["waitUntil"] + 900
    completed = {e["event"]: e for e in lines if e["kind"] == "hookCompleted"}
    assert completed[second.name]["rejectedInstances"] == [ids[1]]
    # Nobody answered batch 3: both targets got the default (Approve) at the moved waitUntil.
    assert completed[third.name]["defaulted"] == 2
    assert completed[third.name]["waitedSeconds"] == 2700


def test_sdk_answers_every_batch_and_rejects_instance_3(tmp_path):
    with serve(tmp_path, HOOKS, "--step") as (url, ca, events):
        client = compute_client(url, ca)
        operations = client.virtual_machine_scale_set_life_cycle_hook_events
        answered = []
        while (event := next_active(client)) is not None:
            shown = operations.get(GROUP, NAME, event.name)
            assert shown.properties.state == "Active" and shown.properties.default_action == "Approve"
            targets = [VMScaleSetLifecycleHookEventTargetResource(
                resource=ApiEntityReference(id=t.resource.id),
                action_state="Rejected" if instance(t.resource.id) == 3 else "Approved") for t in shown.properties.target_resources]
            updated = operations.update(GROUP, NAME, event.name, VMScaleSetLifecycleHookEventUpdate(
                properties=VMScaleSetLifecycleHookEventProperties(target_resources=targets)))
            assert updated.properties.state == "Completed"
            answered.append(event.name)
        assert len(answered) == 5
        vms = {int(vm.instance_id): vm.latest_model_applied for vm in client.virtual_machine_scale_set_vms.list(GROUP, NAME)}
        assert [i for i, latest in sorted(vms.items()) if not latest] == [3]
    lines = served_events(events)
    rejected = [i for e in lines if e["kind"] == "hookCompleted" for i in e["rejectedInstances"]]
    assert rejected == [3]
    assert sum(e["defaulted"] for e in lines if e["kind"] == "hookCompleted") == 0


@pytest.mark.skipif(AZ is None, reason="azure-cli is not installed in this environment")
def test_az_lifecycle_hook_update_changes_the_next_event(tmp_path):
    """`az vmss lifecycle-hook update` PUTs the scale set with its lifecycleHooksProfile: the served
    run's set_lifecycle_hooks; the first batch's event, raised after it, waits 40 minutes."""
    with serve(tmp_path, HOOKS, "--step") as (url, ca, events):
        env = logged_in(tmp_path, url, ca)
        client = compute_client(url, ca)
        where = ["-g", GROUP, "--vmss-name", NAME]
        listed = json.loads(az(env, "vmss", "lifecycle-hook", "list", *where).stdout)
        assert [(h["type"], h["waitDuration"], h["defaultAction"]) for h in listed] == [("UpgradeAutoOSRollingBatchStarting", "PT30M", "Approve")]
        az(env, "vmss", "lifecycle-hook", "update", *where, "--type", "UpgradeAutoOSRollingBatchStarting", "--wait-duration", "PT40M")
        listed = json.loads(az(env, "vmss", "lifecycle-hook", "list", *where).stdout)
        assert [h["waitDuration"] for h in listed] == ["PT40M"]
        event = next_active(client)
        assert instant(event.properties.wait_until) - instant(event.properties.time_created) == timedelta(minutes=40)
    raised = [e for e in served_events(events) if e["kind"] == "hookRaised"]
    assert raised[0]["waitUntil"] - raised[0]["maxWaitUntil"] == 2400 - 14400
