"""The Ray a driver run uses: joined or started here, with a HOME, a RAY_TMPDIR and a token of
the run's own, on 127.0.0.1 when local; and the driver's two ways to end: a refusal (rehearse's
message, exit 2) and a failure of the driver or of Ray (one line, exit 2).
"""
import contextlib
import os
import shutil
import socket
import sys
import tempfile

LOOPBACK_HOSTS = {"127.0.0.1", "localhost"}
JOIN_TRIES = 3  # a join tries Ray's GCS this many times, about 40 s each (Ray's default: 20)


class Refused(Exception):
    """rehearse refused the input (exit 2): its message, as one process prints it."""

    def __init__(self, stderr):
        super().__init__("refused")
        self.stderr = stderr


class DriverFailure(Exception):
    """The driver or Ray failed (not the input): one line, exit 2."""


def first_line(text):
    lines = [line.strip() for line in str(text).splitlines() if line.strip()]
    return lines[0] if lines else "(no message)"


def reachable(address):
    """A TCP connection to the cluster's GCS, HOST:PORT, within 10 s: else a DriverFailure."""
    host, _, port = address.rpartition(":")
    try:
        if "://" in address or not host:
            raise ValueError(address)
        with socket.create_connection((host.strip("[]"), int(port)), timeout=10):
            pass
    except ValueError:
        raise DriverFailure(f"--address {address}: allowed HOST:PORT of the cluster's GCS, such as 127.0.0.1:6379") from None
    except OSError as error:
        raise DriverFailure(f"the Ray cluster at {address}: cannot connect ({error.strerror or error})") from None


def loopback(address):
    """Whether a cluster address (HOST:PORT) is on this machine's loopback."""
    return address is not None and address.rsplit(":", 1)[0].strip("[]") in LOOPBACK_HOSTS


@contextlib.contextmanager
def own_ray(address, folder):
    """Ray, joined to address or started here for the run, with a HOME and RAY_TMPDIR under folder.

    Ray's own output (its log lines, a C++ warning, a failed task's report) goes to folder/ray.log,
    not to standard output or error, while the cluster is in use; a failure names that log. A
    local cluster, or a join to one on 127.0.0.1, keeps the address 127.0.0.1
    (RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0, else Ray 2.60 resolves it to the machine's address and
    its servers listen on every interface). A local cluster gets a fresh token in the run's HOME
    (RAY_AUTH_MODE=token, whatever RAY_AUTH_TOKEN and RAY_AUTH_TOKEN_PATH say).
    """
    home, log = os.path.join(folder, "home"), os.path.join(folder, "ray.log")
    os.makedirs(home, mode=0o700)
    os.environ.update({"HOME": home, "RAY_TMPDIR": folder, "RAY_USAGE_STATS_ENABLED": "0"})
    if address is None or loopback(address):
        os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"
    if address is not None:
        reachable(address)
        os.environ.setdefault("RAY_gcs_server_port_wait_time_s", str(JOIN_TRIES))
    if address is None:
        for name in ("RAY_AUTH_TOKEN", "RAY_AUTH_TOKEN_PATH"):
            os.environ.pop(name, None)
        os.environ["RAY_AUTH_MODE"] = "token"
    sys.stdout.flush()
    sys.stderr.flush()
    saved = {fd: os.dup(fd) for fd in (1, 2)}
    with open(log, "ab") as sink:  # Ray prints on both: a failed task's "(raylet) Task … failed" on stdout
        for fd in saved:
            os.dup2(sink.fileno(), fd)
    try:
        import ray  # Ray reads RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER when it is imported
        where = f"at {address}" if address else "started here"
        try:
            local_only = {} if address else {"_node_ip_address": "127.0.0.1", "include_dashboard": False}
            ray.init(address=address, log_to_driver=False, logging_level="ERROR", **local_only)
        except Exception as error:
            raise DriverFailure(f"the Ray cluster {where}: {type(error).__name__}: {first_line(error)} (Ray's log: {kept(log)})") from None
        try:
            yield ray
        except (Refused, DriverFailure):
            raise
        except Exception as error:
            cause = getattr(error, "cause", None) or error
            raise DriverFailure(f"the run on the Ray cluster {where}: {type(cause).__name__}: {first_line(cause)} "
                                f"(Ray's log: {kept(log)})") from None
        finally:
            ray.shutdown()
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        for fd, copy in saved.items():
            os.dup2(copy, fd)
            os.close(copy)


def kept(log):
    """A copy of Ray's log outside the run's folder (which is removed), for a failure to name."""
    handle, path = tempfile.mkstemp(prefix="rehearse-ray-", suffix=".log")
    with os.fdopen(handle, "wb") as copy, open(log, "rb") as original:
        shutil.copyfileobj(original, copy)
    return path
