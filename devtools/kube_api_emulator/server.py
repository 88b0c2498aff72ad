"""Running the emulator: in a background thread with its own event loop (`ApiServer`, for tests
and embedding), or in the foreground of its own process (`serve`, for the entry point); loopback
only, plain HTTP. Optional JSON state file: loaded on start, saved on shutdown.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import signal
import tempfile
import threading
from pathlib import Path
from types import TracebackType
from typing import Any

from aiohttp import web

from .cluster import Cluster
from .routes import build_app
from .watch import DEFAULT_RING_CAPACITY

log = logging.getLogger(__name__)

LOOPBACK = "127.0.0.1"
STATE_FORMAT = 1


def save_state(cluster: Cluster, path: Path) -> None:
    """Write every object (and the resourceVersion) atomically to a JSON file."""
    data = {
        "format": STATE_FORMAT,
        "resourceVersion": cluster.store.rv,
        "objects": [{"storage": s, "object": o} for s, o in cluster.store.snapshot()],
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
    with os.fdopen(fd, "w") as f:
        json.dump(data, f, separators=(",", ":"))
    os.replace(tmp, path)


def load_cluster(path: Path | None, *, ring_capacity: int = DEFAULT_RING_CAPACITY) -> Cluster:
    """A cluster restored from a state file, or a fresh one if there is none."""
    if path is None or not path.exists():
        return Cluster(ring_capacity=ring_capacity)
    data = json.loads(path.read_text())
    if data.get("format") != STATE_FORMAT:
        raise ValueError(f"{path}: unknown state file format {data.get('format')!r}")
    cluster = Cluster(ring_capacity=ring_capacity, bootstrap=False)
    cluster.restore(
        int(data["resourceVersion"]),
        [(str(item["storage"]), item["object"]) for item in data["objects"]],
    )
    return cluster


def kubeconfig(url: str, *, context: str = "kto-emulator") -> dict[str, Any]:
    """A kubeconfig for clients of the emulator (no credentials: it checks none)."""
    return {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": context, "cluster": {"server": url}}],
        "users": [{"name": context, "user": {}}],
        "contexts": [
            {
                "name": context,
                "context": {"cluster": context, "user": context, "namespace": "default"},
            }
        ],
        "current-context": context,
        "preferences": {},
    }


def write_kubeconfig(url: str, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(kubeconfig(url), indent=2))
    return path


async def _start_site(
    cluster: Cluster, port: int, bookmark_interval: float
) -> tuple[web.AppRunner, int]:
    app = build_app(cluster, bookmark_interval=bookmark_interval)
    runner = web.AppRunner(app, access_log=None, handle_signals=False, shutdown_timeout=1.0)
    await runner.setup()
    site = web.TCPSite(runner, LOOPBACK, port, reuse_address=True)
    await site.start()
    server = site._server
    sockets = getattr(server, "sockets", None) or []
    bound = int(sockets[0].getsockname()[1]) if sockets else port
    return runner, bound


class ApiServer:
    """The emulator on a background thread: `with ApiServer() as api: api.url`."""

    def __init__(
        self,
        *,
        port: int = 0,
        state_file: Path | None = None,
        ring_capacity: int = DEFAULT_RING_CAPACITY,
        bookmark_interval: float = 60.0,
    ) -> None:
        self.state_file = state_file
        self.cluster = load_cluster(state_file, ring_capacity=ring_capacity)
        self._requested_port = port
        self._bookmark_interval = bookmark_interval
        self.port = 0
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._runner: web.AppRunner | None = None
        self._ready = threading.Event()
        self._error: BaseException | None = None

    @property
    def url(self) -> str:
        return f"http://{LOOPBACK}:{self.port}"

    def start(self) -> ApiServer:
        self._thread = threading.Thread(target=self._run, name="kto-apiserver", daemon=True)
        self._thread.start()
        self._ready.wait(timeout=30)
        if self._error is not None:
            raise RuntimeError("the API emulator failed to start") from self._error
        if not self._ready.is_set():
            raise RuntimeError("the API emulator did not start within 30 s")
        return self

    def _run(self) -> None:
        loop = asyncio.new_event_loop()
        self._loop = loop
        asyncio.set_event_loop(loop)
        try:
            self._runner, self.port = loop.run_until_complete(
                _start_site(self.cluster, self._requested_port, self._bookmark_interval)
            )
        except BaseException as exc:
            self._error = exc
            self._ready.set()
            loop.close()
            return
        self._ready.set()
        try:
            loop.run_forever()
        finally:
            if self._runner is not None:
                loop.run_until_complete(self._runner.cleanup())
            loop.run_until_complete(loop.shutdown_asyncgens())
            loop.close()

    def call(self, fn: Any, *args: Any, **kwargs: Any) -> Any:
        """Run a function on the server's loop (the cluster is not thread-safe) and wait."""
        loop = self._loop
        if loop is None:
            raise RuntimeError("the API emulator is not running")

        async def run() -> Any:
            return fn(*args, **kwargs)

        return asyncio.run_coroutine_threadsafe(run(), loop).result(timeout=30)

    def stop(self) -> None:
        loop, thread = self._loop, self._thread
        if loop is None or thread is None:
            return
        if self.state_file is not None:
            self.call(save_state, self.cluster, self.state_file)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=30)
        self._loop = None
        self._thread = None

    def write_kubeconfig(self, path: Path) -> Path:
        return write_kubeconfig(self.url, path)

    def __enter__(self) -> ApiServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()


async def serve(
    port: int,
    *,
    state_file: Path | None = None,
    kubeconfig_path: Path | None = None,
    ring_capacity: int = DEFAULT_RING_CAPACITY,
    bookmark_interval: float = 60.0,
) -> None:
    """Serve in the foreground until SIGINT/SIGTERM, then save the state file if any."""
    cluster = load_cluster(state_file, ring_capacity=ring_capacity)
    runner, bound = await _start_site(cluster, port, bookmark_interval)
    url = f"http://{LOOPBACK}:{bound}"
    if kubeconfig_path is not None:
        write_kubeconfig(url, kubeconfig_path)
    print(f"kto apiserver listening on {url}", flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    try:
        await stop.wait()
    finally:
        if state_file is not None:
            save_state(cluster, state_file)
            log.info("state saved to %s", state_file)
        await runner.cleanup()
