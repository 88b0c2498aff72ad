"""What the machine holds of a real node (and whatever runs from its folder): for the tests
that check a stopped node, or a stopped dev cluster, leaves nothing behind."""

from __future__ import annotations

import subprocess
from pathlib import Path

from kto_dev.node import cleanup, configs, network

NOTHING = {"processes": [], "namespace": [], "links": [], "mounts": [], "cgroups": [],
           "runtime": []}  # fmt: skip


def node_traces(index: int, folder: Path) -> dict[str, list[str]]:
    """The processes whose command line names `folder` or the node's runtime folder, the
    node's network namespace and link, mounts under those folders, its cgroups, and its runtime
    folder itself."""
    net = network.NodeNetwork(index)
    runtime = Path("/run") / net.namespace
    processes = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                argv = (entry / "cmdline").read_bytes().decode(errors="replace")
            except OSError:
                continue
            if str(folder) in argv or str(runtime) in argv:
                processes.append(argv.replace("\0", " ")[:120])
    links = subprocess.run(["ip", "-o", "link"], capture_output=True, text=True).stdout
    return {
        "processes": processes,
        "namespace": [net.namespace] if net.exists() else [],
        "links": [net.host_interface] if net.host_interface + "@" in links else [],
        "mounts": cleanup.mounts_under([folder, runtime]),
        "cgroups": [str(p) for p in cleanup.cgroup_dirs(f"/{configs.CGROUP_PREFIX}{index}")],
        "runtime": [str(runtime)] if runtime.exists() else [],
    }
