"""What a stopped node leaves unless it is taken away: its containers' processes, containerd's
shims, mounts (pod volumes, container root filesystems, sandboxes' network namespaces), the
kubelet's cgroups, the CNI plugins' result cache and the kubelet's log links.

Each step tolerates what is already gone, so `down` can be run again after a crash midway."""

from __future__ import annotations

import contextlib
import hashlib
import os
import signal
import subprocess
from collections.abc import Iterable
from pathlib import Path

CGROUP_ROOT = Path("/sys/fs/cgroup")
# Where containerd 1.6 puts every shim's socket, whatever its own state directory.
SHIM_SOCKETS = Path("/run/containerd/s")
CNI_RESULTS = Path("/var/lib/cni/results")
# The kubelet's device-plugin socket is at a fixed path whatever its root directory.
KUBELET_DEVICE_PLUGINS = Path("/var/lib/kubelet/device-plugins")
# Folders the node's parts make outside its own, removed once empty when no node is left.
MACHINE_FOLDERS = (SHIM_SOCKETS, SHIM_SOCKETS.parent, KUBELET_DEVICE_PLUGINS,
                   KUBELET_DEVICE_PLUGINS.parent, CNI_RESULTS, CNI_RESULTS.parent)  # fmt: skip
CONTAINER_LOG_LINKS = Path("/var/log/containers")


def cgroup_dirs(cgroup: str, root: Path = CGROUP_ROOT) -> list[Path]:
    """The node's cgroup in every v1 hierarchy mounted, deepest first."""
    found: list[Path] = []
    if not root.is_dir():
        return found
    for hierarchy in root.iterdir():
        top = hierarchy / cgroup.strip("/")
        if top.is_dir():
            found += [Path(d) for d, _, _ in os.walk(top)]
    return sorted(found, key=lambda p: len(p.parts), reverse=True)


def create_cgroups(cgroup: str, root: Path = CGROUP_ROOT) -> None:
    """The node's cgroup in every v1 hierarchy (the kubelet's cgroupRoot must exist); cpuset's
    new cgroups start with no CPUs and no memory nodes, so they get their parent's."""
    for hierarchy in sorted(root.iterdir()) if root.is_dir() else []:
        if hierarchy.name == "unified" or not (hierarchy / "cgroup.procs").exists():
            continue
        folder = hierarchy / cgroup.strip("/")
        folder.mkdir(exist_ok=True)
        for name in ("cpuset.cpus", "cpuset.mems"):
            if (folder / name).exists() and not (folder / name).read_text().strip():
                (folder / name).write_text((hierarchy / name).read_text())


def kill_cgroup_processes(cgroup: str, root: Path = CGROUP_ROOT) -> None:
    for folder in cgroup_dirs(cgroup, root):
        with contextlib.suppress(OSError):
            for pid in (folder / "cgroup.procs").read_text().split():
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(int(pid), signal.SIGKILL)


def remove_cgroups(cgroup: str, root: Path = CGROUP_ROOT) -> list[Path]:
    """Removes the node's cgroups; returns those that would not go (a process still in one)."""
    left = []
    for folder in cgroup_dirs(cgroup, root):
        try:
            folder.rmdir()
        except OSError:
            left.append(folder)
    return left


def shims(containerd_socket: Path, proc: Path = Path("/proc")) -> dict[int, Path]:
    """containerd's shims for this containerd (they outlive it), by pid, with the socket each
    serves: their command line names containerd's socket, their namespace and id."""
    found = {}
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().decode().split("\0")
        except (OSError, UnicodeDecodeError):
            continue
        if argv[0].endswith("containerd-shim-runc-v2") and str(containerd_socket) in argv:
            flags = dict(zip(argv[1::2], argv[2::2], strict=False))
            found[int(entry.name)] = shim_socket(containerd_socket, flags.get("-namespace", ""),
                                                 flags.get("-id", ""))  # fmt: skip
    return found


def shim_socket(containerd_socket: Path, namespace: str, shim_id: str) -> Path:
    """As containerd 1.6 names a shim's socket: a hash of its address, namespace and id."""
    digest = hashlib.sha256(str(containerd_socket / namespace / shim_id).encode()).hexdigest()
    return SHIM_SOCKETS / digest


def kill(pids: Iterable[int]) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def _unescape(field: str) -> str:
    # mountinfo escapes space, tab, newline and backslash as octal.
    return field.encode().decode("unicode_escape")


def mounts_under(
    roots: Iterable[Path], mountinfo: Path = Path("/proc/self/mountinfo")
) -> list[str]:
    """Mount points at or below any of `roots`, deepest (and latest) first."""
    prefixes = [str(r.resolve()) for r in roots]
    points = []
    for line in mountinfo.read_text().splitlines():
        point = _unescape(line.split()[4])
        if any(point == p or point.startswith(p + "/") for p in prefixes):
            points.append(point)
    return sorted(points, key=lambda p: p.count("/"), reverse=True)


def unmount(points: Iterable[str]) -> None:
    for point in points:
        if subprocess.run(["umount", point], capture_output=True).returncode != 0:
            # Busy (a process not yet reaped holds it): detach it now, it goes when released.
            subprocess.run(["umount", "-l", point], capture_output=True)


def remove_netns_files(paths: Iterable[str]) -> None:
    """Sandboxes' network namespaces (bind mounts under /run/netns that containerd made)."""
    for path in paths:
        subprocess.run(["umount", path], capture_output=True)
        with contextlib.suppress(OSError):
            os.unlink(path)


def remove_cni_results(container_ids: Iterable[str], results: Path = CNI_RESULTS) -> None:
    """libcni's cache of each sandbox's network result: `<network>-<container id>-<ifname>`."""
    if not results.is_dir():
        return
    ids = set(container_ids)
    for entry in results.iterdir():
        if any(f"-{cid}-" in entry.name for cid in ids):
            with contextlib.suppress(OSError):
                entry.unlink()


def remove_log_links(pod_logs: Path, links: Path = CONTAINER_LOG_LINKS) -> None:
    """The kubelet's links in /var/log/containers that point into this node's pod logs."""
    if not links.is_dir():
        return
    target = str(pod_logs.resolve())
    for entry in links.iterdir():
        with contextlib.suppress(OSError):
            if entry.is_symlink() and os.readlink(entry).startswith(target + "/"):
                entry.unlink()


def remove_machine_leftovers(folders: Iterable[Path] = MACHINE_FOLDERS) -> None:
    """Once no node is left: the kubelets' shared device-plugin socket, then each folder the
    nodes made outside their own, if nothing else is in it (one that was there before and holds
    something of another's stays)."""
    (KUBELET_DEVICE_PLUGINS / "kubelet.sock").unlink(missing_ok=True)
    for folder in folders:
        with contextlib.suppress(OSError):
            folder.rmdir()
