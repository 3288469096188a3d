"""`rehearse run --json --shape rest` read by Azure's own Python SDK (azure-mgmt-compute).

Every status code rehearse prints is deserialized into `RollingUpgradeStatusInfo`: each key must
be a field the SDK knows (nothing ignored), each typed read must give rehearse's value, and the
model serialized back must be the same document (nothing lost).
"""
import datetime
import json
import os
import pathlib
import subprocess

import pytest
from azure.mgmt.compute.models import (
    RollingUpgradeStatusCode,
    RollingUpgradeStatusInfo,
    UpgradeOperationHistoricalStatusInfo,
    UpgradeOperationInvoker,
    UpgradeState,
)

ROOT = pathlib.Path(__file__).resolve().parents[2]
BINARY = os.environ.get("REHEARSE_BIN", str(ROOT / ".build" / "debug" / "rehearse"))


def rest_status(script, *options):
    run = subprocess.run([BINARY, "run", "--json", "--shape", "rest", *options, script],
                         cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert run.returncode in (0, 1), run.stderr
    return json.loads(run.stdout)


def timestamp(text):
    # Azure prints seven fractional digits; Python's parser takes six.
    head, _, rest = text.partition(".")
    digits, offset = rest[:7], rest[7:]
    return datetime.datetime.fromisoformat(f"{head}.{digits[:6]}{offset}")


def check(model, doc, path):
    fields = {field._rest_name: attribute for attribute, field in type(model)._attr_to_rest_field.items()}
    for key, value in doc.items():
        assert key in fields, f"{path}.{key} is not a field of the SDK's {type(model).__name__}"
        typed = getattr(model, fields[key])
        where = f"{path}.{key}"
        if isinstance(value, dict):
            check(typed, value, where)
        elif isinstance(value, list):
            assert len(typed) == len(value), where
            for i, (item, raw) in enumerate(zip(typed, value)):
                if isinstance(raw, dict):
                    check(item, raw, f"{where}[{i}]")
                else:
                    assert item == raw, f"{where}[{i}]"
        elif isinstance(typed, datetime.datetime):
            assert typed == timestamp(value), where
        else:
            assert typed == value, f"{where}: the SDK read {typed!r}, rehearse printed {value!r}"


CASES = {
    "Completed": ("scripts/ten-at-twenty.lua",),
    "Faulted before the first batch": ("scripts/pre-batch-breach.lua",),
    "Faulted after a batch": ("scripts/post-batch-rollback.lua",),
    "RollingBack": ("--time-limit", "PT10M", "scripts/post-batch-rollback.lua"),
    "Cancelled": ("scripts/cancel-health-wait.lua",),
}
EXPECTED = {
    "Completed": RollingUpgradeStatusCode.COMPLETED,
    "Faulted before the first batch": RollingUpgradeStatusCode.FAULTED,
    "Faulted after a batch": RollingUpgradeStatusCode.FAULTED,
    "RollingBack": RollingUpgradeStatusCode.ROLLING_BACK,
    "Cancelled": RollingUpgradeStatusCode.CANCELLED,
}


@pytest.mark.parametrize("case", list(CASES))
def test_sdk_reads_the_rest_shape_with_nothing_lost(case):
    *options, script = CASES[case]
    doc = rest_status(script, *options)
    model = RollingUpgradeStatusInfo(doc)
    check(model, doc, "status")
    assert model.properties.running_status.code == EXPECTED[case]
    assert model.type == "Microsoft.Compute/virtualMachineScaleSets/rollingUpgrades"
    assert model.as_dict() == doc


def test_errors_keep_their_details():
    doc = rest_status("scripts/pre-batch-breach.lua")
    error = RollingUpgradeStatusInfo(doc).properties.error
    assert error.code == "MaxUnhealthyInstancePercentExceededBeforeRollingUpgrade"
    assert [d.target for d in error.details] == ["web/virtualMachines/2", "web/virtualMachines/5", "web/virtualMachines/8"]
    assert RollingUpgradeStatusInfo(doc).properties.progress.pending_instance_count == 10


def os_upgrade_history(script):
    run = subprocess.run([BINARY, "run", "--json", "--os-upgrade-history", script],
                         cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert run.returncode in (0, 1), run.stderr
    return json.loads(run.stdout)


def test_sdk_reads_the_os_upgrade_history_with_nothing_lost():
    history = os_upgrade_history("scripts/automatic-os-upgrade.lua")
    assert len(history) == 1
    doc = history[0]
    entry = UpgradeOperationHistoricalStatusInfo(doc)
    check(entry, doc, "history[0]")
    assert entry.as_dict() == doc
    properties = entry.properties
    assert properties.running_status.code == UpgradeState.COMPLETED
    assert properties.started_by == UpgradeOperationInvoker.PLATFORM
    assert properties.target_image_reference.version == "2024.02.01"
    assert properties.target_image_reference.publisher == "Canonical"
    assert properties.rollback_info.successfully_rolledback_instance_count == 2
    assert properties.rollback_info.failed_rolledback_instance_count == 0
    assert properties.progress.successful_instance_count == 8
    assert properties.progress.failed_instance_count == 2
    # Six batches: five of 2 minutes, and the one whose instances 4 and 5 fail takes 2 minutes of
    # upgrade, their 5 minutes to become Healthy and 2 minutes of restore. The restored instances
    # still boot when the next batch is checked, so it shrinks to one instance: 5 × 2 + 9 = 19.
    assert properties.running_status.end_time - properties.running_status.start_time == datetime.timedelta(minutes=19)
