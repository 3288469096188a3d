#!/usr/bin/env python3
"""A Ray cluster of its own on 127.0.0.1, and stopping exactly that cluster.

    python scripts/ray/local_cluster.py start ROOT [--nodes N]   # blocks; ROOT/address once up (2 nodes)
    python scripts/ray/local_cluster.py stop ROOT                # that cluster only
    python scripts/ray/local_cluster.py listening ROOT           # its listening sockets, one a line

Everything the cluster keeps lives under ROOT: ROOT/home is its HOME (no ~/.ray of the user's
is read or written), ROOT/tmp its RAY_TMPDIR (sessions, sockets, logs), ROOT/token a fresh
token (token authentication: RAY_AUTH_MODE=token, RAY_AUTH_TOKEN_PATH=ROOT/token).

Loopback only: Ray 2.60 turns a node address of 127.0.0.1 into the machine's address
(services.resolve_ip_for_localhost) and its gRPC servers then listen on every interface; with
RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0 (the macOS default) 127.0.0.1 stays, and Ray's servers
listen on 127.0.0.1 only. `ray start` refuses a second node in that mode, so the nodes are
started as ray.cluster_utils.Cluster starts them: a head, then each further node joining its
GCS, every process a child of this one (Ray's reaper ends them if this process dies).

`stop` ends the processes whose environment holds RAY_TMPDIR=ROOT/tmp or that hold a file under
ROOT/tmp open: every Ray process of this cluster and of no other (`ray stop` ends every Ray
process of the machine).
"""

import os
import signal
import sys
import time

LOOPBACK_ENV = {"RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0"}
# Loopback addresses as /proc/net/tcp and tcp6 write them (little-endian words).
LOOPBACK_HEX = {"0100007F", "0000000000000000FFFF00000100007F", "00000000000000000000000001000000"}


def own_environment(root):
    """The variables that give a cluster under root its own HOME, temp dir and token."""
    return {"HOME": os.path.join(root, "home"), "RAY_TMPDIR": os.path.join(root, "tmp"), "RAY_AUTH_MODE": "token",
            "RAY_AUTH_TOKEN_PATH": os.path.join(root, "token"), "RAY_USAGE_STATS_ENABLED": "0", **LOOPBACK_ENV}


def start(root, nodes):
    """Makes ROOT's home, temp dir and token, then becomes the keeper with ROOT's environment
    (exec: /proc/PID/environ then names RAY_TMPDIR, so `stop` finds the keeper too)."""
    import secrets
    os.makedirs(os.path.join(root, "home"), mode=0o700, exist_ok=True)
    os.makedirs(os.path.join(root, "tmp"), mode=0o700, exist_ok=True)
    with open(os.open(os.path.join(root, "token"), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w") as f:
        f.write(secrets.token_hex(32))
    os.environ.pop("RAY_AUTH_TOKEN", None)
    os.environ.update(own_environment(root))
    os.execv(sys.executable, [sys.executable, os.path.abspath(__file__), "keep", root, "--nodes", str(nodes)])


def keep(root, nodes):
    """Starts the cluster, writes ROOT/address, and keeps it until SIGTERM, SIGINT or SIGHUP."""
    import ray  # noqa: F401  (read after the environment: Ray reads it at import)
    from ray.cluster_utils import Cluster
    node = {"node_ip_address": "127.0.0.1", "num_cpus": 1, "object_store_memory": 100_000_000}
    cluster = Cluster(initialize_head=True, head_node_args={**node, "include_dashboard": False})
    for _ in range(nodes - 1):
        cluster.add_node(**node)
    stopping = []
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, lambda *_: stopping.append(True))
    with open(os.path.join(root, "address.partial"), "w") as f:
        f.write(cluster.address + "\n")
    os.replace(os.path.join(root, "address.partial"), os.path.join(root, "address"))
    while not stopping:
        time.sleep(0.2)
    cluster.shutdown()


def processes(root):
    """The ids of this cluster's processes (marked by ROOT/tmp), sorted."""
    return marked(os.path.join(root, "tmp"))


def marked(folder):
    """The ids of the processes whose RAY_TMPDIR is folder or lies in it, or that hold a file in
    it open (a Ray process that renamed itself, as ray::DashboardAgent does, may have written its
    title over its environment), sorted; this process left out."""
    inside = folder.rstrip(os.sep) + os.sep
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            with open(f"/proc/{entry}/environ", "rb") as f:
                values = [v[11:].decode(errors="replace") + os.sep for v in f.read().split(b"\0") if v.startswith(b"RAY_TMPDIR=")]
        except OSError:  # ended meanwhile, or another user's
            continue
        if any(v.startswith(inside) for v in values) or any(p.startswith(inside) for p in open_files(int(entry))):
            found.append(int(entry))
    return sorted(found)


def open_files(pid):
    """What the process's file descriptors point at (paths, socket:[inode], pipe:[…])."""
    targets = []
    try:
        fds = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return targets
    for fd in fds:
        try:
            targets.append(os.readlink(f"/proc/{pid}/fd/{fd}"))
        except OSError:
            continue
    return targets


def stop(root, grace=10.0):
    """Ends this cluster's processes: SIGTERM (again to any found later), then SIGKILL for those
    left after grace seconds; done once none is found. The ids still running: none, or a failure."""
    for sig, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, 3.0)):
        deadline = time.monotonic() + wait
        while (left := processes(root)) and time.monotonic() < deadline:
            for pid in left:
                try:
                    os.kill(pid, sig)
                except ProcessLookupError:
                    pass
            time.sleep(0.2)
        if not left:
            return []
    return processes(root)


def listening(pids):
    """The TCP sockets the processes pids listen on: (address in hex, port, pid, name), sorted."""
    inodes = {}
    for pid in pids:
        try:
            with open(f"/proc/{pid}/comm") as f:
                name = f.read().strip()
        except OSError:
            continue
        for target in open_files(pid):
            if target.startswith("socket:["):
                inodes[target[8:-1]] = (pid, name)
    found = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(table) as f:
                lines = f.read().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            address, port = fields[1].split(":")
            if fields[3] == "0A" and fields[9] in inodes:  # 0A: LISTEN
                found.append((address, int(port, 16)) + inodes[fields[9]])
    return sorted(found)


def exposed(pids):
    """The listening sockets of pids that are not on a loopback address."""
    return [s for s in listening(pids) if s[0] not in LOOPBACK_HEX]


def main(argv):
    if len(argv) < 2 or argv[0] not in ("start", "keep", "stop", "listening"):
        print("usage: local_cluster.py start ROOT [--nodes N] | stop ROOT | listening ROOT", file=sys.stderr)
        return 2
    root = os.path.abspath(argv[1])
    if argv[0] in ("start", "keep"):
        nodes = int(argv[3]) if argv[2:3] == ["--nodes"] and len(argv) > 3 else 2
        (start if argv[0] == "start" else keep)(root, nodes)
        return 0
    if argv[0] == "stop":
        left = stop(root)
        if left:
            print(f"local_cluster.py: processes {left} of {root} still run", file=sys.stderr)
        return 1 if left else 0
    for address, port, pid, name in listening(processes(root)):
        print(f"{address}:{port} {pid} {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
