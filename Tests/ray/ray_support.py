"""What the Ray driver's tests share: the paths, one rehearse process, the driver as a process."""
import os
import subprocess
import sys
import tempfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
DRIVER = os.path.join(ROOT, "scripts", "ray", "rehearse_ray.py")
CLUSTER = os.path.join(ROOT, "scripts", "ray", "local_cluster.py")
HOOKS = "Tests/ray/fixtures/hook-defaults.lua"
sys.path.insert(0, os.path.join(ROOT, "scripts", "ray"))


def rehearse_binary():
    """REHEARSE (what .ci/ray exports), else the debug build; None when neither is there."""
    path = os.environ.get("REHEARSE") or os.path.join(ROOT, ".build", "debug", "rehearse")
    return path if os.access(path, os.X_OK) else None


def has_ray():
    try:
        import ray  # noqa: F401
        return True
    except ImportError:
        return False


def one_process(command, args):
    """One rehearse process: (status, stdout, stderr)."""
    done = subprocess.run([rehearse_binary(), command] + args, cwd=ROOT, capture_output=True)
    return done.returncode, done.stdout, done.stderr


def driver(args, env=None, background=False):
    """The driver run with this Python: (status, stdout, stderr), or the Popen when background."""
    environment = dict(os.environ, REHEARSE=rehearse_binary(), **(env or {}))
    command = [sys.executable, DRIVER] + args
    if background:
        return subprocess.Popen(command, cwd=ROOT, env=environment, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    done = subprocess.run(command, cwd=ROOT, env=environment, capture_output=True, timeout=240)
    return done.returncode, done.stdout, done.stderr


def short_folder():
    """A temp folder with a short path: Ray's socket paths under it must stay under 107 bytes."""
    return tempfile.mkdtemp(prefix="rr", dir="/tmp")


def processes_under(prefix):
    """Processes of a Ray whose RAY_TMPDIR lies under prefix (a driver's own, whatever its folder)."""
    import local_cluster
    return local_cluster.marked(prefix)
