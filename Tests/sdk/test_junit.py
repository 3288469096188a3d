"""`rehearse test --junit` read by junitparser, a JUnit XML reader CI tools use.

The shipped scenarios all pass; a scenario whose expectation fails and one that cannot run are
reported as a failure (naming the key, the values and the expect line) and as an error.
"""
import os
import pathlib
import subprocess
import tempfile

from junitparser import Error, Failure, JUnitXml

ROOT = pathlib.Path(__file__).resolve().parents[2]
BINARY = os.environ.get("REHEARSE_BIN", str(ROOT / ".build" / "debug" / "rehearse"))


def run_test(*paths, cwd=ROOT):
    out = pathlib.Path(tempfile.mkdtemp()) / "junit.xml"
    run = subprocess.run([BINARY, "test", *paths, "--junit", str(out)], cwd=cwd, capture_output=True, text=True, timeout=600)
    return run, JUnitXml.fromfile(str(out))


def test_the_shipped_scenarios_pass_one_suite_per_file():
    run, xml = run_test("scripts", "plugins")
    assert run.returncode == 0, run.stdout + run.stderr
    suites = list(xml)
    names = [suite.name for suite in suites]
    assert "scripts/ten-at-twenty.lua" in names
    assert "plugins/slow-boot/example.lua" in names
    ten = next(suite for suite in suites if suite.name == "scripts/ten-at-twenty.lua")
    # seed 001's example: code, failed, pending, successful, upgrades
    assert ten.tests == 5
    assert all(case.is_passed for case in ten)
    assert xml.failures == 0 and xml.errors == 0


def test_a_failed_expectation_and_a_broken_scenario():
    folder = pathlib.Path(tempfile.mkdtemp())
    base = """
scaleset { name = "web", capacity = 10, model = { image = "v1" }, upgradePolicy = { mode = "Rolling" },
           healthExtension = { protocol = "http", port = 8000, requestPath = "/health" } }
at("PT1M", function() update_model { image = "v2" } end)
"""
    (folder / "good.lua").write_text(base + 'expect { code = "Completed", successful = 10 }\n')
    (folder / "wrong.lua").write_text(base + 'expect { code = "Faulted" }\n')
    (folder / "broken.lua").write_text(base + 'health(function() error("boom") end)\nexpect { code = "Completed" }\n')
    run, xml = run_test(str(folder))
    assert run.returncode == 2, run.stdout  # a scenario that cannot run is bad input
    suites = {pathlib.Path(suite.name).name: suite for suite in xml}
    assert suites["good.lua"].tests == 2 and suites["good.lua"].failures == 0
    wrong = list(suites["wrong.lua"])
    assert len(wrong) == 1
    failure = wrong[0].result[0]
    assert isinstance(failure, Failure)
    assert failure.message == "code is Completed, expected Faulted"
    assert "wrong.lua:5" in failure.text
    broken = list(suites["broken.lua"])
    assert isinstance(broken[0].result[0], Error)
    assert "boom" in broken[0].result[0].message
