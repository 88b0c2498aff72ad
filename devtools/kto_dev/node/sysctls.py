"""The machine-wide settings a kubelet changes when it starts (Kubernetes'
`setupKernelTunables`), saved by the first node up and put back by the last node down, so a
machine that ran nodes ends as it began. Call both under `network.machine_lock`."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

# What the kubelet sets: vm.overcommit_memory=1, vm.panic_on_oom=0, kernel.panic=10,
# kernel.panic_on_oops=1 and the root key quotas.
KUBELET_TUNABLES = (
    "vm/overcommit_memory",
    "vm/panic_on_oom",
    "kernel/panic",
    "kernel/panic_on_oops",
    "kernel/keys/root_maxkeys",
    "kernel/keys/root_maxbytes",
)
PROC_SYS = Path("/proc/sys")
SAVED = Path("/run/kto-node-sysctls.json")


def save(saved: Path = SAVED, proc_sys: Path = PROC_SYS) -> None:
    """Records the values before any node's kubelet changed them (once: a second node finds
    the record and leaves it)."""
    if saved.exists():
        return
    values = {name: (proc_sys / name).read_text().strip() for name in KUBELET_TUNABLES}
    saved.write_text(json.dumps(values) + "\n")


def restore(saved: Path = SAVED, proc_sys: Path = PROC_SYS) -> None:
    """Puts the recorded values back and forgets them; nothing recorded: nothing to do."""
    if not saved.exists():
        return
    for name, value in json.loads(saved.read_text()).items():
        if name in KUBELET_TUNABLES:  # never write a path a damaged record names
            with contextlib.suppress(OSError):
                (proc_sys / name).write_text(value + "\n")
    saved.unlink()
