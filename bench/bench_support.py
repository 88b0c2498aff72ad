"""What the benchmarks share: where they keep their files, and a ZooKeeper warmed up first.

- Files go to tmpfs (/dev/shm) when there is one. On this kind of machine, creating a file in
  some directories of the root file system takes 0.2-0.3 ms and in others 10 us (measured with
  `mkdir` and empty `open(O_CREAT)` loops): the dev brokers' 36,000 partition directories would
  measure where the temporary directory happens to sit, not the code.
- ZooKeeper runs in a JVM that compiles its hot paths during the first seconds of load: the same
  workload costs its server about 4 s of CPU fresh and 1.7 s after two rounds. Production
  servers run for weeks, so both our figures and their anchors are taken on a warm server.
"""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path

from kazoo.client import KazooClient

TMPFS = Path("/dev/shm")
WARM_UP_ROUNDS = 3
WARM_UP_ZNODES = 20_000
BATCH = 100


def scratch_dir(prefix: str) -> tempfile.TemporaryDirectory[str]:
    where = TMPFS if TMPFS.is_dir() else None
    print(f"# {prefix}: files under {where or tempfile.gettempdir()}")
    return tempfile.TemporaryDirectory(prefix=prefix, dir=where)


def warm_up(connect: str) -> None:
    """Creates, reads, lists and deletes WARM_UP_ZNODES znodes WARM_UP_ROUNDS times, through
    pipelined multi-ops and asynchronous reads as our clients do."""
    client = KazooClient(hosts=connect, timeout=30)
    client.start(timeout=30)
    began = time.perf_counter()
    try:
        for round_ in range(WARM_UP_ROUNDS):
            root = f"/kto-warm-up-{round_}"
            client.ensure_path(root)
            paths = [f"{root}/{i}" for i in range(WARM_UP_ZNODES)]
            data = b'{"version":1,"partitions":{"0":[0,1,2]}}'
            _transactions(client, [("create", p, data) for p in paths])
            for result in [client.get_async(p) for p in paths]:
                result.get()
            client.get_children(root)
            _transactions(client, [("delete", p, None) for p in paths])
            client.delete(root)
    finally:
        client.stop()
        client.close()
    print(f"# ZooKeeper warmed up in {time.perf_counter() - began:.1f} s")


def _transactions(client: KazooClient, ops: list[tuple[str, str, bytes | None]]) -> None:
    pending = []
    for start in range(0, len(ops), BATCH):
        transaction = client.transaction()
        for operation, path, data in ops[start : start + BATCH]:
            if operation == "create":
                transaction.create(path, data or b"")
            else:
                transaction.delete(path)
        pending.append(transaction.commit_async())
    for result in pending:
        outcome = result.get()
        assert not any(isinstance(r, Exception) for r in outcome), outcome[:3]


def cpu_seconds(pids: list[int]) -> float:
    """User and system CPU time of processes so far (Linux /proc)."""
    ticks = os.sysconf("SC_CLK_TCK")
    total = 0.0
    for pid in pids:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        total += (int(fields[11]) + int(fields[12])) / ticks
    return total


def wait_idle(pid: int, share: float = 0.02, window: float = 0.5, timeout: float = 120.0) -> float:
    """Seconds until the process uses under `share` of a core over `window` seconds: the work an
    earlier step left it (a controller's requests after its failover) is not measured with the
    next."""
    began = time.monotonic()
    while time.monotonic() - began < timeout:
        before = cpu_seconds([pid])
        time.sleep(window)
        if cpu_seconds([pid]) - before < share * window:
            return time.monotonic() - began
    raise RuntimeError(f"process {pid} was still busy after {timeout:.0f} s")
