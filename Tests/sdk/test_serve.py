"""`rehearse serve` driven by Azure's own clients: the Python SDK (azure-mgmt-compute with
azure-identity) and the `az` CLI, over HTTPS with the CA the server generated.

The pipeline functions below are what a rollout step runs in production; only the base URL,
the CA bundle and the credential's authority differ.
"""
import contextlib
import json
import os
import pathlib
import re
import shutil
import signal
import subprocess
import time

import pytest
from azure.core.exceptions import HttpResponseError
from azure.identity import ClientSecretCredential
from azure.mgmt.compute import ComputeManagementClient
from azure.mgmt.compute.models import (
    ImageReference,
    VirtualMachineScaleSetUpdate,
    VirtualMachineScaleSetUpdateStorageProfile,
    VirtualMachineScaleSetUpdateVMProfile,
)

ROOT = pathlib.Path(__file__).resolve().parents[2]
BINARY = os.environ.get("REHEARSE_BIN", str(ROOT / ".build" / "debug" / "rehearse"))
SCENARIOS = pathlib.Path(__file__).resolve().parent / "serve"
SUBSCRIPTION = "00000000-0000-4000-8000-00000000bbbb"
TENANT = "00000000-0000-4000-8000-00000000aaaa"
GROUP = "rollout-rg"


@contextlib.contextmanager
def serve(tmp_path, scenario, *options):
    ca = tmp_path / "ca.pem"
    events = tmp_path / "events.jsonl"
    certificate = [] if "--http" in options else ["--ca-cert", str(ca)]
    process = subprocess.Popen([BINARY, "serve", str(SCENARIOS / scenario), "--port", "0", *certificate,
                                "--events", str(events), *options],
                               cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = process.stdout.readline()
        match = re.search(r"(https?://127\.0\.0\.1:\d+)", line)
        assert match, f"no URL in {line!r}: {process.stderr.read() if process.poll() is not None else ''}"
        yield match.group(1), str(ca), events
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            code = process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            raise
        assert code == 0, process.stderr.read()


def compute_client(url, ca):
    credential = ClientSecretCredential(TENANT, "pipeline-client-id", "pipeline-secret", authority=url,
                                        disable_instance_discovery=True, connection_verify=ca)
    return ComputeManagementClient(credential, SUBSCRIPTION, base_url=url, connection_verify=ca)


# --- the pipeline step, as it runs against Azure ------------------------------------------------

def roll_out_image(client, name, version, deadline_seconds=120):
    """PATCH the image, wait on the LRO, poll get_latest until the rolling upgrade leaves
    RollingForward; return the scale set, the final status and the instances."""
    vmss = client.virtual_machine_scale_sets.get(GROUP, name)
    patch = VirtualMachineScaleSetUpdate(virtual_machine_profile=VirtualMachineScaleSetUpdateVMProfile(
        storage_profile=VirtualMachineScaleSetUpdateStorageProfile(image_reference=ImageReference(version=version))))
    updated = client.virtual_machine_scale_sets.begin_update(GROUP, name, patch).result()
    assert updated.virtual_machine_profile.storage_profile.image_reference.version == version
    deadline = time.monotonic() + deadline_seconds
    while True:
        status = client.virtual_machine_scale_set_rolling_upgrades.get_latest(GROUP, name)
        if status.running_status.code not in ("RollingForward",) or time.monotonic() > deadline:
            break
        time.sleep(1)
    instances = list(client.virtual_machine_scale_set_vms.list(GROUP, name, expand="instanceView"))
    return vmss, status, instances


def test_sdk_pipeline_rolls_out_an_image_to_completion(tmp_path):
    report = tmp_path / "report.html"
    with serve(tmp_path, "rolling.lua", "--speed", "600", "--report", str(report)) as (url, ca, events):
        client = compute_client(url, ca)
        vmss, status, instances = roll_out_image(client, "web", "2.0.0")
        assert vmss.sku.capacity == 6
        assert vmss.upgrade_policy.mode == "Rolling"
        assert vmss.upgrade_policy.rolling_upgrade_policy.max_batch_instance_percent == 34
        assert status.running_status.code == "Completed"
        assert status.progress.successful_instance_count == vmss.sku.capacity
        assert status.progress.failed_instance_count == 0
        assert len(instances) == vmss.sku.capacity
        for vm in instances:
            assert vm.instance_view.vm_health.status.code == "HealthState/healthy", vm.name
            assert vm.latest_model_applied is True, vm.name
        history = list(client.virtual_machine_scale_sets.get_os_upgrade_history(GROUP, "web"))
        assert history == []
    kinds = [json.loads(line)["kind"] for line in events.read_text().splitlines()]
    assert kinds.count("upgradeStarted") == 1 and "upgradeCompleted" in kinds and kinds[-1] == "runEnded"
    assert "<html" in report.read_text()


def test_sdk_pipeline_reads_faulted_with_azures_error_code(tmp_path):
    with serve(tmp_path, "faulted.lua", "--speed", "600") as (url, ca, _):
        client = compute_client(url, ca)
        _, status, instances = roll_out_image(client, "web", "2.0.0")
        assert status.running_status.code == "Faulted"
        assert status.error.code == "MaxUnhealthyUpgradedInstancePercentExceededInRollingUpgrade"
        assert status.progress.failed_instance_count >= 1
        assert any(vm.instance_view.vm_health.status.code == "HealthState/unhealthy" for vm in instances)


def test_sdk_pipeline_cancels_and_reads_cancelled(tmp_path):
    # The clock moves only when the client polls: the cancel lands while the upgrade runs.
    with serve(tmp_path, "rolling.lua", "--step") as (url, ca, _):
        client = compute_client(url, ca)
        patch = VirtualMachineScaleSetUpdate(virtual_machine_profile=VirtualMachineScaleSetUpdateVMProfile(
            storage_profile=VirtualMachineScaleSetUpdateStorageProfile(image_reference=ImageReference(version="2.0.0"))))
        client.virtual_machine_scale_sets.begin_update(GROUP, "web", patch).result()
        assert client.virtual_machine_scale_set_rolling_upgrades.get_latest(GROUP, "web").running_status.code == "RollingForward"
        client.virtual_machine_scale_set_rolling_upgrades.begin_cancel(GROUP, "web").result()
        status = client.virtual_machine_scale_set_rolling_upgrades.get_latest(GROUP, "web")
        assert status.running_status.code == "Cancelled"
        assert status.running_status.last_action == "Cancel"
        # A second cancel has nothing to cancel: 409 with Azure's code.
        with pytest.raises(HttpResponseError) as refused:
            client.virtual_machine_scale_set_rolling_upgrades.begin_cancel(GROUP, "web").result()
        assert refused.value.status_code == 409
        assert refused.value.error.code == "OperationNotAllowed"


def test_a_bad_policy_is_400_with_the_message_validate_prints(tmp_path):
    policy = tmp_path / "policy.json"
    policy.write_text(json.dumps({"mode": "Rolling", "rollingUpgradePolicy": {"maxBatchInstancePercent": 3}}))
    validate = subprocess.run([BINARY, "validate", str(policy)], capture_output=True, text=True, timeout=60)
    assert validate.returncode == 2
    printed = validate.stderr.strip().removeprefix("rehearse: error: ").removeprefix(f"{policy}: ")
    with serve(tmp_path, "rolling.lua") as (url, ca, _):
        client = compute_client(url, ca)
        with pytest.raises(HttpResponseError) as refused:
            client.virtual_machine_scale_sets.begin_update(GROUP, "web", {
                "properties": {"upgradePolicy": {"mode": "Rolling", "rollingUpgradePolicy": {"maxBatchInstancePercent": 3}}}}).result()
        assert refused.value.status_code == 400
        assert refused.value.error.code == "InvalidParameter"
        assert refused.value.error.message == printed
        # The server goes on serving.
        assert client.virtual_machine_scale_sets.get(GROUP, "web").sku.capacity == 6


def rest(url, method, path, body=None):
    import urllib.request
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url + path, data=data, method=method, headers={"Content-Type": "application/json", "Authorization": "Bearer rehearse-test"})
    with urllib.request.urlopen(request, timeout=30) as response:
        text = response.read()
        return json.loads(text) if text else None


def test_served_events_equal_run_of_a_timeline_with_the_same_actions(tmp_path):
    """A client's PATCH at 61.5 s and cancel at 180.5 s (virtual) give, byte for byte, the events
    `rehearse run` writes for the scenario with those two actions on its `at` timeline."""
    scaleset = "/subscriptions/s/resourceGroups/g/providers/Microsoft.Compute/virtualMachineScaleSets/web"
    served = tmp_path / "served"
    served.mkdir()
    with serve(served, "rolling.lua", "--step", "--http") as (url, _, events):
        assert rest(url, "POST", "/rehearse/clock", {"to": "PT61.5S"})["now"] == 61_500
        rest(url, "PATCH", scaleset + "?api-version=2024-07-01",
             {"properties": {"virtualMachineProfile": {"storageProfile": {"imageReference": {"version": "2.0.0"}}}}})
        assert rest(url, "POST", "/rehearse/clock", {"to": "PT180.5S"})["rollingUpgrade"] == "RollingForward"
        rest(url, "POST", scaleset + "/rollingUpgrades/cancel?api-version=2024-07-01")
    timeline = tmp_path / "timeline.lua"
    timeline.write_text((SCENARIOS / "rolling.lua").read_text()
                        + 'at("PT61.5S", function() update_model { imageReference = { version = "2.0.0" } } end)\n'
                        + 'at("PT180.5S", function() cancel() end)\n')
    scripted = tmp_path / "scripted.jsonl"
    run = subprocess.run([BINARY, "run", str(timeline), "--seed", "0", "--events", str(scripted)],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    kinds = [json.loads(line)["kind"] for line in scripted.read_text().splitlines()]
    assert "upgradeCancelled" in kinds
    assert events.read_text() == scripted.read_text()
