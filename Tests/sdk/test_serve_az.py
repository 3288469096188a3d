"""The real `az` CLI against `rehearse serve`: `az cloud register` reads the server's
/metadata/endpoints, `az login --service-principal` gets a token from its fake Entra authority,
and the vmss commands a rollout pipeline runs read and change the served scale set."""
import json
import os
import shutil

import pytest

from test_serve import GROUP, TENANT, serve
import subprocess

# .ci/sdk puts azure-cli's own venv on PATH (it pins an older azure-mgmt-compute than the SDK tests use).
AZ = shutil.which("az")


def az(env, *args, ok=True):
    run = subprocess.run([AZ, *args, "--only-show-errors"], env=env, capture_output=True, text=True, timeout=300)
    if ok:
        assert run.returncode == 0, f"az {' '.join(args)}: {run.stderr}"
    return run


def logged_in(tmp_path, url, ca):
    """An az configuration of its own (AZURE_CONFIG_DIR), registered with the server's cloud and logged in."""
    env = dict(os.environ, AZURE_CONFIG_DIR=str(tmp_path / "az"), REQUESTS_CA_BUNDLE=ca,
               AZURE_CORE_INSTANCE_DISCOVERY="false", AZURE_CORE_COLLECT_TELEMETRY="false",
               AZURE_CORE_SURVEY_MESSAGE="false", AZURE_CORE_NO_COLOR="true")
    # A URL ending in a slash: az asks for URL//metadata/endpoints.
    az(env, "cloud", "register", "-n", "Rehearse", "--endpoint-resource-manager", url + "/")
    az(env, "cloud", "set", "-n", "Rehearse")
    login = json.loads(az(env, "login", "--service-principal", "-u", "pipeline-client-id", "-p", "pipeline-secret",
                          "--tenant", TENANT).stdout)
    assert login[0]["tenantId"] == TENANT
    return env


@pytest.mark.skipif(AZ is None, reason="azure-cli is not installed in this environment")
def test_az_cli_registers_logs_in_and_runs_the_vmss_commands(tmp_path):
    with serve(tmp_path, "rolling.lua", "--step") as (url, ca, _):
        env = logged_in(tmp_path, url, ca)

        shown = json.loads(az(env, "vmss", "show", "-g", GROUP, "-n", "web").stdout)
        assert shown["sku"]["capacity"] == 6
        assert shown["upgradePolicy"]["mode"] == "Rolling"

        updated = json.loads(az(env, "vmss", "update", "-g", GROUP, "-n", "web", "--set",
                                "virtualMachineProfile.storageProfile.imageReference.version=2.0.0").stdout)
        assert updated["virtualMachineProfile"]["storageProfile"]["imageReference"]["version"] == "2.0.0"

        latest = json.loads(az(env, "vmss", "rolling-upgrade", "get-latest", "-g", GROUP, "-n", "web").stdout)
        assert latest["runningStatus"]["code"] == "RollingForward"

        az(env, "vmss", "rolling-upgrade", "cancel", "-g", GROUP, "-n", "web")
        latest = json.loads(az(env, "vmss", "rolling-upgrade", "get-latest", "-g", GROUP, "-n", "web").stdout)
        assert latest["runningStatus"]["code"] == "Cancelled"

        again = az(env, "vmss", "rolling-upgrade", "cancel", "-g", GROUP, "-n", "web", ok=False)
        assert again.returncode != 0 and "OperationNotAllowed" in again.stderr

        instances = json.loads(az(env, "vmss", "list-instances", "-g", GROUP, "-n", "web", "--expand", "instanceView").stdout)
        assert len(instances) == 6
        assert all(vm["instanceView"]["vmHealth"]["status"]["code"].startswith("HealthState/") for vm in instances)
        assert any(vm["latestModelApplied"] for vm in instances) and not all(vm["latestModelApplied"] for vm in instances)


@pytest.mark.skipif(AZ is None, reason="azure-cli is not installed in this environment")
def test_az_cli_instance_operations_each_seen_in_the_served_events(tmp_path):
    """list, reimage, update-instances, instance protection and delete-instances, as a pipeline
    runs them; each is checked against the served run's events once the server has stopped."""
    with serve(tmp_path, "rolling.lua", "--step") as (url, ca, events):
        env = logged_in(tmp_path, url, ca)
        listed = json.loads(az(env, "vmss", "list").stdout)
        assert [s["name"] for s in listed] == ["web"]

        az(env, "vmss", "reimage", "-g", GROUP, "-n", "web", "--instance-ids", "1")
        az(env, "vmss", "update", "-g", GROUP, "-n", "web", "--set",
           "virtualMachineProfile.storageProfile.imageReference.version=2.0.0")
        az(env, "vmss", "rolling-upgrade", "cancel", "-g", GROUP, "-n", "web")
        az(env, "vmss", "update-instances", "-g", GROUP, "-n", "web", "--instance-ids", "4")

        az(env, "vmss", "update", "-g", GROUP, "-n", "web", "--instance-id", "3", "--protect-from-scale-in", "true")
        vm = json.loads(az(env, "vmss", "show", "-g", GROUP, "-n", "web", "--instance-id", "3").stdout)
        assert vm["protectionPolicy"]["protectFromScaleIn"] is True

        az(env, "vmss", "delete-instances", "-g", GROUP, "-n", "web", "--instance-ids", "5")
        shown = json.loads(az(env, "vmss", "show", "-g", GROUP, "-n", "web").stdout)
        assert shown["sku"]["capacity"] == 5

        missing = az(env, "vmss", "show", "-g", GROUP, "-n", "web", "--instance-id", "5", ok=False)
        assert missing.returncode != 0 and "ResourceNotFound" in missing.stderr and GROUP in missing.stderr
    lines = [json.loads(line) for line in events.read_text().splitlines()]
    reimages = [e for e in lines if e["kind"] == "reimage"]
    assert [e["ids"] for e in reimages] == [[1]]
    manual = [e for e in lines if e["kind"] == "manualUpgrade"]
    assert [e["ids"] for e in manual] == [[4]]
    scaled = [e for e in lines if e["kind"] == "scaled"]
    assert [(e["from"], e["to"], e["deleted"]) for e in scaled] == [(6, 5, [5])]
