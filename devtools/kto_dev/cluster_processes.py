"""The dev cluster's processes: started in sessions of their own (they outlive `kto dev-cluster
up`), waited for, and stopped by pid, for cluster.py and the modules it uses."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from kto_dev.apache_kafka.broker import alive

STARTUP_TIMEOUT = 60.0


class DevClusterError(RuntimeError):
    pass


def spawn(args: Sequence[str], log: Path, env: dict[str, str] | None = None) -> int:
    return start(args, log, env).pid


def start(
    args: Sequence[str], log: Path, env: dict[str, str] | None = None
) -> subprocess.Popen[bytes]:
    """The process, in a session of its own (it outlives `kto dev-cluster up`), its output
    appended to `log`; a caller that lives on keeps the handle, so the process is reaped."""
    with log.open("ab") as out:
        return subprocess.Popen(
            list(args),
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            env=env,
            start_new_session=True,
        )


def wait_for(check: Any, what: str, log: Path) -> None:
    deadline = time.monotonic() + STARTUP_TIMEOUT
    while True:
        try:
            if check():
                return
        except OSError:
            pass
        if time.monotonic() > deadline:
            tail = log.read_text(errors="replace")[-3000:] if log.exists() else ""
            raise DevClusterError(f"{what} did not come up; its log ({log}) ends:\n{tail}")
        time.sleep(0.2)


def stop(pids: Sequence[int]) -> None:
    for pid in reversed(pids):  # the operator first, ZooKeeper last
        stop_together([pid])


def stop_together(pids: Sequence[int]) -> None:
    """SIGTERM to each, then up to 30 s for all of them to end, then SIGKILL."""
    running = [pid for pid in pids if alive(pid)]
    for pid in running:
        os.killpg(pid, signal.SIGTERM)
    deadline = time.monotonic() + 30
    while any(alive(pid) for pid in running) and time.monotonic() < deadline:
        for pid in running:
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, os.WNOHANG)  # reaps it when it is our child
        time.sleep(0.1)
    for pid in running:
        if alive(pid):
            os.killpg(pid, signal.SIGKILL)


# What `up` keeps in its directory: removed by `down --reset` (and nothing else there).
